"""A Gaussian-process marginal likelihood, 200 points, RBF kernel, log lengthscale, variance
and noise, 100 steps of gradient descent: NumPy, the gradient written by hand."""
import _clock as clock

import numpy as np

clock.imported()

rng = np.random.default_rng(0)
x = rng.uniform(0.0, 10.0, size=(200, 2))
y = np.sin(x[:, 0]) * np.cos(0.5 * x[:, 1]) + 0.1 * rng.standard_normal(200)
params = {"log_ls": np.zeros(()), "log_var": np.zeros(()), "log_noise": np.full((), -1.0)}


def step(params, x, y):
    ls, var, noise = (np.exp(params[k]) for k in ("log_ls", "log_var", "log_noise"))
    n = len(y)
    d2 = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    e = np.exp(-0.5 * d2 / ls ** 2)
    k = var * e + (noise + 1e-6) * np.eye(n)
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    value = (0.5 * y @ alpha + np.sum(np.log(np.diagonal(chol)))
             + 0.5 * n * np.log(2 * np.pi)) / n
    # d value / d theta = tr((K^-1 - alpha alpha^T) dK/dtheta) / (2 n)
    w = (np.linalg.inv(k) - np.outer(alpha, alpha)) / (2 * n)
    grads = {"log_ls": np.sum(w * var * e * d2 / ls ** 2), "log_var": np.sum(w * var * e),
             "log_noise": noise * np.trace(w)}
    return {k: params[k] - 0.1 * grads[k] for k in params}, value


clock.begin()
for i in range(100):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 20 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
