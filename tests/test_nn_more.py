"""The rest of jax.nn: mish, hard_silu, squareplus, sparse_plus, sparse_sigmoid,
log1mexp, logmeanexp, identity, tanh, and dot_product_attention with its masks, bias,
causal and grouped-query shapes; values against NumPy formulas (and JAX where installed),
derivatives against finite differences."""
import importlib.util

import numpy as np
import pytest
import scipy.special as sps

import tf_numba as tf
import tf_numba.nn as nn
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError

HAS_JAX = importlib.util.find_spec("jax") is not None
X = np.array([-40.0, -3.0, -1.0, -0.4, 0.0, 0.3, 1.0, 2.5, 40.0])

# name: NumPy reference
REFERENCE = {
    "mish": lambda x: x * np.tanh(np.logaddexp(0, x)),
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "identity": lambda x: x,
    "tanh": np.tanh,
}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_activation_matches_its_formula(name):
    np.testing.assert_allclose(getattr(nn, name)(X), REFERENCE[name](X), rtol=1e-14,
                               atol=1e-300)
    assert getattr(nn, name)(X.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("name", ["mish", "hard_silu", "squareplus", "sparse_plus",
                                  "sparse_sigmoid", "log1mexp"])
def test_activation_derivatives_match_finite_differences(name):
    x = np.array([0.7, 2.0, 5.5]) if name == "log1mexp" else np.array([-2.3, -0.4, 0.6, 3.7])
    tf.test_util.check_grads(getattr(nn, name), (x,), order=2)


def test_hard_swish_is_hard_silu():
    np.testing.assert_array_equal(nn.hard_swish(X), nn.hard_silu(X))


def test_log1mexp_is_accurate_at_both_ends():
    x = np.array([1e-30, 1e-8, 0.3, np.log(2), 2.0, 40.0, 800.0])
    want = np.array([float(sps.log1p(-np.exp(-v))) if v > 1 else np.log(-np.expm1(-v))
                     for v in x])
    np.testing.assert_allclose(nn.log1mexp(x), want, rtol=1e-14)
    assert np.all(np.isfinite(tf.grad(lambda v: tnp.sum(nn.log1mexp(v)))(x)))


def test_logmeanexp_is_logsumexp_less_the_log_of_the_count():
    x = np.array([[1000.0, 1000.0, 1000.0], [0.0, -1.0, 2.0]])
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1),
                               sps.logsumexp(x, axis=1) - np.log(3), rtol=1e-15)
    where = np.array([[True, False, False], [True, True, False]])
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, where=where),
                               [1000.0, sps.logsumexp([0.0, -1.0]) - np.log(2)], rtol=1e-15)
    assert nn.logmeanexp(x, keepdims=True).shape == (1, 1)
    tf.test_util.check_grads(lambda v: nn.logmeanexp(v, axis=0), (x[1:] * 0.1,), order=2)


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
@pytest.mark.parametrize("name", sorted(REFERENCE) + ["log1mexp", "logmeanexp"])
def test_activation_matches_jax(name):
    import jax
    jax.config.update("jax_enable_x64", True)
    x = np.abs(X) + 0.1 if name == "log1mexp" else X
    np.testing.assert_allclose(getattr(nn, name)(x), getattr(jax.nn, name)(x), rtol=1e-14,
                               atol=1e-300)


