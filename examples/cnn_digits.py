"""A convolutional classifier of handwritten digits, written as a JAX user writes one:
``stax`` layers, ``nn.initializers``, ``optimizers.adam`` and ``jit(value_and_grad(...))``.

The digits are scikit-learn's ``load_digits`` (1797 8x8 images, shipped with the package,
no download): 1500 train, the rest test. The model is conv 3x3 (16) -> batch norm -> relu
-> 2x2 max pool -> conv 3x3 (32) -> batch norm -> relu -> 2x2 max pool -> dense 64 -> relu
-> dropout -> dense 10, trained on softmax cross-entropy; it prints the training loss as it
goes, then the test loss and accuracy. Only names JAX has are used, so the same text runs
on JAX with its imports changed (``examples/in_jax.py``).

    python examples/cnn_digits.py [--steps 300] [--batch 64]
"""
import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

import tf_numba as tf
import tf_numba.numpy as jnp
from tf_numba import random
from tf_numba.example_libraries import optimizers, stax
from tf_numba.nn import initializers

N_TRAIN, CLASSES = 1500, 10
KEEP_RATE = 0.8          # stax.Dropout's rate is the probability of keeping a unit


def model(mode):
    """The network as a stax layer; ``mode`` "train" drops units, "test" keeps them all."""
    he = initializers.he_normal()
    return stax.serial(
        stax.Conv(16, (3, 3), padding="SAME", W_init=he), stax.BatchNorm(), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(32, (3, 3), padding="SAME", W_init=he), stax.BatchNorm(), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Flatten, stax.Dense(64, W_init=he, b_init=initializers.zeros), stax.Relu,
        stax.Dropout(KEEP_RATE, mode),
        stax.Dense(CLASSES, b_init=initializers.zeros), stax.LogSoftmax)


init_fun, predict = model("train")
_, predict_test = model("test")
opt_init, opt_update, get_params = optimizers.adam(3e-3)


def digits():
    """(train images, train labels, test images, test labels): NHWC images in [0, 1],
    one-hot labels, split after a fixed shuffle."""
    data = load_digits()
    order = np.random.default_rng(0).permutation(len(data.target))
    images = (data.images[order] / 16.0)[..., None]
    labels = np.eye(CLASSES)[data.target[order]]
    return images[:N_TRAIN], labels[:N_TRAIN], images[N_TRAIN:], labels[N_TRAIN:]


def loss(params, images, labels, key):
    """Mean cross-entropy of the training network (dropout drawn from ``key``)."""
    return -jnp.mean(jnp.sum(predict(params, images, rng=key) * labels, axis=1))


@tf.jit
def update(i, opt_state, images, labels, key):
    """One Adam step: (the batch's loss before it, the new optimizer state)."""
    value, grads = tf.value_and_grad(loss)(get_params(opt_state), images, labels, key)
    return value, opt_update(i, grads, opt_state)


def train_batches(batch, seed=0):
    """Random (images, labels) batches of the training set, forever."""
    images, labels, _, _ = digits()
    rng = np.random.default_rng(seed)
    while True:
        pick = rng.choice(len(labels), batch, replace=False)
        yield images[pick], labels[pick]


def init_params(key):
    _, params = init_fun(key, (-1, 8, 8, 1))
    return params


def main(steps=300, batch=64, seed=0):
    key = random.PRNGKey(seed)
    key, init_key = random.split(key)
    opt_state = opt_init(init_params(init_key))
    start = time.perf_counter()
    for i, images_labels in zip(range(steps), train_batches(batch, seed)):
        key, step_key = random.split(key)
        value, opt_state = update(i, opt_state, *images_labels, step_key)
        if i % max(1, steps // 6) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}")
    _, _, test_images, test_labels = digits()
    log_probs = predict_test(get_params(opt_state), test_images, rng=key)
    final = float(-jnp.mean(jnp.sum(log_probs * test_labels, axis=1)))
    accuracy = float(np.mean(np.argmax(log_probs, 1) == np.argmax(test_labels, 1)))
    print(f"final loss {final:.4f}, test accuracy {accuracy:.1%} "
          f"({steps} steps in {time.perf_counter() - start:.1f} s)")
    return final, accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    main(args.steps, args.batch)
