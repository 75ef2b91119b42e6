"""An Elman RNN over ``lax.scan``, T=50, batch 32, hidden 32, 200 SGD steps: JAX (float64).

A squared-error readout at every time step; 10 batches of sequences, cycled.
"""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

clock.imported()

rng = np.random.default_rng(0)
xs_all = rng.standard_normal((10, 50, 32, 4))        # (batch index, time, batch, features)
ys_all = np.cumsum(xs_all[..., :1], axis=1) / np.sqrt(np.arange(1, 51))[:, None, None]
params = {"wx": rng.standard_normal((4, 32)) / 2, "wh": rng.standard_normal((32, 32)) / 8,
          "b": np.zeros(32), "wo": rng.standard_normal((32, 1)) / 8, "bo": np.zeros(1)}


def loss(params, xs, ys):
    def cell(h, x_t):
        h = jnp.tanh(x_t @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h

    _, hs = jax.lax.scan(cell, jnp.zeros((xs.shape[1], 32)), xs)
    pred = hs @ params["wo"] + params["bo"]
    return jnp.mean((pred - ys) ** 2)


@jax.jit
def step(params, xs, ys):
    value, grads = jax.value_and_grad(loss)(params, xs, ys)
    return {k: params[k] - 0.02 * grads[k] for k in params}, value


clock.begin()
for i in range(200):
    params, value = step(params, xs_all[i % 10], ys_all[i % 10])
    value = clock.step(value)
    if i % 40 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