STANDARDIZE_CASES = {
    "computed": {}, "stable": dict(algorithm="stable"), "epsilon": dict(epsilon=0.5),
    "mean": dict(mean=np.full((4, 1), 0.25)), "variance": dict(variance=np.full((4, 1), 2.0)),
    "both": dict(mean=np.zeros((4, 1)), variance=np.ones((4, 1)), epsilon=0.0),
    "where": dict(where=np.arange(12).reshape(4, 3) % 4 != 1),
    "where stable": dict(where=np.arange(12).reshape(4, 3) % 4 != 1, algorithm="stable"),
    "axis 0": dict(axis=0),
}


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
@pytest.mark.parametrize("case", sorted(STANDARDIZE_CASES))
def test_standardize_matches_jax(case):
    import jax
    jax.config.update("jax_enable_x64", True)
    kw = STANDARDIZE_CASES[case]
    x = np.sin(np.arange(12.0)).reshape(4, 3) * 2.0 + 3.0
    want = jax.nn.standardize(x, **kw)
    np.testing.assert_allclose(nn.standardize(x, **kw), want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(tf.jit(lambda v: nn.standardize(v, **kw))(x), want,
                               rtol=1e-13, atol=1e-15)
    g = lambda v: jax.numpy.sum(jax.numpy.sin(jax.nn.standardize(v, **kw)))  # noqa: E731
    np.testing.assert_allclose(
        tf.grad(lambda v: tnp.sum(tnp.sin(nn.standardize(v, **kw))))(x), jax.grad(g)(x),
        rtol=1e-10, atol=1e-13)


def test_standardize_fast_variance_is_clipped_at_zero_and_stable_is_exact():
    # a constant row: mean(x^2) - mean^2 rounds below 0 for the "fast" variance
    x = np.full((1, 3), 0.1 + 1e8)
    assert np.all(np.isfinite(nn.standardize(x, epsilon=0.0 + 1e-30)))
    spread = np.array([[1e8 + 1.0, 1e8 - 1.0]])
    np.testing.assert_allclose(nn.standardize(spread, epsilon=0.0, algorithm="stable"),
                               [[1.0, -1.0]], rtol=1e-12)
    with pytest.raises(tf.errors.ArgumentError, match="'fast' or 'stable'"):
        nn.standardize(spread, algorithm="exact")


# ---------------------------------------------------------------- attention

RNG = np.random.default_rng(0)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 3
Q = RNG.standard_normal((B, T, N, H))
KEY = RNG.standard_normal((B, S, K, H))
V = RNG.standard_normal((B, S, K, H))
BIAS = RNG.standard_normal((B, N, T, S))
MASK = RNG.random((B, 1, T, S)) > 0.3
Q_LENGTHS, KV_LENGTHS = np.array([3, 5], np.int32), np.array([6, 2], np.int32)

OPTIONS = {
    "plain": {}, "bias": dict(bias=BIAS), "mask": dict(mask=MASK),
    "causal": dict(is_causal=True), "window": dict(local_window_size=(1, 2)),
    "lengths": dict(query_seq_lengths=Q_LENGTHS, key_value_seq_lengths=KV_LENGTHS),
    "all": dict(bias=BIAS, mask=MASK, is_causal=True, scale=0.3),
}


def _reference(q, k, v, bias=None, mask=None, scale=None, is_causal=False,
               local_window_size=None, query_seq_lengths=None, key_value_seq_lengths=None):
    """Attention head by head in NumPy: query head n reads key head n // (N // K)."""
    b_, t_, n_, h_ = q.shape
    s_, k_ = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h_) if scale is None else scale
    out = np.zeros_like(q)
    for b in range(b_):
        for n in range(n_):
            kh = n // (n_ // k_)
            logits = q[b, :, n] @ k[b, :, kh].T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (b_, n_, t_, s_))[b, n]
            keep = np.ones((t_, s_), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (b_, n_, t_, s_))[b, n]
            ti, si = np.arange(t_)[:, None], np.arange(s_)[None, :]
            if is_causal:
                keep &= ti >= si
            if local_window_size is not None:
                left, right = local_window_size
                keep &= (ti <= si + left) & (ti >= si - right)
            if query_seq_lengths is not None:
                keep &= ti < query_seq_lengths[b]
            if key_value_seq_lengths is not None:
                keep &= si < key_value_seq_lengths[b]
            logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
            out[b, :, n] = sps.softmax(logits, axis=-1) @ v[b, :, kh]
            if query_seq_lengths is not None:
                out[b, query_seq_lengths[b]:, n] = 0
    return out


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_dot_product_attention_matches_a_head_by_head_reference(option):
    got = nn.dot_product_attention(Q, KEY, V, **OPTIONS[option])
    np.testing.assert_allclose(got, _reference(Q, KEY, V, **OPTIONS[option]), rtol=1e-13,
                               atol=1e-14)
    jitted = tf.jit(lambda q, k, v: nn.dot_product_attention(q, k, v, **OPTIONS[option]))
    np.testing.assert_allclose(jitted(Q, KEY, V), got, rtol=1e-13, atol=1e-14)


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_dot_product_attention_matches_jax_in_float32(option):
    # JAX computes the softmax in float32 whatever the input, so float32 is where the two
    # compute the same thing
    import jax
    kw = {k: (v.astype(np.float32) if k == "bias" else v) for k, v in OPTIONS[option].items()}
    args = [a.astype(np.float32) for a in (Q, KEY, V)]
    got = nn.dot_product_attention(*args, **kw)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, jax.nn.dot_product_attention(*args, **kw), atol=1e-6)


def test_dot_product_attention_unbatched_residual_and_gradients():
    out, lse = nn.dot_product_attention(Q[0], KEY[0], V[0], is_causal=True,
                                        return_residual=True)
    assert out.shape == (T, N, H) and lse.shape == (T, N)
    np.testing.assert_allclose(out, _reference(Q[:1], KEY[:1], V[:1], is_causal=True)[0],
                               rtol=1e-13)
    logits = np.einsum("tnh,snh->nts", Q[0], np.repeat(KEY[0], N // K, axis=1)) / np.sqrt(H)
    logits = np.where(np.tril(np.ones((T, S), bool)), logits, -0.7 * np.finfo(np.float32).max)
    np.testing.assert_allclose(lse, sps.logsumexp(logits, axis=-1).T, rtol=1e-13)
    tf.test_util.check_grads(
        lambda q, k, v, b: nn.dot_product_attention(q, k, v, b, mask=MASK, is_causal=True),
        (Q * 0.5, KEY * 0.5, V, BIAS * 0.5), order=1)


def test_dot_product_attention_checks_shapes():
    with pytest.raises(ShapeError, match="multiple"):
        nn.dot_product_attention(np.ones((1, 2, 3, 4)), np.ones((1, 2, 2, 4)),
                                 np.ones((1, 2, 2, 4)))
    with pytest.raises(ShapeError, match="value"):
        nn.dot_product_attention(np.ones((1, 2, 2, 4)), np.ones((1, 2, 2, 4)),
                                 np.ones((1, 3, 2, 4)))
