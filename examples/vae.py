"""A variational autoencoder (Kingma and Welling 2014) of handwritten digits, written as a
JAX user writes one (after JAX's ``examples/mnist_vae.py``): ``stax`` encoder and decoder,
``optimizers.adam``, ``jit(value_and_grad(...))`` and ``random`` keys.

The digits are scikit-learn's ``load_digits`` (8x8, scaled to [0, 1]): 1500 train, the
rest test. The encoder maps an image to the mean and variance of a Gaussian over an
8-dimensional code (``FanOut`` into two ``Dense`` heads, the variance through
``Softplus``); the decoder maps a code to 64 pixel logits. The loss is the negative ELBO
per image: the pixels' Bernoulli cross-entropy plus KL(q(z|x) || N(0, I)), with one code
drawn by the reparameterization trick, ``z = mean + sqrt(variance) * eps``, so the
gradient flows through the draw into the encoder. Only names JAX has are used, so the
same text runs on JAX with its imports changed (``examples/in_jax.py``).

    python examples/vae.py [--steps 600] [--batch 64]
"""
import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

import tf_numba as tf
import tf_numba.numpy as jnp
from tf_numba import nn, random
from tf_numba.example_libraries import optimizers, stax

N_TRAIN, PIXELS, HIDDEN, LATENT = 1500, 64, 128, 8

encoder_init, encode = stax.serial(
    stax.Dense(HIDDEN), stax.Softplus, stax.Dense(HIDDEN), stax.Softplus,
    stax.FanOut(2), stax.parallel(stax.Dense(LATENT),
                                  stax.serial(stax.Dense(LATENT), stax.Softplus)))
decoder_init, decode = stax.serial(
    stax.Dense(HIDDEN), stax.Softplus, stax.Dense(HIDDEN), stax.Softplus, stax.Dense(PIXELS))
opt_init, opt_update, get_params = optimizers.adam(3e-3)


def digits():
    """(train images, test images): rows of 64 pixels in [0, 1], after a fixed shuffle."""
    images = load_digits().data / 16.0
    images = images[np.random.default_rng(0).permutation(len(images))]
    return images[:N_TRAIN], images[N_TRAIN:]


def gaussian_kl(mean, variance):
    """KL(N(mean, diag(variance)) || N(0, I)) per row, in closed form (the paper's
    appendix B)."""
    return 0.5 * jnp.sum(variance + mean ** 2 - 1.0 - jnp.log(variance), axis=-1)


def bernoulli_log_likelihood(logits, images):
    """log p(images | logits) per row, pixels as Bernoulli probabilities."""
    return jnp.sum(images * nn.log_sigmoid(logits) + (1.0 - images) * nn.log_sigmoid(-logits),
                   axis=-1)


def negative_elbo(params, images, key):
    """The batch mean of ``-ELBO(x) = E_q[-log p(x|z)] + KL(q(z|x) || p(z))``."""
    encoder_params, decoder_params = params
    mean, variance = encode(encoder_params, images)
    z = mean + jnp.sqrt(variance) * random.normal(key, mean.shape)  # reparameterized
    logits = decode(decoder_params, z)
    return jnp.mean(gaussian_kl(mean, variance) - bernoulli_log_likelihood(logits, images))


@tf.jit
def update(i, opt_state, images, key):
    """One Adam step: (the batch's loss before it, the new optimizer state)."""
    value, grads = tf.value_and_grad(negative_elbo)(get_params(opt_state), images, key)
    return value, opt_update(i, grads, opt_state)


def train_batches(batch, seed=0):
    """Random batches (a tuple of one array of images) of the training set, forever."""
    images, _ = digits()
    rng = np.random.default_rng(seed)
    while True:
        yield (images[rng.choice(len(images), batch, replace=False)],)


def init_params(key):
    encoder_key, decoder_key = random.split(key)
    _, encoder_params = encoder_init(encoder_key, (-1, PIXELS))
    _, decoder_params = decoder_init(decoder_key, (-1, LATENT))
    return encoder_params, decoder_params


def main(steps=600, batch=64, seed=0):
    key = random.PRNGKey(seed)
    key, init_key = random.split(key)
    opt_state = opt_init(init_params(init_key))
    start = time.perf_counter()
    for i, images in zip(range(steps), train_batches(batch, seed)):
        key, step_key = random.split(key)
        value, opt_state = update(i, opt_state, *images, step_key)
        if i % max(1, steps // 6) == 0:
            print(f"step {i:4d}  ELBO {-float(value):9.3f}  loss {float(value):8.3f}")
    params = get_params(opt_state)
    _, test = digits()
    final = float(negative_elbo(params, test, key))
    # the decoder's mean image at each test image's mean code, against the image
    mean, _ = encode(params[0], test)
    error = float(np.mean(np.abs(nn.sigmoid(decode(params[1], mean)) - test)))
    print(f"final loss {final:.4f} (-ELBO per image on {len(test)} test images), "
          f"reconstruction error {error:.3f} ({steps} steps in "
          f"{time.perf_counter() - start:.1f} s)")
    return final


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    main(args.steps, args.batch)
