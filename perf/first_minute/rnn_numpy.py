"""An Elman RNN, T=50, batch 32, hidden 32, 200 SGD steps: NumPy, backpropagation through
time written by hand.

A squared-error readout at every time step; 10 batches of sequences, cycled.
"""
import _clock as clock

import numpy as np

clock.imported()

rng = np.random.default_rng(0)
xs_all = rng.standard_normal((10, 50, 32, 4))        # (batch index, time, batch, features)
ys_all = np.cumsum(xs_all[..., :1], axis=1) / np.sqrt(np.arange(1, 51))[:, None, None]
params = {"wx": rng.standard_normal((4, 32)) / 2, "wh": rng.standard_normal((32, 32)) / 8,
          "b": np.zeros(32), "wo": rng.standard_normal((32, 1)) / 8, "bo": np.zeros(1)}


def step(params, xs, ys):
    wx, wh, b, wo, bo = (params[k] for k in ("wx", "wh", "b", "wo", "bo"))
    hs = np.zeros((len(xs) + 1, xs.shape[1], 32))     # hs[0] is the initial state
    for t, x_t in enumerate(xs):
        hs[t + 1] = np.tanh(x_t @ wx + hs[t] @ wh + b)
    pred = hs[1:] @ wo + bo
    value = np.mean((pred - ys) ** 2)
    dpred = 2 * (pred - ys) / pred.size
    grads = {"wo": np.einsum("tbh,tbo->ho", hs[1:], dpred), "bo": dpred.sum(axis=(0, 1)),
             "wx": np.zeros_like(wx), "wh": np.zeros_like(wh), "b": np.zeros_like(b)}
    dh = np.zeros_like(hs[0])
    for t in range(len(xs) - 1, -1, -1):
        da = (dpred[t] @ wo.T + dh) * (1 - hs[t + 1] ** 2)
        grads["wx"] += xs[t].T @ da
        grads["wh"] += hs[t].T @ da
        grads["b"] += da.sum(axis=0)
        dh = da @ wh.T
    return {k: params[k] - 0.02 * grads[k] for k in params}, value


clock.begin()
for i in range(200):
    params, value = step(params, xs_all[i % 10], ys_all[i % 10])
    value = clock.step(value)
    if i % 40 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
