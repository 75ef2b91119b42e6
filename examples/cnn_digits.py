"""A small CNN that learns to read 8x8 digits, trained with tf.optimizers.adam under jit.

The digits are generated: a 5x7 glyph of each of 0-9, placed at a random offset in an
8x8 image, with random stroke intensity and Gaussian noise (no dataset download, no
sklearn). The model is conv 3x3 (8 filters) -> relu -> 2x2 max pool -> conv 3x3 (16) ->
relu -> 2x2 max pool -> dense 64 -> 10, with softmax cross-entropy. It prints the training
loss as it goes, then the final loss and the accuracy on fresh test images.

    python examples/cnn_digits.py [--steps 300]
"""
import functools
import time

import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import nn, optimizers

GLYPHS = {
    0: ".###. #...# #..## #.#.# ##..# #...# .###.",
    1: "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    2: ".###. #...# ....# ...#. ..#.. .#... #####",
    3: "####. ....# ....# .###. ....# ....# ####.",
    4: "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    5: "##### #.... ####. ....# ....# #...# .###.",
    6: "..##. .#... #.... ####. #...# #...# .###.",
    7: "##### ....# ...#. ..#.. .#... .#... .#...",
    8: ".###. #...# #...# .###. #...# #...# .###.",
    9: ".###. #...# #...# .#### ....# ...#. .##..",
}
TEMPLATES = np.array([[[c == "#" for c in row] for row in GLYPHS[d].split()]
                      for d in range(10)], np.float32)                   # (10, 7, 5)


def make_digits(n, rng):
    """``n`` noisy 8x8x1 images and their labels."""
    labels = rng.integers(0, 10, n)
    images = np.zeros((n, 8, 8), np.float32)
    rows, cols = rng.integers(0, 2, n), rng.integers(0, 4, n)
    ink = rng.uniform(0.6, 1.0, n).astype(np.float32)
    for i in range(n):
        images[i, rows[i]:rows[i] + 7, cols[i]:cols[i] + 5] = TEMPLATES[labels[i]] * ink[i]
    images += rng.normal(0.0, 0.25, images.shape).astype(np.float32)
    return images[..., None], labels


def init_params(rng):
    f32 = np.float32

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(f32)
    return {"conv1": (he((3, 3, 1, 8), 9), np.zeros(8, f32)),
            "conv2": (he((3, 3, 8, 16), 72), np.zeros(16, f32)),
            "dense": (he((64, 10), 64), np.zeros(10, f32))}


def logits_of(params, images):
    (w1, b1), (w2, b2), (w3, b3) = params["conv1"], params["conv2"], params["dense"]
    h = nn.max_pool(nn.relu(nn.conv(images, w1) + b1), (2, 2))       # (n, 4, 4, 8)
    h = nn.max_pool(nn.relu(nn.conv(h, w2) + b2), (2, 2))            # (n, 2, 2, 16)
    return h.reshape(images.shape[0], -1) @ w3 + b3


def loss(params, images, labels):
    return tnp.mean(nn.softmax_cross_entropy(logits_of(params, images), labels))


def main(steps=300, batch=64, seed=0):
    rng = np.random.default_rng(seed)
    opt_init, opt_update, get_params = optimizers.adam(3e-3)
    state = opt_init(init_params(rng))

    # tiered=False: compile before the first step (the step is ~30x faster compiled,
    # and no compile thread is left running when the script ends)
    @functools.partial(tf.jit, tiered=False)
    def train_step(i, state, images, labels):
        value, grads = tf.value_and_grad(loss)(get_params(state), images, labels)
        return value, opt_update(i, grads, state)

    start = time.perf_counter()
    for i in range(steps):
        images, labels = make_digits(batch, rng)
        value, state = train_step(i, state, images, labels)
        if i % 50 == 0:
            print(f"step {i:4d}  loss {float(value):.4f}")
    images, labels = make_digits(1000, rng)
    params = get_params(state)
    accuracy = np.mean(np.argmax(logits_of(params, images), axis=1) == labels)
    final = float(loss(params, images, labels))
    print(f"final loss {final:.4f}, test accuracy {accuracy:.1%} "
          f"({steps} steps in {time.perf_counter() - start:.1f} s)")
    return final, accuracy


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="a small CNN on generated 8x8 digits")
    parser.add_argument("--steps", type=int, default=300)
    main(steps=parser.parse_args().steps)
