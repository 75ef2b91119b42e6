"""Derivatives of the tf_numba.numpy functions against finite differences (JVP and VJP),
to second order; each case runs once the functions it uses exist."""
import numpy as np
import pytest

import tf_numba as tf
from tf_numba.core.trace import Tracer

from ad_checks import check_grads

try:
    import tf_numba.numpy as tnp
except ImportError:     # the namespace has not landed yet
    tnp = None


def arr(*shape, lo=-1.0, hi=1.0, seed=0):
    return np.random.default_rng(seed + 7 * len(shape)).uniform(lo, hi, shape)


def distinct(*shape, seed=0):
    """Values at least 0.05 apart (no ties for max/min/sort), in random order."""
    n = int(np.prod(shape))
    values = np.linspace(-1.0, 1.0, n) + np.random.default_rng(seed).uniform(0, 0.01, n)
    return np.random.default_rng(seed + 1).permutation(values).reshape(shape)


def cplx(*shape, seed=0):
    return arr(*shape, seed=seed) + 1j * arr(*shape, seed=seed + 100)


# (id, function of x..., arguments, tnp names it needs; "*", "@", "[]" and ".T" stand for
# the arithmetic operators, matmul, indexing and .T of traced values)
CASES = [
    # reductions
    ("sum", lambda x: tnp.sum(x), (arr(2, 3),), ["sum"]),
    ("sum_axis0", lambda x: tnp.sum(x, axis=0), (arr(2, 3),), ["sum"]),
    ("sum_axes_keepdims", lambda x: tnp.sum(x, axis=(0, 2), keepdims=True), (arr(2, 3, 2),),
     ["sum"]),
    ("mean", lambda x: tnp.mean(x, axis=1), (arr(2, 3),), ["mean"]),
    ("var", lambda x: tnp.var(x, axis=0), (arr(3, 2),), ["var"]),
    ("var_ddof", lambda x: tnp.var(x, ddof=1), (arr(4),), ["var"]),
    ("std", lambda x: tnp.std(x, axis=1), (arr(2, 4),), ["std"]),
    ("prod", lambda x: tnp.prod(x, axis=1), (arr(2, 3, lo=0.5, hi=1.5),), ["prod"]),
    ("prod_with_a_zero", lambda x: tnp.prod(x), (np.array([0.0, 0.7, -1.2, 0.4]),), ["prod"]),
    ("prod_two_zeros", lambda x: tnp.prod(x), (np.array([0.0, 0.7, 0.0, 0.4]),), ["prod"]),
    ("max", lambda x: tnp.max(x, axis=0), (distinct(3, 2),), ["max"]),
    ("min", lambda x: tnp.min(x), (distinct(2, 3),), ["min"]),
    ("amax_keepdims", lambda x: tnp.amax(x, axis=1, keepdims=True), (distinct(2, 3),),
     ["amax"]),
    ("cumsum", lambda x: tnp.cumsum(x, axis=1), (arr(2, 3),), ["cumsum"]),
    ("cumsum_flat", lambda x: tnp.cumsum(x), (arr(2, 3),), ["cumsum"]),
    ("cumprod", lambda x: tnp.cumprod(x, axis=0), (arr(3, 2, lo=0.5, hi=1.5),), ["cumprod"]),
    ("cumprod_with_a_zero", lambda x: tnp.cumprod(x), (np.array([0.6, 0.0, -1.1, 0.8]),),
     ["cumprod"]),
    ("average_weights", lambda x: tnp.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0])),
     (arr(2, 3),), ["average"]),
    ("ptp", lambda x: tnp.ptp(x, axis=0), (distinct(3, 2),), ["ptp"]),
    ("median_odd", lambda x: tnp.median(x), (distinct(5),), ["median"]),
    ("median_even_axis", lambda x: tnp.median(x, axis=1), (distinct(2, 4),), ["median"]),
    ("quantile", lambda x: tnp.quantile(x, 0.3), (distinct(6),), ["quantile"]),
    ("percentile_axis", lambda x: tnp.percentile(x, np.array([10.0, 75.0]), axis=0),
     (distinct(5, 2),), ["percentile"]),
    ("nansum_with_nan", lambda x: tnp.nansum(x, axis=0), (np.array([[0.3, np.nan],
                                                                     [-0.8, 0.5]]),),
     ["nansum"]),
    ("nanmean_with_nan", lambda x: tnp.nanmean(x), (np.array([0.3, np.nan, -0.8, 0.5]),),
     ["nanmean"]),
    # a NaN must not reach a masked-out product: 0 * nan would poison the whole gradient
    ("nanvar_with_nan", lambda x: tnp.nanvar(x), (np.array([0.3, np.nan, -0.8, 0.5]),),
     ["nanvar"]),
    ("nanstd_with_nan", lambda x: tnp.nanstd(x, axis=0),
     (np.array([[0.3, np.nan], [-0.8, 0.5], [0.1, 0.2]]),), ["nanstd"]),
    ("nanprod_with_nan", lambda x: tnp.nanprod(x), (np.array([0.3, np.nan, -0.8, 0.5]),),
     ["nanprod"]),
    ("nancumprod_with_nan", lambda x: tnp.nancumprod(x), (np.array([0.3, np.nan, -0.8]),),
     ["nancumprod"]),
    ("nanmin_nanmedian", lambda x: tnp.nanmin(x) * tnp.nanmedian(x),
     (np.array([0.3, np.nan, -0.8, 0.5]),), ["nanmin", "nanmedian", "*"]),
    ("mean_where", lambda x: tnp.mean(x, axis=1, where=np.array([[1, 0, 1], [1, 1, 0]], bool)),
     (arr(2, 3),), ["mean"]),
    ("nanmax_with_nan", lambda x: tnp.nanmax(x), (np.array([0.3, np.nan, -0.8, 0.5]),),
     ["nanmax"]),
    ("nancumsum_with_nan", lambda x: tnp.nancumsum(x), (np.array([0.3, np.nan, -0.8]),),
     ["nancumsum"]),
    ("cumulative_sum", lambda x: tnp.cumulative_sum(x, axis=0, include_initial=True),
     (arr(3, 2),), ["cumulative_sum"]),
    ("logaddexp2", lambda x, y: tnp.logaddexp2(x, y), (arr(3), arr(3, seed=1)),
     ["logaddexp2"]),
    # contraction
    ("matmul", lambda a, b: tnp.matmul(a, b), (arr(2, 3), arr(3, 4, seed=1)), ["matmul"]),
    ("matmul_batched", lambda a, b: tnp.matmul(a, b), (arr(2, 2, 3), arr(3, 2, seed=1)),
     ["matmul"]),
    ("matmul_broadcast_batch", lambda a, b: tnp.matmul(a, b),
     (arr(1, 2, 3), arr(2, 3, 2, seed=1)), ["matmul"]),
    ("matmul_vector", lambda a, b: tnp.matmul(a, b), (arr(3), arr(3, 2, seed=1)), ["matmul"]),
    ("matmul_operator", lambda a, b: a @ b, (arr(2, 3), arr(3, seed=1)), ["@"]),
    ("dot", lambda a, b: tnp.dot(a, b), (arr(3), arr(3, seed=1)), ["dot"]),
    ("dot_nd", lambda a, b: tnp.dot(a, b), (arr(2, 3), arr(2, 3, 2, seed=1)), ["dot"]),
    ("tensordot", lambda a, b: tnp.tensordot(a, b, axes=([1, 2], [0, 1])),
     (arr(2, 3, 2), arr(3, 2, 2, seed=1)), ["tensordot"]),
    ("tensordot_int", lambda a, b: tnp.tensordot(a, b, axes=1), (arr(2, 3), arr(3, 2, seed=1)),
     ["tensordot"]),
    ("outer", lambda a, b: tnp.outer(a, b), (arr(3), arr(2, seed=1)), ["outer"]),
    ("inner", lambda a, b: tnp.inner(a, b), (arr(2, 3), arr(2, 3, seed=1)), ["inner"]),
    ("vdot_complex", lambda a, b: tnp.vdot(a, b), (cplx(3), cplx(3, seed=1)), ["vdot"]),
    ("matmul_complex", lambda a, b: tnp.matmul(a, b), (cplx(2, 3), cplx(3, 2, seed=1)),
     ["matmul"]),
    ("einsum", lambda a, b: tnp.einsum("ij,jk->ik", a, b), (arr(2, 3), arr(3, 2, seed=1)),
     ["einsum"]),
    ("matvec", lambda a, b: tnp.matvec(a, b), (arr(2, 3), arr(3, seed=1)), ["matvec"]),
    ("vecmat", lambda a, b: tnp.vecmat(a, b), (arr(3), arr(3, 2, seed=1)), ["vecmat"]),
    ("vecdot_complex", lambda a, b: tnp.vecdot(a, b), (cplx(2, 3), cplx(3, seed=1)),
     ["vecdot"]),
    ("cross", lambda a, b: tnp.cross(a, b), (arr(2, 3), arr(2, 3, seed=1)), ["cross"]),
    ("kron", lambda a, b: tnp.kron(a, b), (arr(2, 2), arr(2, 3, seed=1)), ["kron"]),
    # layout
    ("reshape", lambda x: tnp.reshape(x, (3, 2)), (arr(2, 3),), ["reshape"]),
    ("reshape_minus_one", lambda x: tnp.reshape(x, (-1,)), (arr(2, 3),), ["reshape"]),
    ("ravel", lambda x: tnp.ravel(x), (arr(2, 3),), ["ravel"]),
    ("transpose", lambda x: tnp.transpose(x, (2, 0, 1)), (arr(2, 3, 2),), ["transpose"]),
    ("T", lambda x: x.T, (arr(2, 3),), [".T"]),
    ("swapaxes", lambda x: tnp.swapaxes(x, 0, 2), (arr(2, 3, 2),), ["swapaxes"]),
    ("moveaxis", lambda x: tnp.moveaxis(x, 0, -1), (arr(2, 3, 2),), ["moveaxis"]),
    ("expand_squeeze", lambda x: tnp.squeeze(tnp.expand_dims(x, 1) * 2.0, 1), (arr(2, 3),),
     ["squeeze", "expand_dims", "*"]),
    ("broadcast_to", lambda x: tnp.broadcast_to(x, (2, 3)), (arr(3),), ["broadcast_to"]),
    ("broadcasting_add", lambda x, y: tnp.add(x, y), (arr(3, 1), arr(1, 4, seed=1)), ["add"]),
    ("broadcasting_mul_scalar", lambda x, y: tnp.multiply(x, y), (arr(2, 3), np.float64(0.7)),
     ["multiply"]),
    ("concatenate", lambda x, y: tnp.concatenate([x, y, x], axis=1),
     (arr(2, 3), arr(2, 1, seed=1)), ["concatenate"]),
    ("stack", lambda x, y: tnp.stack([x, y], axis=1), (arr(2, 3), arr(2, 3, seed=1)),
     ["stack"]),
    ("split", lambda x: tnp.split(x, [1, 3], axis=1), (arr(2, 4),), ["split"]),
    ("split_sections", lambda x: tnp.split(x, 2), (arr(4, 2),), ["split"]),
    ("flip", lambda x: tnp.flip(x, 1), (arr(2, 3),), ["flip"]),
    ("roll", lambda x: tnp.roll(x, 1, axis=0), (arr(3, 2),), ["roll"]),
    ("tile", lambda x: tnp.tile(x, (2, 1)), (arr(2, 3),), ["tile"]),
    ("repeat", lambda x: tnp.repeat(x, 2, axis=0), (arr(2, 3),), ["repeat"]),
    ("pad", lambda x: tnp.pad(x, ((1, 0), (0, 2))), (arr(2, 3),), ["pad"]),
    ("diagonal", lambda x: tnp.diagonal(x), (arr(3, 3),), ["diagonal"]),
    ("trace", lambda x: tnp.trace(x), (arr(3, 3),), ["trace"]),
    ("tril", lambda x: tnp.tril(x), (arr(3, 3),), ["tril"]),
    ("triu", lambda x: tnp.triu(x, 1), (arr(3, 3),), ["triu"]),
    ("hstack_vstack", lambda x, y: tnp.vstack([tnp.hstack([x, y]), tnp.hstack([y, x])]),
     (arr(2, 2), arr(2, 2, seed=1)), ["hstack", "vstack"]),
    ("block", lambda x, y: tnp.block([[x, y], [y, x]]), (arr(2, 2), arr(2, 2, seed=1)),
     ["block"]),
    ("append", lambda x, y: tnp.append(x, y), (arr(2), arr(3, seed=1)), ["append"]),
    ("rot90", lambda x: tnp.rot90(x), (arr(2, 3),), ["rot90"]),
    ("diag_flat", lambda x: tnp.diagflat(x), (arr(3),), ["diagflat"]),
    ("diag_of_matrix", lambda x: tnp.diag(x, 1), (arr(3, 3),), ["diag"]),
    ("delete", lambda x: tnp.delete(x, 1, axis=1), (arr(2, 3),), ["delete"]),
    ("unstack", lambda x: tnp.unstack(x, axis=1), (arr(2, 3),), ["unstack"]),
    ("array_split", lambda x: tnp.array_split(x, 2), (arr(5),), ["array_split"]),
    ("put_along_axis", lambda x, v: tnp.put_along_axis(x, np.array([[1], [0]]), v, axis=1),
     (arr(2, 3), arr(2, 1, seed=1)), ["put_along_axis"]),
    ("compress", lambda x: tnp.compress(np.array([True, False, True]), x, axis=1),
     (arr(2, 3),), ["compress"]),
    ("choose", lambda a, b: tnp.choose(np.array([0, 1, 1]), [a, b]), (arr(3), arr(3, seed=1)),
     ["choose"]),
    ("select", lambda a, b: tnp.select([np.array([True, False, False]),
                                        np.array([False, True, False])], [a, b], 0.5),
     (arr(3), arr(3, seed=1)), ["select"]),
    ("nan_to_num", lambda x: tnp.nan_to_num(x), (np.array([0.3, np.nan, -0.8]),),
     ["nan_to_num"]),
    ("fmax_fmin", lambda x, y: tnp.fmax(x, y) + tnp.fmin(x, 0.0),
     (distinct(4), distinct(4, seed=3)), ["fmax", "fmin", "*"]),
    ("float_power", lambda x, y: tnp.float_power(x, y), (arr(3, lo=0.2), arr(3, seed=1)),
     ["float_power"]),
    ("reciprocal_fabs", lambda x: tnp.reciprocal(tnp.fabs(x)), (np.array([0.3, -0.7, 1.2]),),
     ["reciprocal", "fabs"]),
    ("deg2rad", lambda x: tnp.deg2rad(x), (arr(3),), ["deg2rad"]),
    # indexing
    ("getitem_int", lambda x: x[1], (arr(3, 2),), ["[]"]),
    ("getitem_negative", lambda x: x[-1, 0], (arr(3, 2),), ["[]"]),
    ("getitem_slice", lambda x: x[:, 1:3], (arr(2, 4),), ["[]"]),
    ("getitem_step", lambda x: x[::-2], (arr(5),), ["[]"]),
    ("getitem_none_ellipsis", lambda x: x[None, ..., 0], (arr(2, 3),), ["[]"]),
    ("getitem_int_array", lambda x: x[np.array([2, 0])], (arr(3, 2),), ["[]"]),
    ("getitem_repeated_indices", lambda x: x[np.array([1, 1, 0, 1])], (arr(3),), ["[]"]),
    ("getitem_two_arrays", lambda x: x[np.array([0, 1]), np.array([2, 2])], (arr(2, 3),),
     ["[]"]),
    ("getitem_mixed", lambda x: x[1:, np.array([0, 0, 2])], (arr(3, 3),), ["[]"]),
    ("getitem_bool_mask", lambda x: x[np.array([True, False, True])], (arr(3, 2),), ["[]"]),
    ("at_add", lambda x, y: tnp.at(x)[np.array([0, 2, 0])].add(y), (arr(3), arr(3, seed=1)),
     ["at"]),
    ("at_set", lambda x, y: tnp.at(x)[1].set(y), (arr(3, 2), arr(2, seed=1)), ["at"]),
    ("take", lambda x: tnp.take(x, np.array([2, 0, 2]), axis=1), (arr(2, 3),), ["take"]),
    ("take_flat", lambda x: tnp.take(x, np.array([5, 0])), (arr(2, 3),), ["take"]),
    ("take_along_axis", lambda x: tnp.take_along_axis(x, np.array([[1, 0, 1], [2, 2, 0]]),
                                                      axis=1), (arr(2, 3),),
     ["take_along_axis"]),
    # selection and clipping
    ("where", lambda x, y: tnp.where(np.array([True, False, True]), x, y),
     (arr(2, 3), arr(2, 3, seed=1)), ["where"]),
    ("where_scalar_branch", lambda x: tnp.where(np.array([True, False, True]), x, 0.0),
     (arr(3),), ["where"]),
    ("clip", lambda x: tnp.clip(x, -0.5, 0.5), (np.array([-0.9, -0.3, 0.2, 0.8]),), ["clip"]),
    ("clip_array_bounds", lambda lo, x, hi: tnp.clip(x, lo, hi),
     (np.full(4, -0.5), np.array([-0.9, -0.3, 0.2, 0.8]), np.full(4, 0.5)), ["clip"]),
    ("maximum", lambda x, y: tnp.maximum(x, y), (distinct(4), distinct(4, seed=3)),
     ["maximum"]),
    ("minimum_broadcast", lambda x, y: tnp.minimum(x, y), (distinct(2, 3), np.float64(0.1)),
     ["minimum"]),
    ("sort", lambda x: tnp.sort(x, axis=-1), (distinct(2, 3),), ["sort"]),
    ("sort_axis0", lambda x: tnp.sort(x, axis=0), (distinct(3, 2),), ["sort"]),
    # composites and complex
    ("abs_complex_sum", lambda z: tnp.sum(tnp.abs(z) ** 2), (cplx(3),), ["sum", "abs", "*"]),
    ("real_imag", lambda z: tnp.real(z) * tnp.imag(z), (cplx(3),), ["real", "imag", "*"]),
    ("angle", lambda z: tnp.angle(z), (cplx(3),), ["angle"]),
    ("square_power", lambda x: tnp.square(x) + x ** 3, (arr(3),), ["square", "*"]),
    ("hypot_arctan2", lambda x, y: tnp.hypot(x, y) * tnp.arctan2(x, y),
     (arr(3, lo=0.2), arr(3, lo=0.2, seed=1)), ["hypot", "arctan2", "*"]),
    ("logaddexp", lambda x, y: tnp.logaddexp(x, y), (arr(3), arr(3, seed=1)), ["logaddexp"]),
    ("sinc", lambda x: tnp.sinc(x), (arr(3, lo=0.1),), ["sinc"]),
    ("linspace_scaled", lambda x: x * tnp.linspace(0.0, 1.0, 3), (arr(3),), ["linspace", "*"]),
]

