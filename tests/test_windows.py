"""Convolutions and windowed reductions (tf_numba/windows.py, ops/windows.py, nn pools):
values against explicit NumPy loops, scipy.signal and JAX, derivatives against finite
differences, vmap against a loop, jit against eager."""
import itertools

import numpy as np
import pytest
import scipy.signal

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax, nn
from tf_numba.errors import DTypeError, ShapeError, TfNumbaError
from ad_checks import check_grads
from schedule_checks import numpy_steps

RNG = np.random.default_rng(0)


def dilate_pad(x, pads, dilation, first_axis, fill=0.0):
    """``x`` with its axes ``first_axis...`` dilated and padded (negative pads crop)."""
    for d, ((lo, hi), r) in enumerate(zip(pads, dilation)):
        axis = first_axis + d
        n = x.shape[axis]
        shape = list(x.shape)
        shape[axis] = (n - 1) * r + 1 if n else 0
        out = np.full(shape, fill, x.dtype)
        where = [slice(None)] * x.ndim
        where[axis] = slice(None, None, r)
        out[tuple(where)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=fill)
        where = [slice(None)] * x.ndim
        where[axis] = slice(max(-lo, 0), out.shape[axis] - max(-hi, 0))
        x = out[tuple(where)]
    return x


def loop_conv(x, w, strides, pads, lhs_dil=None, rhs_dil=None, groups=1):
    """XLA's convolution written out: x (N, C, spatial...), w (O, I, spatial...)."""
    n_sp = x.ndim - 2
    lhs_dil, rhs_dil = lhs_dil or (1,) * n_sp, rhs_dil or (1,) * n_sp
    xp = dilate_pad(x, pads, lhs_dil, 2)
    window = w.shape[2:]
    out_sp = [max(0, (p - ((k - 1) * r + 1)) // s + 1)
              for p, k, r, s in zip(xp.shape[2:], window, rhs_dil, strides)]
    out_ch, per_group = w.shape[0], w.shape[1]
    out = np.zeros((x.shape[0], out_ch) + tuple(out_sp))
    for o in range(out_ch):
        g = o // (out_ch // groups)
        for pos in itertools.product(*map(range, out_sp)):
            for k in itertools.product(*map(range, window)):
                at = tuple(p * s + j * r for p, s, j, r in zip(pos, strides, k, rhs_dil))
                patch = xp[(slice(None), slice(g * per_group, (g + 1) * per_group)) + at]
                out[(slice(None), o) + pos] += patch @ w[(o, slice(None)) + k]
    return out


def loop_reduce_window(x, fn, init, window, strides, pads, base=None, wdil=None):
    """``reduce_window`` written out; padding and holes take no part (NaN marks them)."""
    base, wdil = base or (1,) * x.ndim, wdil or (1,) * x.ndim
    xp = dilate_pad(x.astype(np.float64), pads, base, 0, fill=np.nan)
    out_sp = [max(0, (p - ((k - 1) * r + 1)) // s + 1)
              for p, k, r, s in zip(xp.shape, window, wdil, strides)]
    out = np.empty(out_sp)
    for pos in itertools.product(*map(range, out_sp)):
        vals = [xp[tuple(p * s + j * r for p, s, j, r in zip(pos, strides, k, wdil))]
                for k in itertools.product(*map(range, window))]
        out[pos] = fn([init] + [v for v in vals if not np.isnan(v)])
    return out


CONV_CASES = [  # lhs shape, rhs shape, keyword arguments
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(2, 3), padding="VALID")),
    ((2, 3, 8, 5), (4, 3, 2, 3), dict(window_strides=(2, 1), padding="SAME_LOWER",
                                      rhs_dilation=(2, 1))),
    ((1, 2, 5, 6), (3, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 2), (-1, 3)),
                                      lhs_dilation=(2, 3), rhs_dilation=(1, 2))),
    ((2, 6, 5, 4), (4, 3, 3, 3), dict(window_strides=(1, 2), padding="SAME",
                                      feature_group_count=2)),
    ((2, 4, 5, 5), (8, 1, 3, 3), dict(window_strides=(1, 1), padding="SAME",
                                      feature_group_count=4)),       # depthwise
    ((2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding=((2, 1),))),
    ((1, 2, 4, 3, 5), (3, 2, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
]


def _explicit(lhs_shape, rhs_shape, kw):
    """The explicit pads and dilations a case means, for the loop reference."""
    n_sp = len(lhs_shape) - 2
    rd = kw.get("rhs_dilation", (1,) * n_sp)
    pads = kw["padding"]
    if isinstance(pads, str):
        span = [(k - 1) * r + 1 for k, r in zip(rhs_shape[2:], rd)]
        pads = lax.padtype_to_pads(lhs_shape[2:], span, kw["window_strides"], pads)
    return pads, kw.get("lhs_dilation"), rd


@pytest.mark.parametrize("lhs_shape,rhs_shape,kw", CONV_CASES)
def test_conv_general_dilated_matches_loops(lhs_shape, rhs_shape, kw):
    x, w = RNG.standard_normal(lhs_shape), RNG.standard_normal(rhs_shape)
    pads, ld, rd = _explicit(lhs_shape, rhs_shape, kw)
    want = loop_conv(x, w, kw["window_strides"], pads, ld, rd,
                     kw.get("feature_group_count", 1))
    got = lax.conv_general_dilated(x, w, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lhs_shape,rhs_shape,kw", CONV_CASES)
def test_conv_general_dilated_matches_jax(lhs_shape, rhs_shape, kw):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, w = RNG.standard_normal(lhs_shape), RNG.standard_normal(rhs_shape)
    want = np.asarray(jax.lax.conv_general_dilated(x, w, **kw))
    np.testing.assert_allclose(lax.conv_general_dilated(x, w, **kw), want,
                               rtol=1e-12, atol=1e-12)
    # the gradient with respect to both operands, against JAX's
    ct = RNG.standard_normal(want.shape)
    _, f_vjp = jax.vjp(lambda a, b: jax.lax.conv_general_dilated(a, b, **kw), x, w)
    _, t_vjp = tf.vjp(lambda a, b: lax.conv_general_dilated(a, b, **kw), x, w)
    for got, ref in zip(t_vjp(ct), f_vjp(ct)):
        np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_conv_matches_scipy_correlate(mode):
    """One channel, one kernel: scipy.signal.correlate's three modes."""
    x, w = RNG.standard_normal((9, 8)), RNG.standard_normal((3, 4))
    pads = {"valid": "VALID", "full": [(2, 2), (3, 3)],
            # scipy's 'same' centers like SAME_LOWER when the kernel is even
            "same": "SAME_LOWER"}[mode]
    got = lax.conv(x[None, None], w[None, None], (1, 1), pads)[0, 0]
    np.testing.assert_allclose(got, scipy.signal.correlate(x, w, mode=mode), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("spec", [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"),
                                  ("NHWC", "OIHW", "NCHW"), ("CHWN", "WHIO", "HNCW")])
def test_dimension_numbers_permute_axes(spec):
    x, w = RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((4, 3, 3, 2))  # NCHW, OIHW
    want = loop_conv(x, w, (2, 1), [(1, 1), (0, 1)])                               # NCHW
    lhs = np.transpose(x, ["NCHW".index(c) for c in spec[0]])
    rhs = np.transpose(w, ["OIHW".index(c) for c in spec[1]])
    # strides follow the spatial letters in the kernel spec's order
    order = [c for c in spec[1] if c in "HW"]
    strides = tuple({"H": 2, "W": 1}[c] for c in order)
    pads = tuple({"H": (1, 1), "W": (0, 1)}[c] for c in order)
    got = lax.conv_general_dilated(lhs, rhs, strides, pads, dimension_numbers=spec)
    np.testing.assert_allclose(got, np.transpose(want, ["NCHW".index(c) for c in spec[2]]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", [
    dict(window_strides=(2, 1), padding="SAME"),
    dict(window_strides=(1, 2), padding=((1, 0), (2, -1)), lhs_dilation=(2, 1),
         rhs_dilation=(1, 2)),
    dict(window_strides=(1, 1), padding="VALID", feature_group_count=2),
])
def test_conv_derivatives_match_finite_differences(kw):
    x = RNG.standard_normal((2, 4, 5, 4))
    w = RNG.standard_normal((4, 4 // kw.get("feature_group_count", 1), 3, 2))
    check_grads(lambda a, b: lax.conv_general_dilated(a, b, **kw), (x, w), order=2)


def test_conv_transpose_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x, w = RNG.standard_normal((2, 5, 4, 3)), RNG.standard_normal((3, 2, 3, 4))
    for kw in (dict(strides=(2, 2), padding="SAME"), dict(strides=(2, 1), padding="VALID"),
               dict(strides=(2, 3), padding=((1, 2), (0, 1)), rhs_dilation=(1, 2))):
        want = np.asarray(jax.lax.conv_transpose(x, w, **kw))
        np.testing.assert_allclose(lax.conv_transpose(x, w, **kw), want, rtol=1e-12)
    w2 = RNG.standard_normal((3, 2, 4, 3))
    want = np.asarray(jax.lax.conv_transpose(x, w2, (2, 2), "SAME", transpose_kernel=True))
    np.testing.assert_allclose(lax.conv_transpose(x, w2, (2, 2), "SAME",
                                                  transpose_kernel=True), want, rtol=1e-12)


def test_conv_transpose_with_transposed_kernel_is_the_gradient():
    """conv_transpose(transpose_kernel=True) is conv_general_dilated's input gradient."""
    x, w = RNG.standard_normal((1, 6, 6, 2)), RNG.standard_normal((3, 3, 2, 5))
    dn = ("NHWC", "HWIO", "NHWC")
    y, pull = tf.vjp(lambda a: lax.conv_general_dilated(a, w, (2, 2), "SAME",
                                                        dimension_numbers=dn), x)
    ct = RNG.standard_normal(y.shape)
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn,
                             transpose_kernel=True)
    np.testing.assert_allclose(got, pull(ct)[0], rtol=1e-12, atol=1e-12)


def test_conv_vmaps_over_either_operand_and_both():
    x, w = RNG.standard_normal((3, 2, 2, 5, 5)), RNG.standard_normal((3, 4, 2, 3, 3))

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 2), "SAME", rhs_dilation=(2, 1))
    for in_axes, expect in (((0, 0), [f(x[i], w[i]) for i in range(3)]),
                            ((0, None), [f(x[i], w[0]) for i in range(3)]),
                            ((None, 0), [f(x[0], w[i]) for i in range(3)])):
        a = x if in_axes[0] == 0 else x[0]
        b = w if in_axes[1] == 0 else w[0]
        np.testing.assert_allclose(tf.vmap(f, in_axes=in_axes)(a, b), np.stack(expect),
                                   rtol=1e-12, atol=1e-12)
    # per-example gradients: vmap of grad goes through patches_transpose's batching
    g = tf.vmap(tf.grad(lambda a, b: tnp.sum(f(a, b) ** 2), argnums=(0, 1)))(x, w)
    for i in range(3):
        gi = tf.grad(lambda a, b: tnp.sum(f(a, b) ** 2), argnums=(0, 1))(x[i], w[i])
        np.testing.assert_allclose(g[0][i], gi[0], rtol=1e-12)
        np.testing.assert_allclose(g[1][i], gi[1], rtol=1e-12)


def test_conv_keeps_float32_and_jit_matches_eager():
    x = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)

    def loss(w, x):
        h = nn.max_pool(nn.relu(nn.conv(x, w, strides=1, padding="SAME")), (2, 2))
        return tnp.sum(h * h)
    eager = tf.value_and_grad(loss)(w, x)
    compiled = tf.jit(tf.value_and_grad(loss), tiered=False)(w, x)
    assert eager[1].dtype == compiled[1].dtype == np.float32
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-5)
    np.testing.assert_allclose(compiled[1], eager[1], rtol=1e-4, atol=1e-5)


