"""``tf.lax`` against ``jax.lax`` (x64): values and gradients of the elementwise, layout,
slicing, gather/scatter, reduction and product functions, with derivatives also against
finite differences, ``vmap`` against a loop and ``jit`` against eager for a representative
set."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.errors import DTypeError, ShapeError, TfNumbaError
from ad_checks import check_grads
from jit_checks import compiled

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _jax_x64():
    """JAX in float64, as tf_numba computes (conftest turns it back off after the test)."""
    jax.config.update("jax_enable_x64", True)


def close(got, want, rtol=1e-12, atol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def tree_close(got, want, **tol):
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        close(g, w, **tol)


def jax_grads(f_tf, f_jax, args, **tol):
    """The gradients of ``sum(f(*args))`` in every argument: tf's against JAX's."""
    argnums = tuple(range(len(args)))
    got = tf.grad(lambda *a: tnp.sum(f_tf(*a)), argnums)(*args)
    want = jax.grad(lambda *a: jnp.sum(f_jax(*a)), argnums)(*args)
    tree_close(got, want, **tol)


# ---------------------------------------------------------------- elementwise

def _uniform(lo, hi):
    return lambda shape: RNG.uniform(lo, hi, shape)


NORMAL = lambda shape: 2 * RNG.standard_normal(shape)  # noqa: E731
UNIT, POSITIVE = _uniform(-0.9, 0.9), _uniform(0.2, 3.0)
# name: (the domain its operands are drawn from, differentiable)
UNARY = {
    "abs": (NORMAL, True), "acos": (UNIT, True), "acosh": (_uniform(1.1, 3.0), True),
    "asin": (UNIT, True), "asinh": (NORMAL, True), "atan": (NORMAL, True),
    "atanh": (UNIT, True), "cbrt": (NORMAL, True), "ceil": (NORMAL, False),
    "cos": (NORMAL, True), "cosh": (NORMAL, True), "exp": (NORMAL, True),
    "exp2": (NORMAL, True), "expm1": (NORMAL, True), "floor": (NORMAL, False),
    "is_finite": (NORMAL, False), "log": (POSITIVE, True), "log1p": (POSITIVE, True),
    "logistic": (NORMAL, True), "neg": (NORMAL, True), "rsqrt": (POSITIVE, True),
    "sign": (NORMAL, False), "sin": (NORMAL, True), "sinh": (NORMAL, True),
    "sqrt": (POSITIVE, True), "tan": (UNIT, True), "tanh": (NORMAL, True),
    "erf": (NORMAL, True), "erfc": (NORMAL, True), "erf_inv": (UNIT, True),
    "lgamma": (POSITIVE, True), "digamma": (POSITIVE, True), "bessel_i0e": (NORMAL, True),
    "bessel_i1e": (NORMAL, True), "square": (NORMAL, True), "reciprocal": (POSITIVE, True),
    "round": (NORMAL, False), "conj": (NORMAL, False), "real": (None, False),
    "imag": (None, False),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_unary_matches_jax(name, dtype):
    domain, differentiable = UNARY[name]
    if domain is None:              # real and imag take complex operands
        x = (RNG.standard_normal(7) + 1j * RNG.standard_normal(7)).astype(
            np.complex128 if dtype == np.float64 else np.complex64)
    else:
        x = domain((7,)).astype(dtype)
    rtol = 1e-13 if dtype == np.float64 else 2e-6
    close(getattr(lax, name)(x), getattr(jlax, name)(x), rtol=rtol, atol=rtol)
    if differentiable and dtype == np.float64:
        jax_grads(getattr(lax, name), getattr(jlax, name), (x,), rtol=1e-11, atol=1e-12)


def test_round_away_from_zero_and_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, 3.7, -0.0])
    close(lax.round(x), jlax.round(x))
    close(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
          jlax.round(x, jlax.RoundingMethod.TO_NEAREST_EVEN))


# name: (domains of the operands, differentiable)
BINARY = {
    "add": ((NORMAL, NORMAL), True), "sub": ((NORMAL, NORMAL), True),
    "mul": ((NORMAL, NORMAL), True), "div": ((NORMAL, POSITIVE), True),
    "rem": ((NORMAL, POSITIVE), True), "pow": ((POSITIVE, NORMAL), True),
    "max": ((NORMAL, NORMAL), True), "min": ((NORMAL, NORMAL), True),
    "atan2": ((NORMAL, NORMAL), True), "nextafter": ((NORMAL, NORMAL), False),
    "complex": ((NORMAL, NORMAL), False), "eq": ((NORMAL, NORMAL), False),
    "ne": ((NORMAL, NORMAL), False), "lt": ((NORMAL, NORMAL), False),
    "le": ((NORMAL, NORMAL), False), "gt": ((NORMAL, NORMAL), False),
    "ge": ((NORMAL, NORMAL), False),
    "igamma": ((POSITIVE, POSITIVE), True), "igammac": ((POSITIVE, POSITIVE), True),
    "igamma_grad_a": ((POSITIVE, POSITIVE), False),
    "random_gamma_grad": ((POSITIVE, POSITIVE), False),
    "zeta": ((_uniform(1.5, 4.0), POSITIVE), False),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_jax(name):
    (da, db), differentiable = BINARY[name]
    x, y = da((6,)), db((6,))
    close(getattr(lax, name)(x, y), getattr(jlax, name)(x, y), rtol=1e-10, atol=1e-12)
    if differentiable:
        jax_grads(getattr(lax, name), getattr(jlax, name), (x, y), rtol=1e-9, atol=1e-12)


def test_special_functions_of_three_and_of_an_order_match_jax():
    a, b, x = POSITIVE((5,)), POSITIVE((5,)), RNG.uniform(0.05, 0.95, 5)
    close(lax.betainc(a, b, x), jlax.betainc(a, b, x), rtol=1e-11)
    m = np.array([0.0, 1.0, 2.0, 3.0, 1.0])
    y = POSITIVE((5,))
    close(lax.polygamma(m, y), jlax.polygamma(m, y), rtol=1e-11)
    # d/da of igamma is igamma_grad_a; JAX's grad of igamma in a says the same
    g = tf.grad(lambda a_: tnp.sum(lax.igamma(a_, y)))(a)
    close(g, lax.igamma_grad_a(a, y), rtol=1e-12)
    close(g, jax.grad(lambda a_: jnp.sum(jlax.igamma(a_, y)))(a), rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_arithmetic_and_bits_match_jax(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(-1000, 1000, 40).astype(dtype)
    y = RNG.integers(1, 50, 40).astype(dtype) * np.where(RNG.random(40) < 0.5, -1, 1).astype(dtype)
    for name in ("add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and",
                 "bitwise_or", "bitwise_xor", "eq", "lt"):
        close(getattr(lax, name)(x, y), getattr(jlax, name)(x, y))
    wide = RNG.integers(info.min, info.max, 200, dtype=dtype)
    counts = RNG.integers(-3, info.bits + 3, 200).astype(dtype)
    for name in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
        close(getattr(lax, name)(wide, counts), getattr(jlax, name)(wide, counts))
    close(lax.mulhi(wide, wide[::-1].copy()), jlax.mulhi(wide, wide[::-1].copy()))
    for name in ("population_count", "clz", "bitwise_not", "neg", "abs", "sign"):
        close(getattr(lax, name)(wide), getattr(jlax, name)(wide))
    for p in (0, 1, 2, 3, 7):
        close(lax.integer_pow(x, p), jlax.integer_pow(x, p))


def test_integer_pow_values_and_derivatives():
    x = NORMAL((5,))
    for p in (-3, -1, 0, 1, 2, 5):
        close(lax.integer_pow(x, p), jlax.integer_pow(x, p), rtol=1e-14)
        jax_grads(lambda v: lax.integer_pow(v, p), lambda v: jlax.integer_pow(v, p), (x,),
                  rtol=1e-12)
    with pytest.raises(DTypeError, match="negative power"):
        lax.integer_pow(np.arange(3), -1)


def test_lax_binary_ops_do_not_promote():
    with pytest.raises(DTypeError, match="one dtype"):
        lax.add(np.float32(1), np.float64(1))
    # Python scalars are weak (JAX's lax takes only arrays of the operand's dtype)
    close(lax.add(np.float32(1), 2), np.float32(3))
    close(lax.mul(np.int32(3), np.int32(4), out_dtype=np.int64),
          jlax.mul(np.int32(3), np.int32(4), out_dtype=np.int64))
    close(lax.pow(np.array([2.0, -2.0]), np.array([3, 3])),
          jlax.pow(np.array([2.0, -2.0]), np.array([3, 3])))
    close(lax.conj(np.float64(1.5)), jlax.conj(np.float64(1.5)))


def test_select_n_clamp_and_conversions_match_jax():
    cases = [NORMAL((4,)) for _ in range(3)]
    which = np.array([0, 2, 1, 2])
    close(lax.select_n(which, *cases), jlax.select_n(which, *cases))
    close(lax.select_n(which < 1, *cases[:2]), jlax.select_n(which < 1, *cases[:2]))
    close(lax.select_n(np.int32(1), *cases), jlax.select_n(np.int32(1), *cases))
    x = NORMAL((6,))
    close(lax.clamp(-0.5, x, 0.5), jlax.clamp(-0.5, x, 0.5))
    jax_grads(lambda v: lax.clamp(-0.5, v, 0.5), lambda v: jlax.clamp(-0.5, v, 0.5), (x,))
    close(lax.convert_element_type(x, np.int32), jlax.convert_element_type(x, np.int32))
    edges = np.array([np.nan, 1e20, -1e20, 2.7, -2.7, np.inf, 2.0 ** 31, -2.0 ** 31])
    for dt in (np.int32, np.int64):
        for v in (edges, edges.astype(np.float32)):
            close(lax.convert_element_type(v, dt),
                  jax.jit(lambda a: jlax.convert_element_type(a, dt))(v))
            close(compiled(lambda a: lax.convert_element_type(a, dt))(v),
                  lax.convert_element_type(v, dt))
    for old, new in ((np.float64, np.int64), (np.float64, np.int32), (np.float32, np.int32),
                     (np.int32, np.float32)):
        v = np.arange(1, 5).astype(old)
        v = v.reshape(2, 2) if np.dtype(new).itemsize > np.dtype(old).itemsize else v
        close(lax.bitcast_convert_type(v, new), jlax.bitcast_convert_type(v, new))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_precision_matches_jax(dtype):
    x = (RNG.standard_normal(500) * np.exp(RNG.uniform(-60, 60, 500))).astype(dtype)
    x[:3] = [np.nan, np.inf, -0.0]
    for exponent, mantissa in ((8, 7), (5, 10), (4, 3), (8, 23)):
        close(lax.reduce_precision(x, exponent, mantissa),
              jlax.reduce_precision(x, exponent, mantissa))


# ---------------------------------------------------------------- layout

LAYOUT = [
    ("broadcast", (np.arange(6.0).reshape(2, 3), (4,)), {}),
    ("broadcast_in_dim", (np.arange(3.0), (2, 3, 4), (1,)), {}),
    ("broadcast_to_rank", (np.arange(3.0), 3), {}),
    ("reshape", (np.arange(6.0).reshape(2, 3), (3, 2)), {"dimensions": (1, 0)}),
    ("squeeze", (np.zeros((1, 3, 1)), (0, 2)), {}),
    ("expand_dims", (np.arange(3.0), (0, 2)), {}),
    ("transpose", (np.arange(24.0).reshape(2, 3, 4), (2, 0, 1)), {}),
    ("rev", (np.arange(12.0).reshape(3, 4), (0, 1)), {}),
    ("pad", (np.arange(5.0), 9.0, [(2, -1, 2)]), {}),
    ("pad", (np.arange(6.0).reshape(2, 3), -1.0, [(-1, 2, 1), (1, 0, 0)]), {}),
    ("concatenate", ([np.ones((2, 3)), np.zeros((1, 3))], 0), {}),
    ("collapse", (np.zeros((2, 3, 4, 5)), 1, 3), {}),
    ("collapse", (np.zeros((2, 3, 4, 5)), 1), {}),
    ("tile", (np.arange(6.0).reshape(2, 3), (2, 3)), {}),
    ("iota", (np.int32, 5), {}),
    ("broadcasted_iota", (np.float64, (2, 4), 1), {}),
    ("full", ((2, 3), 1.5), {}),
    ("full", ((2,), 7, np.int32), {}),
    ("full_like", (np.zeros((2, 2), np.float32), 3), {}),
    ("full_like", (np.zeros((2, 2)), 3), {"dtype": np.int32, "shape": (4,)}),
    ("slice", (np.arange(20.0).reshape(4, 5), (1, 0), (4, 5), (2, 2)), {}),
    ("slice_in_dim", (np.arange(20.0).reshape(4, 5), -3, None), {"stride": 2, "axis": 1}),
    ("index_in_dim", (np.arange(20.0).reshape(4, 5), -1), {"axis": 0, "keepdims": False}),
    ("dynamic_slice", (np.arange(20.0).reshape(4, 5), (np.int32(3), np.int32(-2)), (2, 2)), {}),
    ("dynamic_update_slice", (np.zeros((4, 5)), np.ones((2, 2)), (np.int32(3), np.int32(1))),
     {}),
    ("dynamic_slice_in_dim", (np.arange(10.0), 7, 5), {}),
    ("dynamic_index_in_dim", (np.arange(12.0).reshape(3, 4), 5, 1), {"keepdims": False}),
    ("dynamic_update_index_in_dim", (np.zeros((3, 4)), np.ones(4), 1, 0), {}),
    ("dynamic_update_slice_in_dim", (np.zeros((3, 4)), np.ones((3, 2)), 3, 1), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYOUT, ids=[c[0] for c in LAYOUT])
def test_layout_matches_jax(name, args, kwargs):
    close(getattr(lax, name)(*args, **kwargs), getattr(jlax, name)(*args, **kwargs))


def test_split_stack_unstack_and_shape_helpers_match_jax():
    x = np.arange(12.0).reshape(3, 4)
    tree_close(lax.split(x, (1, 3), axis=1), jlax.split(x, (1, 3), axis=1))
    tree_close(lax.unstack(x, axis=1), jlax.unstack(x, axis=1))
    close(lax.stack([x, x + 1], axis=1), jlax.stack([x, x + 1], axis=1))
    close(lax.broadcast_like(np.arange(4.0), x), jlax.broadcast_like(np.arange(4.0), x))
    assert lax.broadcast_shapes((3, 1), (4,), ()) == jlax.broadcast_shapes((3, 1), (4,), ())
    close(lax.shape_as_value((2, 3)), jlax.shape_as_value((2, 3)))
    assert lax.dtype(1.0) == jlax.dtype(1.0) and lax.dtype(np.int32(1)) == np.int32
    assert lax.empty((2, 3), np.float32).shape == (2, 3)
    with pytest.raises(ShapeError, match="broadcast"):
        lax.broadcast_shapes((2,), (3,))


# ---------------------------------------------------------------- gather and scatter

GD, SD = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
# (operand shape, indices, JAX's dimension numbers as keyword arguments, slice sizes)
GATHERS = [
    ((5,), [[0], [2], [4], [-1], [7]], dict(offset_dims=(), collapsed_slice_dims=(0,),
                                            start_index_map=(0,)), (1,)),
    ((10,), [[0], [8], [9]], dict(offset_dims=(1,), collapsed_slice_dims=(),
                                  start_index_map=(0,)), (3,)),
    ((10, 5), [[0], [2], [9]], dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0,)), (1, 3)),
    ((10, 5), [[0, 2], [1, 0], [9, 4]], dict(offset_dims=(1,), collapsed_slice_dims=(0,),
                                             start_index_map=(0, 1)), (1, 3)),
    ((6, 5), [[[0, 2], [1, 0]], [[3, 3], [5, 1]]], dict(
        offset_dims=(2, 3), collapsed_slice_dims=(), start_index_map=(1, 0)), (2, 2)),
    ((2, 5), [[[0], [2]], [[1], [4]]], dict(
        offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1)),
    ((2, 3, 10), [[[0], [1]], [[2], [3]], [[4], [9]]], dict(
        offset_dims=(2,), collapsed_slice_dims=(), start_index_map=(2,),
        operand_batching_dims=(0, 1), start_indices_batching_dims=(1, 0)), (1, 1, 3)),
    ((3, 4), np.zeros((2, 0), np.int64), dict(offset_dims=(1, 2), collapsed_slice_dims=(),
                                              start_index_map=()), (2, 3)),
]


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
@pytest.mark.parametrize("case", range(len(GATHERS)))
def test_gather_matches_jax(case, mode):
    shape, indices, dn, sizes = GATHERS[case]
    x = RNG.standard_normal(shape)
    idx = np.asarray(indices, np.int32)
    got = lax.gather(x, idx, GD(**dn), sizes, mode=mode)
    want = jlax.gather(x, idx, jlax.GatherDimensionNumbers(**dn), sizes, mode=mode)
    close(got, want)
    # JAX's gradient of an out-of-bounds gather promised in bounds drops the clamped
    # windows ("gradients will not be correct"); ours is that of the clamped gather
    jax_mode = "clip" if mode is None else mode
    jax_grads(lambda v: lax.gather(v, idx, GD(**dn), sizes, mode=mode),
              lambda v: jlax.gather(v, idx, jlax.GatherDimensionNumbers(**dn), sizes,
                                    mode=jax_mode), (x,))


def test_gather_fills_integers_and_takes_a_fill_value():
    x = np.arange(5)
    dn = GD(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    idx = np.array([[0], [4]])
    close(lax.gather(x, idx, dn, (2,), mode="fill"),
          jlax.gather(x, idx, jlax.GatherDimensionNumbers(*dn), (2,), mode="fill"))
    close(lax.gather(x, idx, dn, (2,), mode="fill", fill_value=-7),
          jlax.gather(x, idx, jlax.GatherDimensionNumbers(*dn), (2,), mode="fill",
                      fill_value=-7))


# (operand shape, indices, dimension numbers, updates shape); the first two write no
# element twice (but the first does once clipped: -1 and 0)
SCATTERS = [
    ((5,), [[0], [2], [7], [-1]], dict(update_window_dims=(), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,)), (4,)),
    ((10, 5), [[0], [3], [8]], dict(update_window_dims=(1,), inserted_window_dims=(0,),
                                    scatter_dims_to_operand_dims=(0,)), (3, 3)),
    ((5,), [[0], [2], [2], [0], [4]], dict(update_window_dims=(), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,)), (5,)),
    ((6, 5), [[0, 1], [4, 3], [4, 3], [5, 0]], dict(
        update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1)),
     (4, 2, 2)),
    ((2, 5), [[[0], [2]], [[1], [1]]], dict(
        update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
        operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)), (2, 2)),
]
SCATTER_KINDS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
                 "scatter_max"]


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("kind", SCATTER_KINDS)
@pytest.mark.parametrize("case", range(len(SCATTERS)))
def test_scatter_matches_jax(case, kind, mode):
    shape, indices, dn, upd_shape = SCATTERS[case]
    unique = case == 1 or case == 0 and mode is None
    if kind == "scatter" and not unique:
        pytest.skip("duplicate indices: XLA keeps an unspecified one")
    x, upd = RNG.standard_normal(shape), RNG.standard_normal(upd_shape)
    idx = np.asarray(indices, np.int64)
    ours, theirs = getattr(lax, kind), getattr(jlax, kind)
    got = ours(x, idx, upd, SD(**dn), mode=mode)
    close(got, theirs(x, idx, upd, jlax.ScatterDimensionNumbers(**dn), mode=mode))
    if kind in ("scatter_add", "scatter_sub", "scatter") or unique:
        # JAX differentiates scatter_mul only with unique indices, and says so
        jax_grads(lambda a, u: ours(a, idx, u, SD(**dn), mode=mode),
                  lambda a, u: theirs(a, idx, u, jlax.ScatterDimensionNumbers(**dn), mode=mode,
                                      unique_indices=unique), (x, upd))


def test_scatter_apply_and_index_take_match_jax():
    x = np.arange(1.0, 6.0)
    dn = dict(update_window_dims=(), inserted_window_dims=(0,),
              scatter_dims_to_operand_dims=(0,))
    idx = np.array([[0], [0], [3], [9]])
    close(lax.scatter_apply(x, idx, lambda v: v * 2 + 1, SD(**dn), update_shape=(4,)),
          jlax.scatter_apply(x, idx, lambda v: v * 2 + 1, jlax.ScatterDimensionNumbers(**dn),
                             update_shape=(4,)))
    src = RNG.standard_normal((4, 3, 5))
    idxs = [np.array([0, -1, 2]), np.array([4, 1, 7])]
    close(lax.index_take(src, idxs, (0, 2)), jlax.index_take(src, idxs, (0, 2)))


# ---------------------------------------------------------------- reductions

def test_named_reductions_match_jax():
    x = NORMAL((3, 4, 5))
    for name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min"):
        for axes in ((0,), (1, 2), (0, 1, 2)):
            close(getattr(lax, name)(x, axes), getattr(jlax, name)(x, axes))
        jax_grads(lambda v: getattr(lax, name)(v, (1,)),
                  lambda v: getattr(jlax, name)(v, (1,)), (x,))
    ints = RNG.integers(0, 64, (3, 4))
    for name in ("reduce_and", "reduce_or", "reduce_xor"):
        close(getattr(lax, name)(ints, (0,)), getattr(jlax, name)(ints, (0,)))
        close(getattr(lax, name)(ints > 30, (1,)), getattr(jlax, name)(ints > 30, (1,)))
    for name in ("argmax", "argmin"):
        close(getattr(lax, name)(x, 1, np.int32), getattr(jlax, name)(x, 1, np.int32))


def test_reduce_with_a_general_computation_matches_jax():
    x, i = NORMAL((4, 7)), np.tile(np.arange(7), (4, 1))

    def argmin_pair(a, b):
        keep = a[0] <= b[0]
        return lax.select(keep, a[0], b[0]), lax.select(keep, a[1], b[1])

    def jax_argmin_pair(a, b):
        keep = a[0] <= b[0]
        return jlax.select(keep, a[0], b[0]), jlax.select(keep, a[1], b[1])
    tree_close(lax.reduce((x, i), (np.inf, 0), argmin_pair, (1,)),
               jlax.reduce((x, i), (np.inf, 0), jax_argmin_pair, (1,)))
    close(lax.reduce(x, 1.0, lax.add, (0,)), jlax.reduce(x, 1.0, jlax.add, (0,)))
    close(lax.reduce(x, 0.0, lambda a, b: a + b, (0, 1)),
          jlax.reduce(x, 0.0, lambda a, b: a + b, (0, 1)))
    # a non-commutative associative computation (2 x 2 matrix products of four scalars):
    # the factors combine in their order
    m = RNG.standard_normal((4, 7))

    def matmul(a, b):
        return (a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3])
    got = lax.reduce(tuple(m), (1.0, 0.0, 0.0, 1.0), matmul, (0,))
    want = np.linalg.multi_dot([m[:, k].reshape(2, 2) for k in range(7)])
    close(np.array(got), want.reshape(4), rtol=1e-12)
    jax_grads(lambda v: lax.reduce(v, -np.inf, lambda a, b: tnp.logaddexp(a, b), (1,)),
              lambda v: jlax.reduce(v, -np.inf, jnp.logaddexp, (1,)), (x,))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_ops_match_jax(name, reverse):
    x = NORMAL((4, 5))
    close(getattr(lax, name)(x, 1, reverse), getattr(jlax, name)(x, 1, reverse), rtol=1e-12)
    jax_grads(lambda v: getattr(lax, name)(v, 1, reverse),
              lambda v: getattr(jlax, name)(v, 1, reverse), (x,), rtol=1e-10)


def test_sort_and_top_k_match_jax():
    x = NORMAL((3, 6))
    x[0, 2] = x[0, 4]
    close(lax.sort(x), jlax.sort(x))
    close(lax.sort(x, dimension=0), jlax.sort(x, dimension=0))
    keys, vals = np.array([2, 1, 2, 0]), np.array([5.0, 6.0, 4.0, 1.0])
    tree_close(lax.sort((keys, vals), num_keys=2), jlax.sort((keys, vals), num_keys=2))
    tree_close(lax.sort_key_val(keys, vals), jlax.sort_key_val(keys, vals))
    tree_close(lax.top_k(x, 3), jlax.top_k(x, 3))
    tree_close(lax.top_k(x, 2, axis=0), jlax.top_k(x, 2, axis=0))
    tree_close(lax.top_k(np.array([3, 1, 3, 2]), 2), jlax.top_k(np.array([3, 1, 3, 2]), 2))
    tree_close(lax.approx_max_k(x, 2), jlax.top_k(x, 2))
    tree_close(lax.approx_min_k(x, 2),
               (np.sort(x, 1)[:, :2], np.argsort(x, 1, kind="stable")[:, :2].astype(np.int32)))
    jax_grads(lambda v: lax.top_k(v, 3)[0], lambda v: jlax.top_k(v, 3)[0], (x,))
    jax_grads(lambda v: lax.sort(v), lambda v: jlax.sort(v), (x,))


# ---------------------------------------------------------------- products

def test_products_match_jax():
    a, b = NORMAL((2, 3, 4)), NORMAL((2, 4, 5))
    dn = (((2,), (1,)), ((0,), (0,)))
    close(lax.dot_general(a, b, dn, precision=lax.Precision.HIGHEST),
          jlax.dot_general(a, b, dn, precision=jlax.Precision.HIGHEST))
    close(lax.batch_matmul(a, b), jlax.batch_matmul(a, b))
    close(lax.dot(a[0], b[0]), jlax.dot(a[0], b[0]))
    close(lax.dot(a, b, dimension_numbers=dn), jlax.dot(a, b, dimension_numbers=dn))
    jax_grads(lambda u, v: lax.dot_general(u, v, dn), lambda u, v: jlax.dot_general(u, v, dn),
              (a, b))
    close(lax.dot(a[0], b[0], precision=lax.DotAlgorithmPreset.F64_F64_F64),
          jlax.dot(a[0], b[0]))


def test_ragged_products_match_jax():
    lhs, rhs = NORMAL((7, 3)), NORMAL((3, 3, 4))
    sizes = np.array([2, 0, 4], np.int32)          # the last row is in no group
    close(lax.ragged_dot(lhs, rhs, sizes), jlax.ragged_dot(lhs, rhs, sizes))
    jax_grads(lambda u, v: lax.ragged_dot(u, v, sizes),
              lambda u, v: jlax.ragged_dot(u, v, sizes), (lhs, rhs))
    # a ragged contracting dim: one product per group
    a, b = NORMAL((4, 7)), NORMAL((7, 5))
    dn = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
    jdn = jlax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
    sizes = np.array([3, 4], np.int32)
    close(lax.ragged_dot_general(a, b, sizes, dn), jlax.ragged_dot_general(a, b, sizes, jdn))


# ---------------------------------------------------------------- transforms

def _program(x, idx):
    """A bit of everything: elementwise, layout, a gather, a scatter, a reduction."""
    dn = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    rows = lax.gather(x, idx, dn, (1, 3), mode="clip")
    y = lax.logistic(rows) * lax.integer_pow(rows, 2) + lax.rsqrt(lax.exp(rows))
    y = lax.pad(y, 0.5, [(1, 0, 1), (0, 1, 0)])
    sd = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    x = lax.scatter_add(x, idx, rows * 2.0, sd)
    return lax.reduce_sum(lax.cumsum(y, 1), (0,)) + lax.reduce_sum(lax.reduce_max(x, (0,)), (0,))


def test_composition_differentiates_vmaps_and_compiles():
    x = NORMAL((5, 3))
    idx = np.array([[4], [0], [2]])
    check_grads(lambda v: _program(v, idx), (x,), order=2)
    xs = NORMAL((3, 5, 3))
    close(tf.vmap(lambda v: _program(v, idx))(xs), np.stack([_program(v, idx) for v in xs]))
    close(compiled(_program)(x, idx), _program(x, idx), rtol=1e-13)


def test_gathers_and_scatters_vmap_over_indices_and_compile():
    dn = GD(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    sd = SD(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    xs = NORMAL((4, 6, 3))
    idx = RNG.integers(-2, 8, (4, 5, 1))
    upd = NORMAL((4, 5, 3))

    def f(x, i, u):
        got = lax.gather(x, i, dn, (1, 3), mode="fill", fill_value=0.0)
        return (lax.scatter_add(x, i, u * got, sd) + lax.scatter_max(x, i, u, sd)
                + lax.scatter(x, i, u, sd, mode="clip"))
    loop = np.stack([f(*a) for a in zip(xs, idx, upd)])
    close(tf.vmap(f)(xs, idx, upd), loop)
    close(compiled(tf.vmap(f))(xs, idx, upd), loop, rtol=1e-13)
    close(tf.vmap(f, (0, None, 0))(xs, idx[0], upd), np.stack([f(x, idx[0], u)
                                                                for x, u in zip(xs, upd)]))


def test_scatter_min_max_with_duplicates_differentiate():
    sd = SD(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    idx = np.array([[0], [2], [2], [0], [4], [2]])
    x, upd = NORMAL((5,)), NORMAL((6,))
    for kind in (lax.scatter_max, lax.scatter_min):
        check_grads(lambda a, u: kind(a, idx, u, sd), (x, upd), order=2)


def test_bits_and_integer_ops_compile_and_vmap():
    x = RNG.integers(-1000, 1000, (3, 8)).astype(np.int32)

    def f(v, ops=lax):
        n = [np.int32(k) for k in (1, 2, 3, 5, 7)]
        s = ops.bitwise_xor(ops.shift_left(v, n[2]), ops.shift_right_arithmetic(v, n[1]))
        s = s + ops.shift_right_logical(v, n[0]) + ops.population_count(v) + ops.clz(v)
        return ops.div(s, n[4]) + ops.rem(v, n[3])
    close(f(x), f(x, jlax))
    close(compiled(f)(x), f(x))
    close(tf.vmap(f)(x), np.stack([f(v) for v in x]))


def test_errors_name_the_op():
    with pytest.raises(ShapeError, match="offset_dims"):
        lax.gather(np.ones(5), np.array([[0]]), GD((0, 1), (), (0,)), (1,))
    with pytest.raises(TfNumbaError, match="gather/scatter mode"):
        lax.scatter(np.ones(3), np.array([[0]]), np.ones(1), SD((), (0,), (0,)), mode="wrap")
    with pytest.raises(ShapeError, match="top_k"):
        lax.top_k(np.ones(3), 4)



# ---------------------------------------------------------------- control, fft, convolutions

def test_cond_and_switch_take_jax_older_operand_keyword():
    close(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=np.float64(1.0)),
          jlax.cond(True, lambda x: x + 1, lambda x: x - 1, operand=np.float64(1.0)))
    close(lax.switch(1, [lambda x: x, lambda x: 2 * x], operand=np.float64(3.0)), np.float64(6.0))
    close(lax.fori_loop(0, 3, lambda i, x: x * 2.0, 1.0, unroll=2), np.float64(8.0))
    close(lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3.0), unroll=2)[1],
          jlax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3.0), unroll=2)[1])


def _cg(matvec, b, steps=20):
    """Conjugate gradients, as a user would write a solver for custom_linear_solve."""
    def body(i, state):
        x, r, p = state
        ap = matvec(p)
        alpha = tnp.sum(r * r) / tnp.sum(p * ap)
        x, r_new = x + alpha * p, r - alpha * ap
        return x, r_new, r_new + tnp.sum(r_new * r_new) / tnp.sum(r * r) * p
    return lax.fori_loop(0, steps, body, (b * 0.0, b, b))[0]


def test_custom_linear_solve_differentiates_implicitly_as_jax():
    m = RNG.standard_normal((4, 4))
    a0 = m @ m.T + 4 * np.eye(4)
    b0 = RNG.standard_normal(4)

    def loss(a, b, ops, solve):
        x = ops.custom_linear_solve(lambda v: a @ v, b, solve, symmetric=True)
        return (x ** 2).sum()
    ours = tf.grad(lambda a, b: loss(a, b, lax, lambda mv, r: _cg(mv, r)), (0, 1))(a0, b0)
    want = jax.grad(lambda a, b: loss(a, b, jlax, lambda mv, r: jnp.linalg.solve(a0, r)),
                    (0, 1))(a0, b0)
    tree_close(ours, want, rtol=1e-8, atol=1e-10)
    close(lax.custom_linear_solve(lambda v: a0 @ v, b0, lambda mv, r: _cg(mv, r),
                                  symmetric=True), np.linalg.solve(a0, b0), rtol=1e-10)
    # a solver closing over a value being differentiated, and vmap over right-hand sides
    g = tf.grad(lambda a: tnp.sum(lax.custom_linear_solve(
        lambda v: a @ v, b0, lambda mv, r: tnp.linalg.solve(a, r), symmetric=True)))(a0)
    close(g, jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, b0)))(a0), rtol=1e-10)
    bs = RNG.standard_normal((3, 4))
    close(tf.vmap(lambda r: lax.custom_linear_solve(
        lambda v: a0 @ v, r, lambda mv, q: _cg(mv, q), symmetric=True))(bs),
        np.linalg.solve(a0, bs.T).T, rtol=1e-9)


def test_custom_root_differentiates_implicitly_as_jax():
    def newton(f, x0):
        return lax.fori_loop(0, 40, lambda i, x: x - f(x) / (3 * x * x), x0)

    def cube_root(c, ops, solve):
        return ops.custom_root(lambda x: x ** 3 - c, 1.0, solve, lambda g, y: y / g(1.0))
    c = 5.0
    close(cube_root(c, lax, newton), np.cbrt(c))
    want = jax.grad(lambda v: cube_root(v, jlax, lambda f, x0: jnp.cbrt(v)))(c)
    close(tf.grad(lambda v: cube_root(v, lax, newton))(c), want, rtol=1e-12)
    close(tf.jit(tf.grad(lambda v: cube_root(v, lax, newton)))(c), want, rtol=1e-12)
    close(tf.vmap(tf.grad(lambda v: cube_root(v, lax, newton)))(np.array([2.0, 5.0])),
          np.cbrt(np.array([2.0, 5.0])) ** -2 / 3, rtol=1e-12)


def test_fft_kinds_match_jax():
    x = RNG.standard_normal((3, 8))
    z = x + 1j * RNG.standard_normal((3, 8))
    close(lax.fft(z, lax.FftType.FFT, (8,)), jlax.fft(z, jlax.FftType.FFT, (8,)))
    close(lax.fft(z, "ifft", (3, 8)), jlax.fft(z, "ifft", (3, 8)))
    half = lax.fft(x, lax.FftType.RFFT, (8,))
    close(half, jlax.fft(x, jlax.FftType.RFFT, (8,)))
    close(lax.fft(half, lax.FftType.IRFFT, (8,)), jlax.fft(np.asarray(half),
                                                          jlax.FftType.IRFFT, (8,)))
    jax_grads(lambda v: lax.real(lax.fft(v, lax.FftType.RFFT, (8,))),
              lambda v: jlax.real(jlax.fft(v, jlax.FftType.RFFT, (8,))), (x,))


def test_convolution_variants_match_jax():
    x, w = RNG.standard_normal((4, 3, 7, 6)), RNG.standard_normal((6, 3, 2, 2))
    for dn in (None, ("NHWC", "HWIO", "NHWC")):
        xx = x if dn is None else x.transpose(0, 2, 3, 1)
        ww = w if dn is None else w.transpose(2, 3, 1, 0)
        kw = dict(dimension_numbers=dn, batch_group_count=2)
        close(lax.conv_general_dilated(xx, ww, (1, 1), "SAME", **kw),
              jlax.conv_general_dilated(xx, ww, (1, 1), "SAME", **kw))
        kw = dict(dimension_numbers=dn)
        close(lax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME", **kw),
              jlax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME", **kw))
    jax_grads(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "VALID", batch_group_count=2),
              lambda a, b: jlax.conv_general_dilated(a, b, (1, 1), "VALID", batch_group_count=2),
              (x, w))
    local_w = RNG.standard_normal((5, 3 * 6, 7, 3))
    close(lax.conv_general_dilated_local(x, local_w, (1, 2), "SAME", (2, 3)),
          jlax.conv_general_dilated_local(x, local_w, (1, 2), "SAME", (2, 3)))
    args = (x, w[:, :, :2], (1, 1), ((1, 0), (0, 1)), (2, 1), (1, 2))
    close(lax.conv_with_general_padding(*args), jlax.conv_with_general_padding(*args))


def test_compiler_hints_are_identities():
    x = NORMAL((3,))
    kept = lax.optimization_barrier((x, 1))
    assert kept[0] is x and kept[1] == 1
    assert lax.with_sharding_constraint(x, None) is x
    tangent = lax.composite(lambda v: lax.sin(v) / lax.cos(v), "my.tangent")
    close(tangent(x), np.tan(x), rtol=1e-14)
    close(tf.grad(lambda v: tnp.sum(tangent(v)))(x), 1 / np.cos(x) ** 2, rtol=1e-12)
    close(lax.platform_dependent(x, cpu=lambda v: v * 2, default=lambda v: v), 2 * x)
    close(lax.platform_dependent(x, tpu=lambda v: v * 2, default=lambda v: -v), -x)
    close(tf.jit(lambda v: lax.optimization_barrier(v) + lax.stage(1.0))(x), x + 1)
    assert lax.dce_sink(x) is None
    assert isinstance(lax.after_all(lax.create_token(), lax.create_token()), type(
        lax.create_token()))


def test_reduce_window_of_a_pytree_matches_jax():
    x = NORMAL((6, 5))
    i = np.arange(30.0).reshape(6, 5)

    def pick(ops):
        def larger(a, b):
            keep = ops.ge(a[0], b[0])
            return ops.select(keep, a[0], b[0]), ops.select(keep, a[1], b[1])
        return larger
    got = lax.reduce_window((x, i), (-np.inf, -1.0), pick(lax), (2, 2), (2, 1), "SAME")
    want = jlax.reduce_window((x, i), (-np.inf, -1.0), pick(jlax), (2, 2), (2, 1), "SAME")
    tree_close(got, want)


def test_dynamic_slices_take_an_index_array_and_vmap_over_it():
    x = NORMAL((5, 6))
    starts = np.array([[4, -1], [0, 2], [-7, 9]], np.int32)
    for s in starts:
        close(lax.dynamic_slice(x, s, (2, 3)), jlax.dynamic_slice(x, s, (2, 3)))
    close(tf.vmap(lambda s: lax.dynamic_slice(x, s, (2, 3)))(starts),
          jax.vmap(lambda s: jlax.dynamic_slice(x, s, (2, 3)))(starts))
    upd = NORMAL((3, 2, 3))
    close(tf.vmap(lambda s, u: lax.dynamic_update_slice(x, u, s))(starts, upd),
          jax.vmap(lambda s, u: jlax.dynamic_update_slice(x, u, s))(starts, upd))
    jax_grads(lambda v: lax.dynamic_slice(v, starts[0], (2, 3)),
              lambda v: jlax.dynamic_slice(v, starts[0], (2, 3)), (x,))
