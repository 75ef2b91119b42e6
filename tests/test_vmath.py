"""vmath's exp, expm1, tanh, log, log1p, sin and cos: ulp error against NumPy and a
long-double reference on dense samples, exact special values, float32 round trips, and
loops over them vectorize."""
import re

import numba
import numpy as np
import pytest

from tf_numba.lowering import vmath

LONG_DOUBLE = np.finfo(np.longdouble).nmant >= 63    # x87 80-bit or quad: a reference
needs_long_double = pytest.mark.skipif(not LONG_DOUBLE, reason="long double is float64 here")


def _loop(fn, through_float64=False):
    """A compiled ``out[i] = fn(x[i])`` loop (float32 through float64 if asked), one per
    function, so each can be checked for vectorization on its own."""
    if through_float64:
        def loop(x, out):
            for i in range(x.size):
                out[i] = np.float32(fn(np.float64(x[i])))
    else:
        def loop(x, out):
            for i in range(x.size):
                out[i] = fn(x[i])
    return numba.njit(error_model="numpy")(loop)


_exp_loop, _tanh_loop, _log_loop = (_loop(vmath.exp), _loop(vmath.tanh), _loop(vmath.log))
_tanh_float32_loop = _loop(vmath.tanh, through_float64=True)
_log_float32_loop = _loop(vmath.log, through_float64=True)
_exp32_loop, _tanh32_loop = _loop(vmath.exp32), _loop(vmath.tanh32)
_log32_loop = _loop(vmath.log32)
_log1p_loop = _loop(vmath.log1p)
_log1p_float32_loop = _loop(vmath.log1p, through_float64=True)
_expm1_loop = _loop(vmath.expm1)
_expm1_float32_loop = _loop(vmath.expm1, through_float64=True)
_sin_loop, _cos_loop = _loop(vmath.sin), _loop(vmath.cos)
_sin32_loop, _cos32_loop = _loop(vmath.sin32), _loop(vmath.cos32)


def _apply(loop, x):
    out = np.empty_like(x)
    loop(x, out)
    return out


def _ulps_apart(a, b):
    """Floats between a and b, elementwise (0 where both are NaN; -0.0 and 0.0 are 0)."""
    ints = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    lowest = np.iinfo(ints).min

    def ordered(v):
        i = v.view(ints).astype(np.int64)
        return np.where(i < 0, lowest - i, i)
    apart = np.abs(ordered(a) - ordered(b))
    return np.where(np.isnan(a) & np.isnan(b), 0, apart)


def _ulp_error(result, reference):
    """|result - reference| in ulps of the float64 nearest the long-double reference."""
    ulp = np.spacing(np.abs(reference.astype(np.float64))).astype(np.longdouble)
    return np.max(np.abs(result.astype(np.longdouble) - reference) / ulp)


def _tanh_samples():
    rng = np.random.default_rng(0)
    x = np.concatenate([
        np.logspace(-310, np.log10(30.0), 100_000),            # subnormals to past 22
        rng.uniform(0.0, 3.0, 100_000),
        rng.uniform(0.27, 0.29, 10_000),                         # the rational/exp switch
        rng.uniform(0.6, 0.65, 10_000),
        rng.uniform(21.5, 22.5, 10_000),                         # where tanh rounds to 1
    ])
    return np.concatenate([x, -x])


def _log_samples():
    rng = np.random.default_rng(1)
    near_one = np.logspace(-16, -1, 25_000)
    return np.concatenate([
        np.logspace(-323.3, 308.2, 100_000),                     # subnormals to near max
        rng.uniform(0.5, 2.0, 100_000),
        1.0 + near_one, 1.0 - near_one,
        np.sqrt(2.0) * (1.0 + rng.uniform(-1e-3, 1e-3, 10_000)),  # where k moves by one
        np.sqrt(0.5) * (1.0 + rng.uniform(-1e-3, 1e-3, 10_000)),
    ])


def _log1p_samples():
    """Every exponent (uniform bit patterns, both signs above -1), near 0 and near -1."""
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 0x7ff0000000000000, 400_000, dtype=np.int64).view(np.float64)
    near_zero = np.logspace(-20, -1, 50_000)
    return np.concatenate([bits, -bits[bits < 1.0], rng.uniform(-1.0, 3.0, 200_000),
                           near_zero, -near_zero, -1.0 + np.logspace(-16, -0.3, 20_000)])


def test_log1p_within_one_ulp_of_numpy():
    x = _log1p_samples()
    assert _ulps_apart(_apply(_log1p_loop, x), np.log1p(x)).max() <= 1