OPERATORS = {"*": "__mul__", "@": "__matmul__", "[]": "__getitem__", ".T": "T"}


def _missing(names):
    if tnp is None:
        return ["tf_numba.numpy"]
    return [n for n in names if (not hasattr(Tracer, OPERATORS[n]) if n in OPERATORS
                                 else not hasattr(tnp, n))]


@pytest.mark.parametrize("name,f,args,needs", CASES, ids=[c[0] for c in CASES])
def test_numpy_function_derivatives_match_finite_differences(name, f, args, needs):
    missing = _missing(needs)
    if missing:
        pytest.skip(f"not in tf_numba.numpy yet: {', '.join(missing)}")
    check_grads(f, args, order=2)


def _grad_case(needs):
    missing = _missing(needs)
    if missing:
        pytest.skip(f"not in tf_numba.numpy yet: {', '.join(missing)}")


def test_max_splits_ties_evenly_like_jax():
    _grad_case(["max"])
    g = tf.grad(lambda x: tnp.max(x))(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])


def test_sort_gradient_permutes_the_cotangent():
    _grad_case(["sort", "sum", "*"])
    x = np.array([0.3, -1.0, 2.0])
    g = tf.grad(lambda x: tnp.sum(tnp.sort(x) * np.array([1.0, 2.0, 3.0])))(x)
    np.testing.assert_array_equal(g, [2.0, 1.0, 3.0])


def test_repeated_gather_indices_accumulate_their_cotangents():
    _grad_case(["[]", "sum"])
    g = tf.grad(lambda x: tnp.sum(x[np.array([1, 1, 0, 1])]))(np.zeros(3))
    np.testing.assert_array_equal(g, [1.0, 3.0, 0.0])


def test_clip_at_its_bounds_has_zero_gradient():
    _grad_case(["clip", "sum"])
    g = tf.grad(lambda x: tnp.sum(tnp.clip(x, -0.5, 0.5)))(np.array([-0.5, 0.0, 0.5, 0.9]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 0.0])


def test_integer_index_array_argument_is_not_differentiated():
    _grad_case(["take", "sum"])
    x = np.array([1.0, 2.0, 3.0])

    def f(x, idx):
        return tnp.sum(tnp.take(x, idx))
    _, f_vjp = tf.vjp(f, x, np.array([2, 2]))
    gx, gidx = f_vjp(1.0)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 2.0])
    assert gidx.dtype == tf.dtypes.float0 and gidx.shape == (2,)      # as JAX's
