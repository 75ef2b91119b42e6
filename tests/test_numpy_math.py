"""tnp elementwise functions against NumPy: every dtype, broadcasting patterns, weak Python
scalars, special values; eagerly on NumPy arrays and traced."""
import itertools

import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import DTypeError, ShapeError, UnsupportedError

from conftest import DTYPES, assert_same, check, numpy_reference, run_traced, sample

# name, input domain, exact (False: composite, compared within the dtype's tolerance)
UNARY = [
    ("negative", "any", True), ("positive", "any", True), ("absolute", "any", True),
    ("abs", "any", True), ("fabs", "any", True), ("sign", "any", True), ("exp", "any", True),
    ("exp2", "any", True), ("expm1", "any", True), ("log", "positive", True),
    ("log2", "positive", True), ("log10", "positive", True), ("log1p", "positive", True),
    ("sqrt", "positive", True), ("cbrt", "any", True), ("square", "any", True),
    ("reciprocal", "positive", True), ("sin", "any", True), ("cos", "any", True),
    ("tan", "any", True), ("arcsin", "unit", True), ("arccos", "unit", True),
    ("arctan", "any", True), ("sinh", "any", True), ("cosh", "any", True),
    ("tanh", "any", True), ("arcsinh", "any", True), ("arccosh", "ge1", True),
    ("arctanh", "unit", True), ("deg2rad", "any", True), ("rad2deg", "any", True),
    ("degrees", "any", True), ("radians", "any", True), ("floor", "any", True),
    ("ceil", "any", True), ("trunc", "any", True), ("rint", "any", True), ("fix", "any", True),
    ("conj", "any", True), ("conjugate", "any", True), ("isnan", "any", True),
    ("isfinite", "any", True), ("isinf", "any", True), ("signbit", "any", True),
    ("logical_not", "any", True), ("invert", "any", True), ("bitwise_not", "any", True),
    ("spacing", "any", True), ("isposinf", "any", True), ("isneginf", "any", True),
    ("real", "any", True), ("imag", "any", True), ("angle", "any", True),
    ("sinc", "any", False), ("nan_to_num", "any", True), ("iscomplex", "any", True),
    ("isreal", "any", True),
]

BINARY = [
    ("add", "any", True), ("subtract", "any", True), ("multiply", "any", True),
    ("divide", "positive", True), ("true_divide", "positive", True),
    ("floor_divide", "positive", True), ("remainder", "positive", True),
    ("mod", "positive", True), ("fmod", "positive", True), ("power", "small", True),
    ("float_power", "small", False), ("maximum", "any", True), ("minimum", "any", True),
    ("fmax", "any", True), ("fmin", "any", True), ("arctan2", "any", True),
    ("hypot", "any", True), ("logaddexp", "any", False), ("logaddexp2", "any", False),
    ("heaviside", "any", True), ("copysign", "any", True), ("nextafter", "any", True),
    ("equal", "any", True), ("not_equal", "any", True), ("less", "any", True),
    ("less_equal", "any", True), ("greater", "any", True), ("greater_equal", "any", True),
    ("logical_and", "any", True), ("logical_or", "any", True), ("logical_xor", "any", True),
    ("bitwise_and", "any", True), ("bitwise_or", "any", True), ("bitwise_xor", "any", True),
]

_expected = numpy_reference


def _check_or_raise(name, args, exact, static=()):
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    try:
        expected = _expected(np_fn, list(args) + list(static))
    except TypeError:
        with pytest.raises(TypeError):
            fn(*args, *static)
        with pytest.raises(TypeError):
            run_traced(lambda *xs: fn(*xs, *static), *args)
        return
    with np.errstate(all="ignore"):
        eager = fn(*args, *static)
        traced = run_traced(lambda *xs: fn(*xs, *static), *args)
    assert_same(eager, expected, exact=exact, what=f"{name} eager")
    assert_same(traced, expected, exact=exact, check_type=False, what=f"{name} traced")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,kind,exact", UNARY, ids=[u[0] for u in UNARY])
def test_unary_matches_numpy(name, kind, exact, dtype):
    rng = np.random.default_rng(0)
    _check_or_raise(name, [sample(dtype, (2, 3), rng, kind)], exact)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,kind,exact", UNARY, ids=[u[0] for u in UNARY])
