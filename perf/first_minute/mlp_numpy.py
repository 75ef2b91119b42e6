"""A 32-128-5 ReLU MLP, softmax cross-entropy, batch 128, 300 SGD steps: NumPy, the
gradient written by hand."""
import _clock as clock

import numpy as np

clock.imported()

rng = np.random.default_rng(0)
x_all = rng.standard_normal((4096, 32))
labels = np.argmax(x_all @ rng.standard_normal((32, 5)), axis=1)
y_all = np.eye(5)[labels]
batches = rng.integers(0, len(x_all), size=(300, 128))
params = [{"w": rng.standard_normal((m, n)) / np.sqrt(m), "b": np.zeros(n)}
          for m, n in ((32, 128), (128, 5))]


def step(params, x, y):
    hidden, last = params
    z = x @ hidden["w"] + hidden["b"]
    h = np.maximum(z, 0.0)
    logits = h @ last["w"] + last["b"]
    s = logits - np.max(logits, axis=1, keepdims=True)
    logp = s - np.log(np.sum(np.exp(s), axis=1, keepdims=True))
    value = -np.mean(np.sum(y * logp, axis=1))
    dlogits = (np.exp(logp) - y) / len(x)
    dz = (dlogits @ last["w"].T) * (z > 0)
    grads = [{"w": x.T @ dz, "b": dz.sum(axis=0)},
             {"w": h.T @ dlogits, "b": dlogits.sum(axis=0)}]
    return [{k: p[k] - 0.1 * g[k] for k in p} for p, g in zip(params, grads)], value


clock.begin()
for i, batch in enumerate(batches):
    params, value = step(params, x_all[batch], y_all[batch])
    value = clock.step(value)
    if i % 50 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