def test_conv_errors_name_the_problem():
    x, w = np.ones((1, 4, 5, 5)), np.ones((2, 3, 3, 3))
    with pytest.raises(ShapeError, match="feature_group_count"):
        lax.conv_general_dilated(x, w, (1, 1), "SAME")
    with pytest.raises(DTypeError, match="one dtype"):
        lax.conv_general_dilated(x, w.astype(np.float32)[:, :1].repeat(4, 1), (1, 1), "SAME")
    with pytest.raises(ShapeError, match="lhs_dilation"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(ShapeError, match="padding"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3)), (1, 1), "FULL")
    with pytest.raises(ShapeError, match="'N'"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3)), (1, 1), "SAME",
                                 dimension_numbers=("XCHW", "OIHW", "NCHW"))
    with pytest.raises(TfNumbaError, match="batch_group_count"):
        lax.conv_general_dilated(x, np.ones((2, 4, 3, 3)), (1, 1), "SAME",
                                 batch_group_count=2)


# ---------------------------------------------------------------- reduce_window

WINDOW_CASES = [  # shape, window, strides, padding, base dilation, window dilation
    ((4, 6, 7), (1, 2, 2), (1, 2, 2), "VALID", None, None),
    ((4, 6, 7), (1, 3, 2), (1, 2, 1), "SAME", None, None),
    ((4, 6, 7), (2, 3, 2), (1, 2, 1), ((0, 1), (2, 0), (1, 1)), None, None),
    ((4, 5, 6), (2, 3, 2), (1, 2, 1), "VALID", (1, 2, 1), (1, 1, 2)),
    ((5, 7), (2, 2), (2, 2), "SAME", None, None),
]
REDUCERS = [(lax.max, max, -np.inf), (lax.min, min, np.inf), (lax.add, sum, 0.0),
            (lax.add, sum, 1.5)]


