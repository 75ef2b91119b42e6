"""Linear regression, 1000 x 20, dict params, 500 steps of gradient descent: tf_numba."""
import _clock as clock

import numpy as np
import tf_numba as tf
import tf_numba.numpy as tnp

clock.imported()

rng = np.random.default_rng(0)
x = rng.standard_normal((1000, 20))
y = x @ rng.standard_normal(20) + 0.5 + 0.1 * rng.standard_normal(1000)
params = {"w": np.zeros(20), "b": np.zeros(())}


def loss(params, x, y):
    pred = x @ params["w"] + params["b"]
    return tnp.mean((pred - y) ** 2) + 1e-3 * tnp.sum(params["w"] ** 2)


@tf.jit
def step(params, x, y):
    value, grads = tf.value_and_grad(loss)(params, x, y)
    return {k: params[k] - 0.01 * grads[k] for k in params}, value


clock.begin()
for i in range(500):
    params, value = step(params, x, y)
    value = clock.step(value)
    if i % 100 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