def test_unary_on_a_0d_array_returns_a_numpy_scalar(name, kind, exact, dtype):
    rng = np.random.default_rng(1)
    _check_or_raise(name, [sample(dtype, (), rng, kind)], exact)


SPECIAL = np.array([0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, np.inf, -np.inf, np.nan, 1e-310,
                    -3.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "rint", "fix", "sign", "isnan",
                                  "isinf", "isfinite", "isposinf", "isneginf", "signbit",
                                  "nan_to_num", "absolute", "spacing", "sqrt", "log",
                                  "reciprocal", "negative", "sinc"])
def test_unary_special_values_match_numpy(name, dtype):
    _check_or_raise(name, [SPECIAL.astype(dtype)], name != "sinc")


def test_complex_special_values_match_numpy():
    z = np.array([complex(np.inf, np.nan), complex(np.nan, 1), complex(1, -np.inf), 0j,
                  complex(-0.0, -0.0), 2.5 - 1.5j])
    for name in ["isnan", "isinf", "isfinite", "rint", "sign", "absolute", "nan_to_num",
                 "conj", "angle", "real", "imag"]:
        _check_or_raise(name, [z], True)


PAIRS = list(itertools.product(DTYPES, DTYPES))


@pytest.mark.parametrize("dt1,dt2", PAIRS,
                         ids=[f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in PAIRS])
@pytest.mark.parametrize("name,kind,exact", BINARY, ids=[b[0] for b in BINARY])
def test_binary_matches_numpy_for_every_dtype_pair(name, kind, exact, dt1, dt2):
    rng = np.random.default_rng(2)
    first_kind = "any" if kind == "small" else kind
    _check_or_raise(name, [sample(dt1, (2, 3), rng, first_kind), sample(dt2, (3,), rng, kind)],
                    exact)


SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1)),
          ((0, 3), (1, 3)), ((2, 3), ())]


@pytest.mark.parametrize("s1,s2", SHAPES, ids=[f"{a}-{b}" for a, b in SHAPES])
@pytest.mark.parametrize("name,kind,exact", BINARY, ids=[b[0] for b in BINARY])
def test_binary_broadcasts_like_numpy(name, kind, exact, s1, s2):
    rng = np.random.default_rng(3)
    first_kind = "any" if kind == "small" else kind
    _check_or_raise(name, [sample(np.float64, s1, rng, first_kind),
                           sample(np.float32, s2, rng, kind)], exact)


SCALARS = [2, -3, 2.5, True, 1.5 + 0.5j]


@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "maximum", "equal", "less", "arctan2", "floor_divide",
                                  "bitwise_and", "logical_or", "copysign", "heaviside"])
def test_python_scalars_are_weak(name, dtype, scalar):
    rng = np.random.default_rng(4)
    x = sample(dtype, (3,), rng, "positive")
    if name == "power" and np.dtype(dtype).kind in "biu" and scalar == -3:
        scalar = 3
    _check_or_raise(name, [x], True, static=(scalar,))
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    try:
        expected = _expected(lambda a, b: np_fn(b, a), [x, scalar])
    except (TypeError, ValueError):
        return
    with np.errstate(all="ignore"):
        assert_same(fn(scalar, x), expected, what="scalar first")
        assert_same(run_traced(lambda a: fn(scalar, a), x), expected, check_type=False,
                    what="scalar first, traced")


def test_float32_times_python_float_stays_float32():
    x = np.ones(3, np.float32)
    assert tnp.multiply(x, 2.0).dtype == np.float32
    assert run_traced(lambda a: a * 2.0, x).dtype == np.float32
    assert run_traced(lambda a: tnp.multiply(a, np.float64(2.0)), x).dtype == np.float64


def test_int_true_division_and_sin_of_ints_give_float64():
    i = np.arange(1, 4, dtype=np.int32)
    assert tnp.true_divide(i, i).dtype == np.float64
    assert tnp.sin(i).dtype == np.float64
    assert run_traced(lambda a: a / a, i).dtype == np.float64