@needs_long_double
def test_log1p_error_below_1_05_ulp():
    x = _log1p_samples()
    assert _ulp_error(_apply(_log1p_loop, x), np.log1p(x.astype(np.longdouble))) < 1.05


def test_log1p_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -1.5, 5e-324, -5e-324, 1e-300,
                  2.0 ** -29, -(2.0 ** -29), 1.7976931348623157e308, -0.9999999999999999])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log1p(x)
    got = _apply(_log1p_loop, x)
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


@needs_long_double
def test_log1p_float32_round_trip_rounds_correctly():
    x = _random_float32(200_000, 6)
    x = np.concatenate([x, -x[x < 1.0]])
    correctly_rounded = np.log1p(x.astype(np.longdouble)).astype(np.float32)
    np.testing.assert_array_equal(_apply(_log1p_float32_loop, x), correctly_rounded)


def _expm1_samples():
    """Every exponent up to overflow, both signs; dense where k moves (|x| near ln2 / 2)."""
    rng = np.random.default_rng(7)
    x = np.logspace(-320, np.log10(709.7), 100_000)
    return np.concatenate([x, -x, rng.uniform(-3.0, 3.0, 300_000),
                           rng.uniform(-50.0, 709.7, 100_000), rng.uniform(709.0, 709.78, 10_000),
                           rng.uniform(0.33, 0.36, 50_000), rng.uniform(-0.36, -0.33, 50_000)])


def test_expm1_within_one_ulp_of_numpy():
    x = _expm1_samples()
    assert _ulps_apart(_apply(_expm1_loop, x), np.expm1(x)).max() <= 1


@needs_long_double
def test_expm1_error_below_1_2_ulp():
    x = _expm1_samples()
    assert _ulp_error(_apply(_expm1_loop, x), np.expm1(x.astype(np.longdouble))) < 1.2


def test_expm1_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-300, 709.78,
                  709.79, -39.9, -40.1, -745.2, -1e308, 1e308])
    with np.errstate(over="ignore"):
        want = np.expm1(x)
    got = _apply(_expm1_loop, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@needs_long_double
def test_expm1_float32_round_trip_rounds_correctly():
    x = _random_float32(200_000, 8)
    x = np.concatenate([x, -x])
    with np.errstate(over="ignore"):
        correctly_rounded = np.expm1(x.astype(np.longdouble)).astype(np.float32)
    np.testing.assert_array_equal(_apply(_expm1_float32_loop, x), correctly_rounded)


def test_exp_within_one_ulp_of_numpy():
    x = np.linspace(-745.0, 709.7, 200_000)
    assert _ulps_apart(_apply(_exp_loop, x), np.exp(x)).max() <= 1


def test_tanh_within_one_ulp_of_numpy():
    x = _tanh_samples()
    assert _ulps_apart(_apply(_tanh_loop, x), np.tanh(x)).max() <= 1


def test_log_within_one_ulp_of_numpy():
    x = _log_samples()
    assert _ulps_apart(_apply(_log_loop, x), np.log(x)).max() <= 1


@needs_long_double
def test_tanh_error_below_0_65_ulp():
    x = _tanh_samples()
    assert _ulp_error(_apply(_tanh_loop, x), np.tanh(x.astype(np.longdouble))) < 0.65


@needs_long_double
def test_log_error_below_0_6_ulp():
    x = _log_samples()
    assert _ulp_error(_apply(_log_loop, x), np.log(x.astype(np.longdouble))) < 0.6


def test_tanh_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-300, 22.0, 22.5,
                  -22.5, 1e300, -1e300, 0.28, -0.28])
    got, want = _apply(_tanh_loop, x), np.tanh(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_log_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, -5e-324, 1.0, 2.0, 5e-324,
                  2.2250738585072009e-308, 2.2250738585072014e-308, 1.7976931348623157e308])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log(x)
    got = _apply(_log_loop, x)
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)     # NumPy's NaN from a negative has its sign bit set: no meaning
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


def _random_float32(n, seed):
    """Finite non-negative float32 values, uniform over bit patterns (subnormals included)."""
    bits = np.random.default_rng(seed).integers(0, 0x7f800000, n, dtype=np.int64)
    return bits.astype(np.int32).view(np.float32)


def test_tanh_float32_round_trip_matches_numpy():
    x = _random_float32(100_000, 2)
    x = np.concatenate([x, -x])
    apart = _ulps_apart(_apply(_tanh_float32_loop, x), np.tanh(x))
    assert apart.max() <= 1
    assert np.mean(apart == 0) > 0.98


