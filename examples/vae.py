"""A variational autoencoder (Kingma and Welling 2014) on generated 8x8 images, trained
with tf.optimizers.adam under tf.jit(tf.value_and_grad(...)).

The images are four prototypes (a bar, a cross, a box, a diagonal) at random intensity,
with Gaussian noise, clipped to [0, 1] (no dataset download). The encoder is an MLP
64 -> 32 -> (mean, log variance) of a 2-D latent z; the decoder is an MLP 2 -> 32 -> 64
pixel logits. The loss is the negative ELBO per image: Bernoulli reconstruction
cross-entropy plus KL(q(z|x) || N(0, I)), with one sample of z drawn by the
reparameterization trick ``z = mean + exp(log_var / 2) * eps``, ``eps`` from tf.random,
so the gradient flows through the sample to the encoder.

    python examples/vae.py [--steps N]
"""
import argparse
import time

import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import nn, optimizers, random

LATENT, HIDDEN, PIXELS = 2, 32, 64


def prototypes():
    """Four 8x8 patterns in {0, 1}, flattened: (4, 64)."""
    bar, cross, box, diagonal = (np.zeros((8, 8)) for _ in range(4))
    bar[:, 3:5] = 1
    cross[3:5, :] = cross[:, 3:5] = 1
    box[1, 1:7] = box[6, 1:7] = box[1:7, 1] = box[1:7, 6] = 1
    diagonal[np.arange(8), np.arange(8)] = 1
    return np.stack([bar, cross, box, diagonal]).reshape(4, PIXELS)


def make_images(n, rng):
    """``n`` noisy images of random prototypes, in [0, 1]."""
    ink = rng.uniform(0.7, 1.0, (n, 1))
    images = prototypes()[rng.integers(0, 4, n)] * ink + rng.normal(0, 0.1, (n, PIXELS))
    return np.clip(images, 0.0, 1.0)


def init_params(key):
    """Encoder and decoder weights as a pytree, drawn from ``key`` (Glorot-scaled)."""
    def dense(key, n_in, n_out):
        return {"w": random.normal(key, (n_in, n_out)) * np.sqrt(2.0 / (n_in + n_out)),
                "b": tnp.zeros(n_out)}
    keys = random.split(key, 4)
    return {"encoder": {"hidden": dense(keys[0], PIXELS, HIDDEN),
                        "out": dense(keys[1], HIDDEN, 2 * LATENT)},
            "decoder": {"hidden": dense(keys[2], LATENT, HIDDEN),
                        "out": dense(keys[3], HIDDEN, PIXELS)}}


def mlp(layers, x):
    h = tnp.tanh(x @ layers["hidden"]["w"] + layers["hidden"]["b"])
    return h @ layers["out"]["w"] + layers["out"]["b"]


def negative_elbo(params, images, key):
    """The batch mean of ``-ELBO(x) = E_q[-log p(x|z)] + KL(q(z|x) || p(z))``."""
    stats = mlp(params["encoder"], images)
    mean, log_var = stats[:, :LATENT], stats[:, LATENT:]
    eps = random.normal(key, mean.shape)
    z = mean + tnp.exp(0.5 * log_var) * eps           # reparameterized: differentiable in q
    logits = mlp(params["decoder"], z)
    reconstruction = tnp.sum(nn.binary_cross_entropy_with_logits(logits, images), axis=1)
    # KL of N(mean, diag(exp(log_var))) from N(0, I), in closed form (the paper's appendix B)
    kl = 0.5 * tnp.sum(tnp.exp(log_var) + mean ** 2 - 1.0 - log_var, axis=1)
    return tnp.mean(reconstruction + kl)


def main(steps=600, batch=64, seed=0):
    rng = np.random.default_rng(seed)
    key = random.PRNGKey(seed)
    key, init_key = random.split(key)
    opt_init, opt_update, get_params = optimizers.adam(3e-3)
    state = opt_init(init_params(init_key))
    train = make_images(2048, rng)

    # tiered (the default): the first steps run on the NumPy interpreter while compile
    # workers build the kernel, then the same step runs compiled, with the same values
    @tf.jit
    def train_step(i, state, images, key):
        loss, grads = tf.value_and_grad(negative_elbo)(get_params(state), images, key)
        return loss, opt_update(i, grads, state)

    start = time.perf_counter()
    for i in range(steps):
        key, step_key = random.split(key)
        images = train[rng.integers(0, len(train), batch)]
        loss, state = train_step(i, state, images, step_key)
        if i % max(1, steps // 6) == 0:
            print(f"step {i:4d}  ELBO {-float(loss):9.3f}  loss {float(loss):8.3f}")

    params = get_params(state)
    test = make_images(1000, rng)
    final = float(negative_elbo(params, test, key))
    # the decoder's mean image at the encoder's mean of each prototype: the latent space
    # separates them, so each is decoded close to its own prototype
    codes = mlp(params["encoder"], prototypes())[:, :LATENT]
    decoded = nn.sigmoid(mlp(params["decoder"], codes))
    error = float(np.mean(np.abs(decoded - prototypes())))
    print(f"final loss {final:.4f} (-ELBO per image on 1000 test images), prototype "
          f"reconstruction error {error:.3f} ({steps} steps in "
          f"{time.perf_counter() - start:.1f} s)")
    return final


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=600)
    main(parser.parse_args().steps)