def test_both_python_scalars_compute_eagerly_like_numpy():
    assert_same(tnp.add(1, 2.0), np.add(1, 2.0))
    assert_same(tnp.sqrt(4), np.sqrt(4))
    assert_same(tnp.equal(1, 1), np.equal(1, 1))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_shifts_match_numpy_including_shifts_past_the_width(dtype):
    x = np.array([1, -1, 5, -8, 7, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
    n = np.array([0, 1, 3, 31, 33, 63, 64], dtype)
    for name in ["left_shift", "right_shift"]:
        _check_or_raise(name, [x, n % (8 * np.dtype(dtype).itemsize) if name == "left_shift"
                               else n], True)
    _check_or_raise("right_shift", [x, n], True)


def test_shifts_reject_floats():
    with pytest.raises(TypeError):
        tnp.left_shift(np.ones(2), 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ldexp_and_divmod_and_modf_match_numpy(dtype):
    rng = np.random.default_rng(5)
    x = sample(dtype, (4,), rng)
    check(tnp.ldexp, np.ldexp, x, np.array([0, 3, -2, 10]))
    check(tnp.divmod, np.divmod, x, sample(dtype, (4,), rng, "positive"))
    check(tnp.modf, np.modf, np.concatenate([x, np.array([np.inf, -np.inf, -0.0], dtype)]))


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("dtype", DTYPES[:-2] + [np.complex128])
def test_round_matches_numpy(dtype, decimals):
    rng = np.random.default_rng(6)
    x = sample(dtype, (5,), rng) * (7 if np.dtype(dtype).kind != "b" else 1)
    if np.dtype(dtype).kind == "f":
        x = np.concatenate([x, np.array([0.125, 2.5, -2.5, 15.0, 25.0, 1234.5], dtype)])
    check(tnp.round, np.round, x, static=(decimals,))
    check(tnp.around, np.round, x, static=(decimals,))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_clip_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    x = sample(dtype, (2, 5), rng)
    check(tnp.clip, np.clip, x, static=(-1, 2))
    check(tnp.clip, np.clip, x, static=(-1.5, 2.5))
    check(tnp.clip, np.clip, x, static=(None, 2))
    check(tnp.clip, np.clip, x, np.full((5,), -1, dtype), np.full((2, 1), 1, dtype))
    check(lambda a: tnp.clip(a, min=0), lambda a: np.clip(a, min=0), x)


def test_clip_propagates_nan_like_numpy():
    x = np.array([np.nan, -3.0, 3.0])
    check(tnp.clip, np.clip, x, static=(-1.0, 1.0))


@pytest.mark.parametrize("dt1,dt2", [(np.float32, np.float64), (np.int32, np.float32),
                                     (np.bool_, np.int64), (np.complex128, np.float32)])
def test_where_promotes_and_broadcasts(dt1, dt2):
    rng = np.random.default_rng(8)
    cond = sample(np.bool_, (2, 3), rng)
    x, y = sample(dt1, (3,), rng), sample(dt2, (2, 1), rng)
    check(tnp.where, np.where, cond, x, y)
    check(tnp.where, np.where, cond, static=(1.0, 2))
    check(tnp.where, np.where, sample(np.int32, (2, 3), rng), x, y)


def test_where_with_one_argument_is_nonzero():
    x = np.array([[0, 1], [2, 0]])
    assert_same(tnp.where(x), np.where(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
def test_isclose_and_allclose_match_numpy(dtype):
    rng = np.random.default_rng(9)
    a = sample(dtype, (6,), rng)
    b = a + (np.array([0, 1e-9, 1e-3, 0, 0, 0]) * (1 if np.dtype(dtype).kind != "i" else 0)
             ).astype(a.dtype)
    if np.dtype(dtype).kind in "fc":
        a[4], b[4] = np.nan, np.nan
        a[5], b[5] = np.inf, np.inf
    check(tnp.isclose, np.isclose, a, b)
    check(lambda x, y: tnp.isclose(x, y, equal_nan=True),
          lambda x, y: np.isclose(x, y, equal_nan=True), a, b)
    check(tnp.isclose, np.isclose, a, static=(1,))
    assert tnp.allclose(a, a) is np.allclose(a, a)
    assert tnp.allclose(a, b, equal_nan=True) is np.allclose(a, b, equal_nan=True)


def test_allclose_is_a_traced_bool_under_trace():
    out = run_traced(lambda x, y: tnp.allclose(x, y), np.ones(3), np.ones(3))
    assert out.dtype == np.bool_ and out.shape == () and bool(out)


def test_nan_to_num_with_replacements():
    x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    check(lambda a: tnp.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
          lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0), x)


def test_angle_in_degrees():
    z = np.array([1j, -1 + 0j, 1 + 1j])
    check(lambda a: tnp.angle(a, deg=True), lambda a: np.angle(a, deg=True), z)


def test_broadcast_mismatch_is_a_shape_error_naming_the_function_and_shapes():
    with pytest.raises(ShapeError, match=r"add.*\(2, 3\).*\(4,\)"):
        tnp.add(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ShapeError, match="add"):
        run_traced(lambda a, b: a + b, np.ones((2, 3)), np.ones(4))


def test_unsupported_dtype_combinations_are_dtype_errors():
    with pytest.raises(DTypeError, match="bitwise_and"):
        tnp.bitwise_and(np.ones(2), np.ones(2))
    with pytest.raises(DTypeError, match="subtract"):
        tnp.subtract(np.ones(2, bool), np.ones(2, bool))


def test_out_and_where_arguments_are_unsupported():
    with pytest.raises(UnsupportedError, match="out"):
        tnp.add(np.ones(2), 1, out=np.ones(2))
    with pytest.raises(UnsupportedError, match="where"):
        tnp.sin(np.ones(2), where=np.ones(2, bool))


def test_dtype_argument_selects_the_loop():
    x = np.arange(3, dtype=np.int32)
    check(lambda a: tnp.add(a, a, dtype=np.float32),
          lambda a: np.add(a, a, dtype=np.float32), x)
    check(lambda a: tnp.sin(a, dtype=np.float32), lambda a: np.sin(a, dtype=np.float32), x)


def test_narrow_input_dtypes_keep_their_dtype_and_strings_are_rejected():
    assert_same(tnp.add(np.array([1, 255], np.uint8), 1), np.array([2, 0], np.uint8))
    with pytest.raises(DTypeError):
        tnp.add(np.array(["a"]), 1)


def test_real_and_imag_of_0d_arrays_are_arrays_like_numpy():
    for v in [np.array(1.5), np.array(1 + 2j), np.float32(2.0), np.complex128(1j)]:
        assert_same(tnp.real(v), np.real(v))
        assert_same(tnp.imag(v), np.imag(v))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_special_values_and_ties(name, dtype):
    x = np.array([1.0, -3.5, 0.0, np.inf, -np.inf, np.inf, 3.0, np.nan, 700.0], dtype)
    y = np.array([1.0, -3.5, -0.0, np.inf, -np.inf, -np.inf, -2.0, 1.0, 700.0], dtype)
    _check_or_raise(name, [x, y], True)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_of_0d_arrays_eagerly(name):
    # found by the fuzzer: an eager step made a NumPy scalar (np.float64 subclasses float),
    # which was taken for a weak Python scalar and gave gt(float64, int64)
    for dtype in [np.float32, np.float64]:
        x, y = np.array(0.3, dtype), np.array(-1.0, dtype)
        check(getattr(tnp, name), getattr(np, name), x, y)
        check(getattr(tnp, name), getattr(np, name), x, x)


def test_complex_to_bool_is_nonzero_not_real_part_nonzero():
    z = np.array([1j, 0j, 1 + 0j])
    for name in ["logical_and", "logical_or", "logical_xor"]:
        _check_or_raise(name, [np.zeros(3, np.float32), z], True)
    check(lambda a: tnp.where(a, 1, 2), lambda a: np.where(a, 1, 2), z)


def test_errors_name_the_function_and_the_users_line():
    import inspect
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(ShapeError) as info:
        run_traced(lambda a: a + np.ones(4), np.ones((2, 3)))
    assert info.value.op == "add" and info.value.source[1] == line
    with pytest.raises(ShapeError) as info:
        tnp.var(np.ones(3), axis=4)
    assert info.value.op == "var" and "test_numpy_math.py" in str(info.value)


def test_complex_and_real_object_predicates():
    for v in [np.ones(2), np.ones(2, complex), 1.0, 1j, np.float32(1), np.arange(2)]:
        assert tnp.iscomplexobj(v) == np.iscomplexobj(v)
        assert tnp.isrealobj(v) == np.isrealobj(v)
    assert run_traced(lambda z: tnp.full((), tnp.iscomplexobj(z)), np.ones(2, complex))


def test_bitwise_invert_is_invert():
    x = np.array([0, 5, -3])
    check(tnp.bitwise_invert, np.bitwise_invert, x)
