"""A VAE (784-512-20, batch 128, Adam), 2000 steps: JAX (float64).

JAX's ``examples/mnist_vae.py`` step, as ``perf/compile_scaling.py`` times it: ReLU encoder
and decoder, a softplus variance, ``z`` drawn by ``random.normal`` (reparameterization),
images binarized by ``random.bernoulli`` inside the step, keys from ``fold_in`` and
``split``; the images are a fixed pool of synthetic grayscale ones (no download).
"""
import _clock as clock

import numpy as np
import jax
import jax.numpy as jnp
from jax import nn, random
from jax.example_libraries import optimizers

jax.config.update("jax_enable_x64", True)

clock.imported()

PIXELS, HIDDEN, LATENT, BATCH, STEPS = 784, 512, 20, 128, 2000
rng = np.random.default_rng(0)
pool = rng.uniform(size=(2048, PIXELS)) ** 3
batches = rng.integers(0, len(pool), size=(STEPS, BATCH))


def dense(n_in, n_out):
    return rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / (n_in + n_out)), np.zeros(n_out)


params = ([dense(PIXELS, HIDDEN), dense(HIDDEN, 2 * LATENT)],
          [dense(LATENT, HIDDEN), dense(HIDDEN, PIXELS)])
opt_init, opt_update, get_params = optimizers.adam(1e-3)


def mlp2(layers, x):
    (w1, b1), (w2, b2) = layers
    return nn.relu(x @ w1 + b1) @ w2 + b2


def elbo(key, params, images):
    stats = mlp2(params[0], images)
    mu, sigmasq = stats[:, :LATENT], nn.softplus(stats[:, LATENT:])
    z = mu + jnp.sqrt(sigmasq) * random.normal(key, mu.shape)
    logits = mlp2(params[1], z)
    logpdf = -jnp.sum(jnp.logaddexp(0.0, jnp.where(images, -1.0, 1.0) * logits))
    kl = -0.5 * jnp.sum(1.0 + jnp.log(sigmasq) - mu ** 2 - sigmasq)
    return logpdf - kl


@jax.jit
def step(i, state, images, key):
    elbo_key, data_key = random.split(random.fold_in(key, i))
    binary = random.bernoulli(data_key, images)
    loss, grads = jax.value_and_grad(lambda p: -elbo(elbo_key, p, binary) / BATCH)(
        get_params(state))
    return opt_update(i, grads, state), loss


key = random.PRNGKey(0)
state = opt_init(params)
clock.begin()
for i, batch in enumerate(batches):
    state, value = step(i, state, pool[batch], key)
    value = clock.step(value)
    if i % 250 == 0:
        print(f"step {i} loss {value:.6g}")
print(f"final loss {value:.6g}")
clock.done()
