"""A Gaussian-process marginal likelihood, 200 points, RBF kernel, log lengthscale, variance
and noise, 100 steps of gradient descent: JAX (float64)."""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

clock.imported()

rng = np.random.default_rng(0)
x = rng.uniform(0.0, 10.0, size=(200, 2))
y = np.sin(x[:, 0]) * np.cos(0.5 * x[:, 1]) + 0.1 * rng.standard_normal(200)
params = {"log_ls": np.zeros(()), "log_var": np.zeros(()), "log_noise": np.full((), -1.0)}


def nll(params, x, y):
    """The negative log marginal likelihood per point."""
    ls, var, noise = (jnp.exp(params[k]) for k in ("log_ls", "log_var", "log_noise"))
    n = y.shape[0]
    d2 = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = var * jnp.exp(-0.5 * d2 / ls ** 2) + (noise + 1e-6) * jnp.eye(n)
    chol = jnp.linalg.cholesky(k)
    alpha = jnp.linalg.solve(k, y)
    return (0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diagonal(chol)))
            + 0.5 * n * np.log(2 * np.pi)) / n


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(nll)(params, x, y)
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


clock.begin()
for i in range(100):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 20 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