@pytest.mark.parametrize("case", WINDOW_CASES)
@pytest.mark.parametrize("computation,fn,init", REDUCERS)
def test_reduce_window_matches_loops(case, computation, fn, init):
    shape, window, strides, padding, base, wdil = case
    x = RNG.standard_normal(shape)
    if isinstance(padding, str):
        dilated = [(n - 1) * b + 1 for n, b in zip(shape, base or (1,) * len(shape))]
        span = [(k - 1) * r + 1 for k, r in zip(window, wdil or (1,) * len(shape))]
        pads = lax.padtype_to_pads(dilated, span, strides, padding)
    else:
        pads = padding
    want = loop_reduce_window(x, fn, init, window, strides, pads, base, wdil)
    got = lax.reduce_window(x, init, computation, window, strides, padding, base, wdil)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("case", WINDOW_CASES[:3] + WINDOW_CASES[4:])
def test_reduce_window_matches_jax(case):
    """(JAX has no max-pool VJP with window dilation: case 3 is checked against loops.)"""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    shape, window, strides, padding, base, wdil = case
    x = RNG.standard_normal(shape)
    for ours, theirs, init in ((lax.max, jax.lax.max, -np.inf), (lax.add, jax.lax.add, 0.0)):
        args = (window, strides, padding, base, wdil)
        # sums of O(1) values in another order: rounding is absolute, and a sum near zero
        # (which one depends on the shared generator's state, so on test order) has
        # no relative accuracy
        close = dict(rtol=1e-12, atol=1e-13)
        want = np.asarray(jax.lax.reduce_window(x, init, theirs, *args))
        np.testing.assert_allclose(lax.reduce_window(x, init, ours, *args), want, **close)
        ct = RNG.standard_normal(want.shape)      # no ties in random data: one gradient
        g = jax.vjp(lambda a: jax.lax.reduce_window(a, init, theirs, *args), x)[1](ct)[0]
        mine = tf.vjp(lambda a: lax.reduce_window(a, init, ours, *args), x)[1](ct)[0]
        np.testing.assert_allclose(mine, np.asarray(g), **close)