def test_log_float32_round_trip_matches_numpy():
    # NumPy's float32 log is itself up to 2 ulp from correctly rounded near 1 (x in
    # [0.63, 1.58]): the bound is 1 ulp elsewhere, 2 there
    x = _random_float32(200_000, 3)
    apart = _ulps_apart(_apply(_log_float32_loop, x), np.log(x))
    near_one = (x > 0.6) & (x < 1.6)
    assert apart[~near_one].max() <= 1
    assert apart[near_one].max() <= 2
    assert np.mean(apart == 0) > 0.95


@needs_long_double
@pytest.mark.parametrize("loop, fn", [(_tanh_float32_loop, np.tanh),
                                      (_log_float32_loop, np.log)])
def test_float32_round_trip_rounds_correctly(loop, fn):
    x = _random_float32(100_000, 4)
    x = np.concatenate([x, -x]) if fn is np.tanh else x
    correctly_rounded = fn(x.astype(np.longdouble)).astype(np.float32)
    np.testing.assert_array_equal(_apply(loop, x), correctly_rounded)


def _vectorized(loop, dtype=np.float64):
    x = np.linspace(0.5, 2.0, 64, dtype=dtype)
    _apply(loop, x)
    # a vector divide, or a multiply at least 4 lanes wide, appears only if LLVM
    # vectorized the loop, not when it only paired scalar operations inside vmath's
    # function (<2 x double>)
    return re.search(r"fdiv[^\n]*<\d+ x double>|(fmul|fma)[^\n]*<(4|8|16) x double>",
                     loop.inspect_llvm(loop.signatures[0]))


@pytest.mark.parametrize("loop, dtype", [
    (_exp_loop, np.float64), (_tanh_loop, np.float64), (_log_loop, np.float64),
    (_log1p_loop, np.float64), (_expm1_loop, np.float64),
    (_sin_loop, np.float64), (_cos_loop, np.float64),
    (_sin32_loop, np.float32), (_cos32_loop, np.float32)])   # float64 inside
def test_loop_vectorizes(loop, dtype, monkeypatch):
    assert _vectorized(loop, dtype)
    # generated kernels compile with LLVM's SLP vectorizer on (kernel_cache)
    monkeypatch.setattr(numba.core.config, "SLP_VECTORIZE", 1)
    assert _vectorized(numba.njit(error_model="numpy")(loop.py_func), dtype)


def test_exp32_within_one_ulp_of_the_correctly_rounded_float32():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-104.0, 88.8, 1_000_000), rng.uniform(-1, 1, 200_000),
                        rng.uniform(-1e-3, 1e-3, 10_000),
                        [88.72283, 88.7229, -87.3, -100.0, -103.9, -104.0]]).astype(np.float32)
    with np.errstate(over="ignore"):
        correctly_rounded = np.exp(x.astype(np.float64)).astype(np.float32)
    assert _ulps_apart(_apply(_exp32_loop, x), correctly_rounded).max() <= 1


def test_exp32_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 89.0, -105.0], np.float32)
    got = _apply(_exp32_loop, x)
    np.testing.assert_array_equal(got, [np.nan, np.inf, 0.0, 1.0, 1.0, np.inf, 0.0])
    assert got.dtype == np.float32


def test_tanh32_within_one_ulp_of_the_correctly_rounded_float32():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-12, 12, 600_000), rng.uniform(-1, 1, 600_000),
                        rng.uniform(0.5, 0.6, 200_000), rng.uniform(-1e-3, 1e-3, 10_000),
                        [1e-30, -1e-40, 9.0, -9.1]]).astype(np.float32)
    correctly_rounded = np.tanh(x.astype(np.float64)).astype(np.float32)
    assert _ulps_apart(_apply(_tanh32_loop, x), correctly_rounded).max() <= 1


def test_tanh32_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 30.0, -30.0], np.float32)
    got = _apply(_tanh32_loop, x)
    np.testing.assert_array_equal(got, [np.nan, 1.0, -1.0, 0.0, -0.0, 1.0, -1.0])
    assert np.signbit(got[4]) and not np.signbit(got[3])


def test_log32_within_one_ulp_of_the_exact_log():
    rng = np.random.default_rng(6)
    bits = rng.integers(0, 0x7f800000, 2_000_000).astype(np.int32)      # every binade
    x = np.concatenate([bits.view(np.float32), rng.uniform(0.5, 2.0, 1_000_000),
                        rng.uniform(1 - 1e-3, 1 + 1e-3, 100_000),
                        [1e-45, 1e-40, 1.17549435e-38, 3.4e38]]).astype(np.float32)
    exact = np.log(x.astype(np.float64))
    got = _apply(_log32_loop, x)
    ulp = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    assert (np.abs(got - exact) / ulp).max() < 1
    assert np.mean(got == exact.astype(np.float32)) > 0.97
    assert got.dtype == np.float32
    # in float32 lanes (the float64 route runs half as many)
    assert re.search(r"<(8|16) x float>", _log32_loop.inspect_llvm(_log32_loop.signatures[0]))


