"""Linear regression, 1000 x 20, dict params, 500 steps of gradient descent: JAX (float64)."""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
clock.imported()

rng = np.random.default_rng(0)
x = rng.standard_normal((1000, 20))
y = x @ rng.standard_normal(20) + 0.5 + 0.1 * rng.standard_normal(1000)
params = {"w": np.zeros(20), "b": np.zeros(())}


def loss(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2) + 1e-3 * jnp.sum(params["w"] ** 2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return {k: params[k] - 0.01 * grads[k] for k in params}, value


clock.begin()
for i in range(500):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 100 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