@pytest.mark.parametrize("case", [WINDOW_CASES[0], WINDOW_CASES[2], WINDOW_CASES[3]])
def test_reduce_window_derivatives_match_finite_differences(case):
    shape, window, strides, padding, base, wdil = case
    x = RNG.standard_normal(shape)
    for computation, init in ((lax.max, -np.inf), (lax.add, 0.0)):
        check_grads(lambda a: lax.reduce_window(a, init, computation, window, strides,
                                                padding, base, wdil), (x,), order=2)


def test_max_pool_shares_the_gradient_among_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.0]])
    g = tf.grad(lambda a: tnp.sum(lax.reduce_window(a, -np.inf, lax.max, (1, 2), (1, 1),
                                                    "VALID")))(x)
    # windows [1, 3], [3, 3], [3, 0]: the tied window gives each 3 one half
    np.testing.assert_allclose(g, [[0.0, 1.5, 1.5, 0.0]])


def test_reduce_window_vmaps():
    x = RNG.standard_normal((3, 5, 6))
    f = lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 3), (1, 2), "SAME")  # noqa: E731
    np.testing.assert_allclose(tf.vmap(f)(x), np.stack([f(a) for a in x]))


def test_reduce_window_folds_any_associative_computation():
    # logaddexp over windows (padding takes no part), against NumPy per window
    x = np.random.default_rng(7).standard_normal((5, 4))
    got = lax.reduce_window(x, -np.inf, tnp.logaddexp, (2, 3), (1, 1), "SAME")
    padded = np.pad(x, ((0, 1), (1, 1)), constant_values=-np.inf)
    want = np.array([[np.logaddexp.reduce(padded[i:i + 2, j:j + 3], axis=None)
                      for j in range(4)] for i in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = tf.grad(lambda a: tnp.sum(lax.reduce_window(a, -np.inf, tnp.logaddexp, (2, 3),
                                                    (1, 1), "SAME")))(x)
    check = tf.grad(lambda a: tnp.sum(tnp.log(lax.reduce_window(
        tnp.exp(a), 0.0, lax.add, (2, 3), (1, 1), "SAME"))))(x)
    np.testing.assert_allclose(g, check, rtol=1e-10)


# ---------------------------------------------------------------- tf.nn conveniences

def test_nn_pools_match_numpy():
    x = RNG.standard_normal((2, 6, 4, 3))
    blocks = x.reshape(2, 3, 2, 2, 2, 3)
    np.testing.assert_allclose(nn.max_pool(x, (2, 2)), blocks.max(axis=(2, 4)))
    np.testing.assert_allclose(nn.avg_pool(x, (2, 2)), blocks.mean(axis=(2, 4)))
    # overlapping, padded: count_include_pad=False divides by the real elements
    got = nn.avg_pool(x, (3, 3), strides=(1, 1), padding="SAME", count_include_pad=False)
    pad = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    ones = np.pad(np.ones_like(x), ((0, 0), (1, 1), (1, 1), (0, 0)))
    total = sum(pad[:, i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    count = sum(ones[:, i:i + 6, j:j + 4] for i in range(3) for j in range(3))
    np.testing.assert_allclose(got, total / count, rtol=1e-12)
    np.testing.assert_allclose(nn.avg_pool(x, (3, 3), (1, 1), "SAME"), total / 9, rtol=1e-12)


def test_nn_conv_is_channel_last_conv_general_dilated():
    x, w = RNG.standard_normal((2, 7, 6, 3)), RNG.standard_normal((3, 2, 3, 4))
    want = loop_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 1),
                     [(1, 1), (0, 1)]).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(nn.conv(x, w, strides=(2, 1), padding="SAME"), want,
                               rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- compiled patches

def loop_patches(x, window, strides, pads, lhs_dil, rhs_dil, fill):
    """im2col written out on the dilated, padded operand: (N, out..., K, C)."""
    xp = dilate_pad(x, pads, lhs_dil, 1, fill)
    out_sp = [(p - ((k - 1) * r + 1)) // s + 1
              for p, k, r, s in zip(xp.shape[1:-1], window, rhs_dil, strides)]
    out = np.empty((x.shape[0],) + tuple(out_sp) + (int(np.prod(window)), x.shape[-1]))
    for pos in itertools.product(*map(range, out_sp)):
        for k, off in enumerate(itertools.product(*map(range, window))):
            at = tuple(p * s + j * r for p, s, j, r in zip(pos, strides, off, rhs_dil))
            out[(slice(None),) + pos + (k,)] = xp[(slice(None),) + at]
    return out


PATCHES_CASES = [
    ((2, 5, 6, 3), (3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1)),
    ((2, 7, 6, 2), (2, 3), (2, 1), ((0, 1), (2, -1)), (2, 1), (1, 2)),
    ((1, 6, 5, 1), (2, 2), (2, 3), ((-1, 0), (1, 2)), (1, 2), (2, 1)),
    ((2, 4, 5, 1), (3, 3), (1, 1), ((2, 1), (1, 2)), (1, 1), (1, 1)),     # one channel, SAME+
    ((3, 9, 2), (3,), (2,), ((-1, 2),), (3,), (2,)),
    ((2, 4, 3), (1,), (1,), ((0, 0),), (1,), (1,)),
]


@pytest.mark.parametrize("shape, window, strides, pads, lhs_dil, rhs_dil", PATCHES_CASES)
def test_compiled_patches_match_loops_and_the_numpy_impl(shape, window, strides, pads,
                                                         lhs_dil, rhs_dil):
    from tf_numba.ops import windows
    x = RNG.standard_normal(shape)
    for fill in (0.0, -np.inf):
        f = tf.jit(lambda x: windows.patches(x, window, strides, pads, lhs_dil, rhs_dil,
                                             fill), tiered=False)
        got = f(x)
        assert not numpy_steps(f, x)
        np.testing.assert_array_equal(got, loop_patches(x, window, strides, pads, lhs_dil,
                                                        rhs_dil, fill))
        np.testing.assert_array_equal(got, windows.patches(x, window, strides, pads,
                                                           lhs_dil, rhs_dil, fill))


@pytest.mark.parametrize("shape, window, strides, pads, lhs_dil, rhs_dil", PATCHES_CASES)
def test_compiled_patches_transpose_is_the_adjoint_with_the_impl_bits(
        shape, window, strides, pads, lhs_dil, rhs_dil):
    from tf_numba.ops import windows
    x = RNG.standard_normal(shape)
    ct = RNG.standard_normal(loop_patches(x, window, strides, pads, lhs_dil, rhs_dil,
                                          0.0).shape)
    params = windows._as_params(window, strides, pads, lhs_dil, rhs_dil)
    f = tf.jit(lambda c: windows.patches_transpose_p.bind(c, in_shape=shape, **params),
               tiered=False)
    got = f(ct)
    assert not numpy_steps(f, ct)
    # <patches(x), ct> == <x, patches_transpose(ct)>, and the NumPy impl's very bits
    np.testing.assert_allclose(np.sum(got * x), np.sum(ct * loop_patches(
        x, window, strides, pads, lhs_dil, rhs_dil, 0.0)), rtol=1e-12)
    np.testing.assert_array_equal(got, windows.patches_transpose_p.impl(
        ct, in_shape=shape, **params))


def test_three_spatial_dims_run_the_numpy_patches_and_match():
    x = RNG.standard_normal((1, 2, 4, 3, 5, 4))[0]      # (N=2, 4, 3, 5, C=4)
    w = RNG.standard_normal((2, 2, 2, 4, 3))
    dn = ("NHWDC", "HWDIO", "NHWDC")
    f = tf.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 2, 1), "SAME",
                                                     dimension_numbers=dn), tiered=False)
    assert "patches" in numpy_steps(f, x, w)
    want = lax.conv_general_dilated(x, w, (1, 2, 1), "SAME", dimension_numbers=dn)
    np.testing.assert_allclose(f(x, w), want, rtol=1e-12)


