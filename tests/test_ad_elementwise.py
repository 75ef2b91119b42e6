"""Derivatives of the elementwise primitives: finite-difference checks to second order,
JAX's conventions at non-smooth points, complex values, and dtype errors."""
import os
import re

import numpy as np
import pytest

import tf_numba as tf
from tf_numba.errors import DTypeError
from tf_numba.ops import elementwise as E
from tf_numba.ops.elementwise import BINARY_JVP, PRIMS, UNARY_JVP, ZERO_DERIVATIVE
from tf_numba.ops.reductions import reduce_sum

from ad_checks import check_grads

N = 4


def _interval(lo, hi):
    return lambda rng: rng.uniform(lo, hi, N)


def _either_sign(lo, hi):
    return lambda rng: rng.uniform(lo, hi, N) * rng.choice([-1.0, 1.0], N)


def _fixed(*values):
    return lambda rng: np.array(values, np.float64)


ANY = _interval(-1.5, 1.5)
POSITIVE = _interval(0.2, 3.0)
UNIT = _interval(-0.9, 0.9)
NONZERO = _either_sign(0.2, 2.0)

# Real domains: a sampler per operand, away from poles, branch points and kinks.
REAL_DOMAINS = {
    "neg": (ANY,), "exp": (ANY,), "exp2": (ANY,), "expm1": (ANY,),
    "log": (POSITIVE,), "log2": (POSITIVE,), "log10": (POSITIVE,),
    "log1p": (_interval(-0.5, 2.0),),
    "sin": (ANY,), "cos": (ANY,), "tan": (_interval(-1.2, 1.2),),
    "asin": (UNIT,), "acos": (UNIT,), "atan": (ANY,),
    "sinh": (ANY,), "cosh": (ANY,), "tanh": (ANY,),
    "asinh": (ANY,), "acosh": (_interval(1.2, 3.0),), "atanh": (UNIT,),
    "sqrt": (POSITIVE,), "rsqrt": (POSITIVE,), "cbrt": (NONZERO,),
    "abs": (NONZERO,), "erf": (ANY,), "erfc": (ANY,), "logistic": (_interval(-3.0, 3.0),),
    "add": (ANY, ANY), "sub": (ANY, ANY), "mul": (ANY, ANY), "div": (ANY, NONZERO),
    # x / y stays clear of integers, where rem and fmod jump
    "rem": (_fixed(2.3, -1.7, 0.4, -0.3), _fixed(0.9, 0.8, -1.1, 0.7)),
    "fmod": (_fixed(2.3, -1.7, 0.4, -0.3), _fixed(0.9, 0.8, -1.1, 0.7)),
    "pow": (POSITIVE, ANY),
    "max": (_fixed(0.3, -1.2, 2.0, 0.5), _fixed(0.9, -1.5, 1.0, -0.5)),
    "min": (_fixed(0.3, -1.2, 2.0, 0.5), _fixed(0.9, -1.5, 1.0, -0.5)),
    "atan2": (NONZERO, NONZERO), "hypot": (NONZERO, NONZERO),
    "copysign": (NONZERO, NONZERO), "nextafter": (ANY, ANY),
}

# Points off both axes: clear of every branch cut of log, sqrt, asin, atan, acosh, ...
COMPLEX_Z = lambda rng: _either_sign(0.2, 1.0)(rng) + 1j * _either_sign(0.2, 1.0)(rng)  # noqa: E731
COMPLEX_UNARY = ["neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                 "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh",
                 "acosh",
                 "atanh", "sqrt", "rsqrt", "abs", "real", "imag", "conj"]
COMPLEX_BINARY = ["add", "sub", "mul", "div", "pow"]

SPECIAL = {"select", "clamp", "convert_element_type", "real", "imag", "conj", "complex",
           "stop_gradient"}


