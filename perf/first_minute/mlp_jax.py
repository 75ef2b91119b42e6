"""A 32-128-5 ReLU MLP, softmax cross-entropy, batch 128, 300 SGD steps: JAX (float64).

``jit(value_and_grad)`` on a list-of-dicts params pytree, updated by a comprehension.
"""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

clock.imported()

rng = np.random.default_rng(0)
x_all = rng.standard_normal((4096, 32))
labels = np.argmax(x_all @ rng.standard_normal((32, 5)), axis=1)
y_all = np.eye(5)[labels]
batches = rng.integers(0, len(x_all), size=(300, 128))
params = [{"w": rng.standard_normal((m, n)) / np.sqrt(m), "b": np.zeros(n)}
          for m, n in ((32, 128), (128, 5))]


def predict(params, x):
    *hidden, last = params
    for layer in hidden:
        z = x @ layer["w"] + layer["b"]
        x = jnp.maximum(z, 0.0)
    return x @ last["w"] + last["b"]


def loss(params, x, y):
    logits = predict(params, x)
    z = logits - jnp.max(logits, axis=1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(y * logp, axis=1))


@jax.jit
def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return [{k: p[k] - 0.1 * g[k] for k in p} for p, g in zip(params, grads)], value


clock.begin()
for i, batch in enumerate(batches):
    params, value = step(params, x_all[batch], y_all[batch])
    value = clock.step(value)
    if i % 50 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
