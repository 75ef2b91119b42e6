"""A transformer block that learns to repeat a sequence, written as a JAX user writes one:
``stax`` layers (and three of its own in stax's form), ``nn.initializers``,
``nn.dot_product_attention``, ``optimizers.adam`` and ``jit(value_and_grad(...))``.

Each sequence is 8 random tokens (of 16) followed by the same 8 again. The model embeds
the tokens and their positions, runs one pre-norm transformer block (causal multi-head
self-attention, then a GELU MLP, each inside a residual connection built from
``FanOut``, ``parallel`` and ``FanInSum``) and predicts each next token. The loss is the
cross-entropy of the second half's predictions, which the first half determines: the
block learns to attend to the token one period back. It prints the loss as it goes, then
the loss and accuracy on fresh sequences. Only names JAX has are used, so the same text
runs on JAX with its imports changed (``examples/in_jax.py``).

    python examples/transformer.py [--steps 400] [--batch 32]
"""
import argparse
import time

import numpy as np

import tf_numba as tf
import tf_numba.numpy as jnp
from tf_numba import nn, random
from tf_numba.example_libraries import optimizers, stax
from tf_numba.nn import initializers

VOCAB, HALF, WIDTH, HEADS = 16, 8, 32, 4
LENGTH = 2 * HALF


def Embed(vocab, width, init=initializers.normal(1.0)):
    """Token ids (B, T) to rows of a learned (vocab, width) table."""
    def init_fun(rng, input_shape):
        return tuple(input_shape) + (width,), init(rng, (vocab, width))

    def apply_fun(table, tokens, **kwargs):
        return jnp.take(table, tokens, axis=0)
    return init_fun, apply_fun


def AddPositions(init=initializers.normal(0.1)):
    """Adds a learned vector per position to (B, T, width) inputs."""
    def init_fun(rng, input_shape):
        return input_shape, init(rng, tuple(input_shape[-2:]))

    def apply_fun(positions, x, **kwargs):
        return x + positions
    return init_fun, apply_fun


def LayerNorm(epsilon=1e-5):
    """Layer normalization (Ba et al. 2016) over the last axis, with a learned scale and
    offset per feature."""
    def init_fun(rng, input_shape):
        return input_shape, (jnp.ones(input_shape[-1]), jnp.zeros(input_shape[-1]))

    def apply_fun(params, x, **kwargs):
        scale, offset = params
        return nn.standardize(x, axis=-1, epsilon=epsilon) * scale + offset
    return init_fun, apply_fun


def CausalSelfAttention(heads, W_init=initializers.glorot_normal()):
    """Multi-head self-attention on (B, T, width) inputs, each position seeing itself and
    the positions before it: query, key and value projections, ``dot_product_attention``
    per head, and an output projection."""
    def init_fun(rng, input_shape):
        width = input_shape[-1]
        keys = random.split(rng, 4)
        return input_shape, tuple(W_init(k, (width, width)) for k in keys)

    def apply_fun(params, x, **kwargs):
        wq, wk, wv, wo = params
        batch, length, width = x.shape

        def split_heads(w):
            return jnp.reshape(jnp.dot(x, w), (batch, length, heads, width // heads))
        out = nn.dot_product_attention(split_heads(wq), split_heads(wk), split_heads(wv),
                                       is_causal=True)
        return jnp.dot(jnp.reshape(out, (batch, length, width)), wo)
    return init_fun, apply_fun


def Residual(*layers):
    """``x + layers(x)``."""
    return stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.serial(*layers)),
                       stax.FanInSum)


def TransformerBlock(heads, width):
    return stax.serial(
        Residual(LayerNorm(), CausalSelfAttention(heads)),
        Residual(LayerNorm(), stax.Dense(4 * width), stax.Gelu, stax.Dense(width)))


init_fun, predict = stax.serial(
    Embed(VOCAB, WIDTH), AddPositions(), TransformerBlock(HEADS, WIDTH), LayerNorm(),
    stax.Dense(VOCAB), stax.LogSoftmax)
opt_init, opt_update, get_params = optimizers.adam(3e-3)


def sequences(n, rng):
    """``n`` sequences of ``HALF`` random tokens, then the same tokens again."""
    first = rng.integers(0, VOCAB, (n, HALF))
    return np.concatenate([first, first], axis=1)


def loss(params, tokens):
    """Mean cross-entropy of the predictions of the second half's tokens."""
    log_probs = predict(params, tokens[:, :-1])[:, HALF - 1:]
    targets = nn.one_hot(tokens[:, HALF:], VOCAB)
    return -jnp.mean(jnp.sum(log_probs * targets, axis=-1))


@tf.jit
def update(i, opt_state, tokens, key):
    """One Adam step: (the batch's loss before it, the new optimizer state). The model
    draws nothing; ``key`` keeps the signature of the other examples' steps."""
    value, grads = tf.value_and_grad(loss)(get_params(opt_state), tokens)
    return value, opt_update(i, grads, opt_state)


def train_batches(batch, seed=0):
    """Random batches (a tuple of one (batch, 16) array of tokens), forever."""
    rng = np.random.default_rng(seed)
    while True:
        yield (sequences(batch, rng),)


def init_params(key):
    _, params = init_fun(key, (-1, LENGTH - 1))
    return params


def main(steps=400, batch=32, seed=0):
    key = random.PRNGKey(seed)
    key, init_key = random.split(key)
    opt_state = opt_init(init_params(init_key))
    start = time.perf_counter()
    for i, tokens in zip(range(steps), train_batches(batch, seed)):
        key, step_key = random.split(key)
        value, opt_state = update(i, opt_state, *tokens, step_key)
        if i % max(1, steps // 6) == 0:
            print(f"step {i:4d}  loss {float(value):.4f}")
    params = get_params(opt_state)
    test = sequences(1000, np.random.default_rng(seed + 1))
    guesses = np.argmax(predict(params, test[:, :-1])[:, HALF - 1:], axis=-1)
    accuracy = float(np.mean(guesses == test[:, HALF:]))
    final = float(loss(params, test))
    print(f"final loss {final:.4f}, accuracy on the second halves {accuracy:.1%} "
          f"({steps} steps in {time.perf_counter() - start:.1f} s)")
    return final, accuracy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    main(args.steps, args.batch)