def _points(name, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(sample(rng) for sample in REAL_DOMAINS[name])


def test_every_differentiable_primitive_has_a_domain_here():
    smooth = set(UNARY_JVP) | set(BINARY_JVP)
    assert smooth <= set(REAL_DOMAINS)
    assert set(PRIMS) == smooth | set(ZERO_DERIVATIVE) | SPECIAL


@pytest.mark.parametrize("name", sorted(REAL_DOMAINS))
def test_real_derivatives_match_finite_differences_to_second_order(name):
    check_grads(getattr(E, name), _points(name), order=2)


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_complex_unary_derivatives_match_finite_differences(name):
    z = COMPLEX_Z(np.random.default_rng(3))
    check_grads(getattr(E, name), (z,), order=2)


@pytest.mark.parametrize("name", COMPLEX_BINARY)
def test_complex_binary_derivatives_match_finite_differences(name):
    rng = np.random.default_rng(4)
    check_grads(getattr(E, name), (COMPLEX_Z(rng), COMPLEX_Z(rng)), order=2)


def test_complex_from_real_and_imaginary_parts():
    check_grads(E.complex, _points("mul"), order=2)


def test_real_imag_conj_of_real_input():
    x = ANY(np.random.default_rng(5))
    for fn in (E.real, E.conj):
        check_grads(fn, (x,), order=2)


def test_real_function_of_complex_gradient_is_dfdx_minus_i_dfdy():
    z = np.complex128(0.3 + 0.4j)
    # |z|^2 = x^2 + y^2: df/dx - i df/dy = 2x - 2iy = 2 conj(z)
    g = tf.grad(lambda z: E.real(E.mul(z, E.conj(z))))(z)
    assert g == pytest.approx(2 * np.conj(z))
    assert tf.grad(E.abs)(z) == pytest.approx(np.conj(z) / abs(z))
    assert tf.grad(E.imag)(z) == pytest.approx(-1j)


def test_convert_element_type_between_float_and_complex():
    x = ANY(np.random.default_rng(6))
    check_grads(lambda x: E.convert_element_type(x, np.complex128), (x,), order=2)
    z = COMPLEX_Z(np.random.default_rng(7))
    check_grads(lambda z: E.convert_element_type(z, np.float64), (z,), order=2)


def test_select_differentiates_both_branches():
    pred = np.array([True, False, True, False])
    rng = np.random.default_rng(8)
    check_grads(lambda a, b: E.select(pred, a, b), (ANY(rng), ANY(rng)), order=2)


def test_clamp_inside_and_outside_the_bounds():
    lo, hi = np.full(N, -0.5), np.full(N, 0.5)
    x = np.array([-1.0, -0.2, 0.3, 1.0])
    check_grads(E.clamp, (lo, x, hi), order=2)


def test_rank0_operand_broadcasts_and_its_gradient_sums():
    rng = np.random.default_rng(9)
    check_grads(E.mul, (ANY(rng), np.float64(0.7)), order=2)
    check_grads(E.div, (np.float64(0.7), NONZERO(rng)), order=2)


# ---------------------------------------------------------------- zero derivatives

ZERO_FLOAT_UNARY = ["sign", "floor", "ceil", "round"]
ZERO_PREDICATES = ["is_finite", "signbit"]
ZERO_COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]


def _exact_zero(x):
    """A zero tangent or cotangent: zeros, or JAX's float0 (an integer or bool value's,
    which has no values to be anything but zero)."""
    x = np.asarray(x)
    assert x.dtype == tf.dtypes.float0 or np.all(x == 0), x
    return True


@pytest.mark.parametrize("name", ZERO_FLOAT_UNARY + ["stop_gradient"])
def test_piecewise_constant_unary_has_exact_zero_derivative(name):
    # includes the jump points: sign at 0, floor/ceil at 1, round at 0.5 and 1.5
    x = np.array([0.0, 1.0, 0.5, 1.5, -0.7])
    fn = getattr(E, name)
    _, t = tf.jvp(fn, (x,), (np.ones_like(x),))
    _exact_zero(t)
    _, f_vjp = tf.vjp(fn, x)
    _exact_zero(f_vjp(np.ones_like(x))[0])
    for xi in x:
        _exact_zero(tf.grad(fn)(xi))
        _exact_zero(tf.grad(tf.grad(lambda v: E.mul(fn(v), v)))(xi))


def test_floor_div_has_exact_zero_derivative():
    x, y = np.array([2.3, -1.7, 3.0]), np.array([0.9, 0.8, 1.5])
    _, f_vjp = tf.vjp(E.floor_div, x, y)
    for g in f_vjp(np.ones(3)):
        _exact_zero(g)


@pytest.mark.parametrize("name", ZERO_PREDICATES)
def test_bool_valued_unary_gives_zero_cotangent(name):
    x = np.array([0.5, -0.0, -2.0])
    _, t = tf.jvp(getattr(E, name), (x,), (np.ones_like(x),))
    _exact_zero(t)
    _, f_vjp = tf.vjp(getattr(E, name), x)
    _exact_zero(f_vjp(np.zeros(3, bool))[0])


