"""A 32-layer tanh MLP (width 64, batch 32, mean squared error), 2000 SGD steps: JAX (float64).

``jit(value_and_grad)`` on a list of (weight, bias) pairs, the L-layer MLP of
``perf/compile_scaling.py``, trained to a fixed random teacher's outputs.
"""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

clock.imported()

LAYERS, WIDTH, BATCH, STEPS = 32, 64, 32, 2000
rng = np.random.default_rng(0)
x_all = rng.standard_normal((4096, WIDTH))
y_all = np.tanh(x_all @ rng.standard_normal((WIDTH, WIDTH)) / 8)
batches = rng.integers(0, len(x_all), size=(STEPS, BATCH))
params = [(rng.standard_normal((WIDTH, WIDTH)) / 8, np.zeros(WIDTH)) for _ in range(LAYERS)]


def loss(params, x, y):
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.mean((h - y) ** 2)


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return [(w - 0.05 * gw, b - 0.05 * gb) for (w, b), (gw, gb) in zip(params, grads)], value


clock.begin()
for i, batch in enumerate(batches):
    params, value = step(params, x_all[batch], y_all[batch])
    value = clock.step(value)
    if i % 250 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