def test_log32_specials_exact():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 1.0, 2.0 ** -149], np.float32)
    got = _apply(_log32_loop, x)
    np.testing.assert_array_equal(got[:7], [np.nan, np.inf, np.nan, -np.inf, -np.inf,
                                            np.nan, 0.0])
    assert got[7] == np.float32(np.log(2.0 ** -149))


def _sin_cos_samples():
    """Both signs of: the polynomial's range, moderate and large arguments, where the
    reduction switches to Payne-Hanek (2^25), doubles next to multiples of pi/2 (r = x mod
    pi/2 down to an ulp of x), and random bit patterns (every exponent up to 2^1024)."""
    rng = np.random.default_rng(5)
    near_multiples = (np.arange(1, 100_000) * (np.pi / np.longdouble(2))).astype(np.float64)
    x = np.concatenate([
        np.logspace(-310, 0, 50_000), rng.uniform(0.0, 10.0, 200_000),
        rng.uniform(0.0, 1e5, 50_000), rng.uniform(0.0, 1e9, 50_000),
        rng.uniform(0.0, 1e22, 50_000), 2.0 ** 25 * rng.uniform(0.999, 1.001, 20_000),
        near_multiples, rng.integers(0, 0x7ff0000000000000, 100_000).view(np.float64),
    ])
    return np.concatenate([x, -x])


# the double closest to a multiple of pi/2 (4.7e-19 away): Payne-Hanek's hardest case,
# where NumPy's own float64 cos errs by 8 ulp
_SIN_COS_HARD = np.array([6381956970095103 * 2.0 ** 797])


@pytest.mark.parametrize("loop, fn", [(_sin_loop, np.sin), (_cos_loop, np.cos)])
def test_sin_cos_within_one_ulp_of_numpy(loop, fn):
    x = _sin_cos_samples()
    assert _ulps_apart(_apply(loop, x), fn(x)).max() <= 1


@needs_long_double
@pytest.mark.parametrize("loop, fn", [(_sin_loop, np.sin), (_cos_loop, np.cos)])
def test_sin_cos_error_below_0_63_ulp(loop, fn):
    x = np.concatenate([_sin_cos_samples(), _SIN_COS_HARD, -_SIN_COS_HARD])
    assert _ulp_error(_apply(loop, x), fn(x.astype(np.longdouble))) < 0.63


@pytest.mark.parametrize("loop, fn", [(_sin_loop, np.sin), (_cos_loop, np.cos)])
def test_sin_cos_specials_exact(loop, fn):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 2.2e-308, 1e-300,
                  2.0 ** -26, -(2.0 ** -26), 2.0 ** -27, 1.7976931348623157e308,
                  -1.7976931348623157e308])
    with np.errstate(invalid="ignore"):
        want = fn(x)
    got = _apply(loop, x)
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)     # the sign of NaN from sin(inf) carries no meaning
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))


def _sin_cos32_samples():
    rng = np.random.default_rng(6)
    x = np.concatenate([_random_float32(600_000, 7),
                        rng.uniform(0.0, 10.0, 400_000).astype(np.float32)])
    return np.concatenate([x, -x])


@pytest.mark.parametrize("loop, fn", [(_sin32_loop, np.sin), (_cos32_loop, np.cos)])
def test_sin32_cos32_within_one_ulp_of_numpy_and_nearly_always_correctly_rounded(loop, fn):
    x = _sin_cos32_samples()
    got = _apply(loop, x)
    assert got.dtype == np.float32
    assert _ulps_apart(got, fn(x)).max() <= 1
    # float64's result rounded to float32 is the correctly rounded one but for double
    # rounding (~2^-29 of inputs); the polynomials' 2^-43 misround ~2^-18 of them
    rounded = fn(x.astype(np.float64)).astype(np.float32)
    apart = _ulps_apart(got, rounded)
    assert apart.max() <= 1
    assert np.mean(apart == 0) > 0.9999


@pytest.mark.parametrize("loop, fn", [(_sin32_loop, np.sin), (_cos32_loop, np.cos)])
def test_sin32_cos32_specials_exact(loop, fn):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-38, 2.0 ** -12,
                  3.4028235e38, -3.4028235e38, 1.5707964, 3.1415927], np.float32)
    with np.errstate(invalid="ignore"):
        want = fn(x)
    got = _apply(loop, x)
    np.testing.assert_array_equal(got, want)
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