@pytest.mark.parametrize("name", ZERO_COMPARISONS)
def test_comparisons_give_zero_cotangents(name):
    x, y = np.array([0.5, 1.0, -2.0]), np.array([0.5, 0.0, 2.0])
    _, t = tf.jvp(getattr(E, name), (x, y), (np.ones(3), np.ones(3)))
    _exact_zero(t)

    def f(x, y):
        return E.mul(E.convert_element_type(getattr(E, name)(x, y), np.float64), x)

    gx, gy = tf.grad(lambda x, y: reduce_sum(f(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, getattr(np, _NP_CMP[name])(x, y).astype(float))
    _exact_zero(gy)


_NP_CMP = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
           "gt": "greater", "ge": "greater_equal"}


# ---------------------------------------------------------------- non-smooth points (JAX)

def test_abs_has_zero_derivative_at_zero():
    assert tf.grad(E.abs)(0.0) == 0.0
    assert tf.grad(E.abs)(-0.0) == 0.0
    assert tf.grad(E.abs)(np.complex128(0)) == 0.0


def test_max_and_min_split_ties_half_and_half():
    for op in (E.max, E.min):
        gx, gy = tf.grad(op, argnums=(0, 1))(1.5, 1.5)
        assert (gx, gy) == (0.5, 0.5)
        gx, gy = tf.grad(op, argnums=(0, 1))(1.0, 2.0)
        assert (gx, gy) == ((0.0, 1.0) if op is E.max else (1.0, 0.0))


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize("jitted", [False, True])
def test_max_and_min_weights_are_jaxs_at_ties_signed_zeros_infinities_and_nan(jitted):
    # JAX's rule as its source writes it: (a == ans) / (1 + (b == ans)), per operand
    nan, inf = np.nan, np.inf
    a = np.array([1.5, -0.0, 0.0, inf, -inf, inf, nan, 1.0, nan, 2.0, -1.0, 0.0])
    b = np.array([1.5, 0.0, -0.0, inf, -inf, 1.0, 1.0, nan, nan, 1.0, 3.0, 5.0])
    for op, np_op in ((E.max, np.maximum), (E.min, np.minimum)):
        ans = np_op(a, b)
        want = [(x == ans) / (1.0 + (y == ans)) for x, y in ((a, b), (b, a))]
        grad = tf.grad(lambda x, y: reduce_sum(op(x, y)), argnums=(0, 1))
        got = (tf.jit(grad) if jitted else grad)(a, b)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert not np.signbit(g).any()


def test_a_select_true_nowhere_hands_back_a_copy_of_its_other_operand():
    on_false = np.arange(6.0).reshape(2, 3)
    out = E.select_p.impl(np.zeros((2, 3), bool), np.ones((2, 3)), on_false)
    assert out is not on_false and out.dtype == on_false.dtype
    np.testing.assert_array_equal(out, on_false)
    out[0, 0] = 7.0
    assert on_false[0, 0] == 0.0
    # any true element, or a predicate that broadcasts, is np.where's
    pred = np.array([[False, True, False], [False, False, False]])
    np.testing.assert_array_equal(E.select_p.impl(pred, np.ones((2, 3)), on_false),
                                  np.where(pred, 1.0, on_false))
    np.testing.assert_array_equal(E.select_p.impl(np.zeros(3, bool), np.ones(3), on_false),
                                  on_false)


def test_clamp_at_either_bound_gives_zero_to_every_operand():
    for x in (-0.5, 0.5):
        grads = tf.grad(E.clamp, argnums=(0, 1, 2))(-0.5, x, 0.5)
        assert grads == (0.0, 0.0, 0.0), (x, grads)
    assert tf.grad(E.clamp, argnums=(0, 1, 2))(-0.5, 0.1, 0.5) == (0.0, 1.0, 0.0)
    assert tf.grad(E.clamp, argnums=(0, 1, 2))(-0.5, -0.9, 0.5) == (1.0, 0.0, 0.0)
    assert tf.grad(E.clamp, argnums=(0, 1, 2))(-0.5, 0.9, 0.5) == (0.0, 0.0, 1.0)


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value")
def test_pow_at_zero_base_and_zero_exponent_is_finite():
    gx, gy = tf.grad(E.pow, argnums=(0, 1))(0.0, 2.0)
    assert (gx, gy) == (0.0, 0.0)
    assert tf.grad(E.pow)(0.0, 0.0) == 0.0
    assert tf.grad(E.pow)(-2.0, 3.0) == pytest.approx(12.0)


def test_hypot_at_origin_is_finite():
    grads = tf.grad(E.hypot, argnums=(0, 1))(0.0, 0.0)
    assert np.all(np.isfinite(grads))


# ---------------------------------------------------------------- dtypes

@pytest.mark.parametrize("value", [np.int64(3), np.int32(3), np.bool_(True), 3])
def test_grad_wrt_integer_or_bool_input_raises_dtype_error(value):
    def f(n):
        return E.convert_element_type(n, np.float64)
    with pytest.raises(DTypeError):
        tf.grad(f)(value)


def test_vjp_gives_integer_inputs_float0_cotangents_as_jax():
    def f(x, n):
        return E.mul(x, E.convert_element_type(n, np.float64))
    _, f_vjp = tf.vjp(f, np.array([1.0, 2.0]), np.array([3, 4]))
    gx, gn = f_vjp(np.ones(2))
    np.testing.assert_array_equal(gx, [3.0, 4.0])
    assert gn.dtype == tf.dtypes.float0 and gn.shape == (2,)


# ---------------------------------------------------------------- ops.special

SPECIAL_DOMAINS = {
    "erfinv": (UNIT,), "erf_inv": (UNIT,), "erfcx": (ANY,), "lgamma": (POSITIVE,),
    "digamma": (POSITIVE,),
    "ndtri": (_interval(0.1, 0.9),), "log_ndtr": (_interval(-3.0, 3.0),),
    "xlogy": (ANY, POSITIVE), "xlog1py": (ANY, _interval(-0.5, 2.0)),
}


def test_every_special_primitive_has_its_derivatives_checked():
    """Each special primitive's derivatives are checked here (a domain below) or, for the
    ones ``tf_numba.scipy.special`` added with their own domains and tails, by name in
    tests/test_scipy_special.py."""
    from tf_numba.ops import special
    here = os.path.dirname(__file__)
    scipy_tests = "".join(open(os.path.join(here, name)).read()
                          for name in ("test_scipy_special.py", "test_scipy_stats.py"))
    # the parameter derivatives of gammainc and betainc are checked as gammainc's and
    # betainc's derivatives in a and b; discrete quantiles are steps (zero derivative)
    through = {"gammainc_da": "gammainc", "betainc_dab": "betainc", "binom": "comb",
               "fresnel_s": "fresnel", "fresnel_c": "fresnel", "sici_si": "sici",
               "sici_ci": "sici", "hyp2f1_dabc": "test_hyp2f1_parameter_derivatives_match_mpmath",
               "discrete_quantile": "test_discrete_quantiles_are_step_functions_without_derivative"}
    unchecked = [name for name in special.PRIMS
                 if name not in SPECIAL_DOMAINS and name != "polygamma"
                 and not re.search(rf"\b{through.get(name, name)}\b", scipy_tests)]
    assert not unchecked, unchecked


@pytest.mark.parametrize("name", sorted(SPECIAL_DOMAINS))
def test_special_function_derivatives_match_finite_differences(name):
    from tf_numba.ops import special
    rng = np.random.default_rng(10)
    args = tuple(sample(rng) for sample in SPECIAL_DOMAINS[name])
    check_grads(getattr(special, name), args, order=2)


def test_polygamma_differentiates_in_x_but_not_in_its_order():
    from tf_numba.errors import MissingRuleError
    from tf_numba.ops import special
    x = POSITIVE(np.random.default_rng(11))
    for n in (0.0, 1.0, 2.0):
        check_grads(lambda x: special.polygamma(n, x), (x,), order=2)
    with pytest.raises(MissingRuleError):
        tf.grad(lambda n: special.polygamma(n, 1.5))(1.0)


def test_xlogy_is_zero_with_zero_gradient_in_y_where_x_is_zero():
    from tf_numba.ops import special
    gx, gy = tf.grad(special.xlogy, argnums=(0, 1))(0.0, 0.5)
    assert gx == pytest.approx(np.log(0.5)) and gy == 0.0