def test_compiled_conv_gradients_match_finite_differences():
    x = RNG.standard_normal((2, 5, 6, 3))
    w = RNG.standard_normal((3, 2, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, 1)), (1, 2), (2, 1),
                                     dimension_numbers=dn)
        return tnp.sum(tnp.tanh(y))
    g = tf.jit(tf.grad(loss, argnums=(0, 1)), tiered=False)(x, w)
    for arg, grad in enumerate(g):
        base = [x, w]
        for idx in [(0, 1, 2, 0), (1, 4, 5, 2)] if arg == 0 else [(0, 1, 2, 3), (2, 0, 1, 1)]:
            plus, minus = [a.copy() for a in base], [a.copy() for a in base]
            plus[arg][idx] += 1e-6
            minus[arg][idx] -= 1e-6
            fd = (loss(*plus) - loss(*minus)) / 2e-6
            np.testing.assert_allclose(grad[idx], fd, rtol=1e-5, atol=1e-7)


def test_product_patches_transpose_is_col2im_of_the_product_and_differentiable():
    """The step a convolution's input gradient compiles to (``lowering/rewrites.py``):
    col2im of (N, out..., F) . (K, C, F), with derivatives in both operands."""
    from tf_numba.ops import windows
    g, w = RNG.standard_normal((2, 3, 2, 4)), RNG.standard_normal((6, 2, 4))
    frame = dict(window=(3, 2), strides=(2, 1), padding=((1, 1), (0, 1)),
                 lhs_dilation=(1, 1), rhs_dilation=(1, 1))

    def f(g, w):
        return windows.product_patches_transpose_p.bind(g, w, in_shape=(2, 5, 2, 2), **frame)
    want = windows.patches_transpose_p.bind(np.einsum("nijf,kcf->nijkc", g, w),
                                            in_shape=(2, 5, 2, 2), **frame)
    np.testing.assert_allclose(f(g, w), want, rtol=1e-13)
    check_grads(f, (g, w), order=1)


