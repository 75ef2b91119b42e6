"""Logistic regression whose loss has a Python ``if`` on a traced value, trained by
un-jitted tf.grad.

Outside ``jit``, tf.grad evaluates the function with its inputs' values known, so Python
control flow on traced values works as under autograd: the gradient is that of the branch
taken at these parameters. Here an L2 penalty on the weights is added only once the
classifier is confident on average (mean margin above ``CONFIDENT``), which keeps the
weights bounded on nearly separable data without regularizing the early steps.

Under ``tf.jit`` the same ``if`` meets a value that is not known until the compiled
program runs, and raises ConcretizationError (shown at the end). The jittable spelling
selects instead of branching:
``loss + tnp.where(tnp.mean(margin) > CONFIDENT, PENALTY * tnp.sum(w ** 2), 0.0)``
(or ``tf.lax.cond``).

    python examples/logistic_if.py [--steps N]
"""
import argparse

import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import nn

CONFIDENT, PENALTY = 2.0, 1e-2


def make_data(n, rng, dim=5):
    """Two Gaussian classes (labels -1, +1) whose means differ along a random direction."""
    direction = np.random.default_rng(1).normal(size=dim)
    labels = rng.choice([-1.0, 1.0], n)
    x = rng.normal(size=(n, dim)) + 1.5 * labels[:, None] * direction / np.linalg.norm(direction)
    return x, labels


def margins(params, x, y):
    """``y (x @ w + b)``: positive where an example is classified right."""
    return y * (x @ params["w"] + params["b"])


def loss(params, x, y):
    """Mean logistic loss ``log(1 + exp(-margin))``, plus the penalty when confident."""
    margin = margins(params, x, y)
    value = tnp.mean(nn.softplus(-margin))
    if tnp.mean(margin) > CONFIDENT:       # a Python branch on a traced value
        value = value + PENALTY * tnp.sum(params["w"] ** 2)
    return value


def accuracy(params, x, y):
    return float(np.mean(margins(params, x, y) > 0))


def main(steps=200, learning_rate=0.5, seed=0):
    rng = np.random.default_rng(seed)
    x, y = make_data(500, rng)
    params = {"w": np.zeros(x.shape[1]), "b": np.float64(0.0)}
    grad_fn = tf.grad(loss)            # not jitted: the `if` sees concrete values
    for i in range(steps):
        if i % max(1, steps // 5) == 0:
            penalized = np.mean(margins(params, x, y)) > CONFIDENT
            print(f"step {i:4d}  loss {float(loss(params, x, y)):.4f}  "
                  f"penalty {'on' if penalized else 'off'}")
        grads = grad_fn(params, x, y)
        params = tf.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads)

    x_test, y_test = make_data(2000, rng)
    final = float(loss(params, x, y))
    print(f"final loss {final:.4f}, train accuracy {accuracy(params, x, y):.1%}, "
          f"test accuracy {accuracy(params, x_test, y_test):.1%}, "
          f"|w| = {np.linalg.norm(params['w']):.3f}")

    # Under jit the `if` has no value to test: tracing stops with ConcretizationError,
    # whose message names the line and suggests tnp.where, lax.cond or static_argnums.
    try:
        tf.jit(tf.grad(loss))(params, x, y)
    except tf.errors.ConcretizationError as error:
        print(f"under tf.jit: {type(error).__name__}: {str(error).splitlines()[0]}")
    return final


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    main(parser.parse_args().steps)
