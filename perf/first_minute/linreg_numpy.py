"""Linear regression, 1000 x 20, dict params, 500 steps of gradient descent: NumPy, the
gradient written by hand."""
import _clock as clock

import numpy as np

clock.imported()

rng = np.random.default_rng(0)
x = rng.standard_normal((1000, 20))
y = x @ rng.standard_normal(20) + 0.5 + 0.1 * rng.standard_normal(1000)
params = {"w": np.zeros(20), "b": np.zeros(())}


def step(params, x, y):
    r = x @ params["w"] + params["b"] - y
    value = np.mean(r ** 2) + 1e-3 * np.sum(params["w"] ** 2)
    grads = {"w": 2 / len(y) * (x.T @ r) + 2e-3 * params["w"], "b": 2 * np.mean(r)}
    return {k: params[k] - 0.01 * grads[k] for k in params}, value


clock.begin()
for i in range(500):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 100 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