# ---------------------------------------------------------------- output shapes

SHAPE_CASES = [((2, 9, 8, 3), (3, 2, 3, 5), (2, 3), "SAME", ("NHWC", "HWIO", "NHWC")),
               ((2, 3, 9, 8), (5, 3, 3, 2), (1, 2), "VALID", ("NCHW", "OIHW", "NCHW")),
               ((2, 9, 3, 8), (3, 5, 2, 3), (2, 2), ((1, 2), (0, -1)),
                ("NHCW", "HOWI", "WNCH")),
               ((4, 7, 2), (3, 2, 6), (3,), "SAME", ("NHC", "HIO", "NHC"))]


@pytest.mark.parametrize("lhs, rhs, strides, padding, dn", SHAPE_CASES)
def test_conv_shape_tuples_are_the_shapes_the_convolutions_compute(lhs, rhs, strides,
                                                                   padding, dn):
    x, w = np.ones(lhs), np.ones(rhs)
    shape = lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dn)
    assert shape == lax.conv_general_dilated(x, w, strides, padding,
                                             dimension_numbers=dn).shape
    assert all(type(d) is int for d in shape)
    perms = lax.conv_general_permutations(dn)
    assert perms == tuple(lax.conv_dimension_numbers(lhs, rhs, dn))
    canonical = lax.conv_shape_tuple([lhs[a] for a in perms[0]], [rhs[a] for a in perms[1]],
                                     strides, padding)
    assert tuple(canonical[perms[2].index(i)] for i in range(len(lhs))) == shape
    if isinstance(padding, str):
        t_shape = lax.conv_transpose_shape_tuple(lhs, rhs, strides, padding, dn)
        assert t_shape == lax.conv_transpose(x, w, strides, padding,
                                             dimension_numbers=dn).shape


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 0), (2, 1), (0, 0))])
def test_reduce_window_shape_tuple_is_the_shape_reduce_window_computes(padding):
    x = np.ones((5, 8, 3))
    for base, wdil in [(None, None), ((1, 2, 1), (2, 1, 1))]:
        shape = lax.reduce_window_shape_tuple(x.shape, (2, 3, 1), (1, 2, 1), padding, base,
                                              wdil)
        assert shape == lax.reduce_window(x, 0.0, lax.add, (2, 3, 1), (1, 2, 1), padding,
                                          base, wdil).shape


