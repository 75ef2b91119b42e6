"""A Gaussian-process marginal likelihood, 200 points, RBF kernel, log lengthscale, variance
and noise, 100 steps of gradient descent: tf_numba."""
import _clock as clock

import numpy as np
import tf_numba as tf
import tf_numba.numpy as tnp

clock.imported()

rng = np.random.default_rng(0)
x = rng.uniform(0.0, 10.0, size=(200, 2))
y = np.sin(x[:, 0]) * np.cos(0.5 * x[:, 1]) + 0.1 * rng.standard_normal(200)
params = {"log_ls": np.zeros(()), "log_var": np.zeros(()), "log_noise": np.full((), -1.0)}


def nll(params, x, y):
    """The negative log marginal likelihood per point."""
    ls, var, noise = (tnp.exp(params[k]) for k in ("log_ls", "log_var", "log_noise"))
    n = y.shape[0]
    d2 = tnp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = var * tnp.exp(-0.5 * d2 / ls ** 2) + (noise + 1e-6) * tnp.eye(n)
    chol = tnp.linalg.cholesky(k)
    alpha = tnp.linalg.solve(k, y)
    return (0.5 * y @ alpha + tnp.sum(tnp.log(tnp.diagonal(chol)))
            + 0.5 * n * np.log(2 * np.pi)) / n


@tf.jit
def step(params, x, y):
    value, grads = tf.value_and_grad(nll)(params, x, y)
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


clock.begin()
for i in range(100):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 20 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