def test_shape_tuples_equal_jax():
    jax = pytest.importorskip("jax")
    for lhs, rhs, strides, padding, dn in SHAPE_CASES:
        assert lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dn) == tuple(
            jax.lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dn))
        assert lax.conv_general_permutations(dn) == jax.lax.conv_general_permutations(dn)
        if isinstance(padding, str):
            assert lax.conv_transpose_shape_tuple(lhs, rhs, strides, padding, dn) == tuple(
                jax.lax.conv_transpose_shape_tuple(lhs, rhs, strides, padding, dn))
    pads = ((1, 0), (2, 1), (0, 0))
    assert lax.reduce_window_shape_tuple((5, 8, 3), (2, 3, 1), (1, 2, 1), pads, (1, 2, 1),
                                         (2, 1, 1)) == tuple(
        jax.lax.reduce_window_shape_tuple((5, 8, 3), (2, 3, 1), (1, 2, 1), pads, (1, 2, 1),
                                          (2, 1, 1)))
    placeholder = ((-1, 14, 14, 16), (1, 2, 2, 1), (1, 1, 1, 1), ((0, 0),) * 4)
    assert lax.reduce_window_shape_tuple(*placeholder) == tuple(
        jax.lax.reduce_window_shape_tuple(*placeholder)) == (0, 13, 13, 16)
    assert lax.conv_shape_tuple((2, 3, 9, 8), (5, 3, 3, 2), (2, 1), "SAME") == tuple(
        jax.lax.conv_shape_tuple((2, 3, 9, 8), (5, 3, 3, 2), (2, 1), "SAME"))


def test_lax_dot_and_dot_general_promote_and_take_jax_keywords():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=4).astype(np.float32)
    out = lax.dot(a, b, precision=lax.Precision.HIGHEST)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, a @ b.astype(np.float64), rtol=1e-14)
    x, y = RNG.normal(size=(5, 2, 3)), RNG.normal(size=(5, 3, 4))
    np.testing.assert_allclose(lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))), "highest"),
                               x @ y, rtol=1e-14)
    with pytest.raises(ShapeError, match="dot_general with dimension_numbers"):
        lax.dot(x, y)
    g = tf.grad(lambda m: tnp.sum(lax.dot(m, b.astype(np.float64)) ** 2))(a)
    np.testing.assert_allclose(g, 2 * np.outer(a @ b, b), rtol=1e-6)
