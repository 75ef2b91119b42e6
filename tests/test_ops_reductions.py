import numpy as np
import pytest

from _ops_checks import ALL, FLOATS, INTS, NUMERIC, check_grads, evaluate, rand
from tf_numba.api import grad, jvp, make_program
from tf_numba.errors import DTypeError, ShapeError
from tf_numba.ops import elementwise as E
from tf_numba.ops import layout as L
from tf_numba.ops import reductions as R


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _close(dtype):
    return dict(rtol=1e-5, atol=1e-5) if np.dtype(dtype) in (np.float32, np.complex64) \
        else dict(rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- impl and abstract eval

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name,ufunc", [("reduce_sum", np.add), ("reduce_prod", np.multiply),
                                        ("reduce_max", np.maximum),
                                        ("reduce_min", np.minimum)])
def test_a_short_last_axis_reduces_to_numpys_bits(rng, dtype, name, ufunc):
    # the interpreter reduces a short last axis column by column (_reduce_with): the same
    # bits as NumPy's reduce, signed zeros, NaN, inf and integer wrap-around included
    prim = R.PRIMS[name]
    if np.dtype(dtype) == np.bool_ and name in ("reduce_sum", "reduce_prod"):
        return
    for shape in [(64, 2), (50, 7), (3, 40, 5), (200, 3), (40, 8), (5, 3), (2, 6, 4)]:
        x = rand(rng, shape, dtype) * (100 if np.dtype(dtype).kind in "fc" else 1)
        x = x.astype(dtype)
        if np.dtype(dtype).kind in "fc":
            x.flat[::7], x.flat[1::11], x.flat[3::13], x.flat[5::17] = 0, -0.0, np.nan, np.inf
        axes = (x.ndim - 1,)
        cast = {"dtype": x.dtype} if name in ("reduce_sum", "reduce_prod") else {}
        with np.errstate(all="ignore"):
            got, want = prim.impl(x, axes=axes), ufunc.reduce(x, axis=axes, **cast)
        assert got.dtype == want.dtype and got.shape == want.shape
        if ufunc in (np.maximum, np.minimum) and np.dtype(dtype).kind == "f":
            # np.maximum of +0 and -0 returns its first operand, so which zero a reduce
            # keeps depends on the order it visits the axis in, and NumPy's SIMD reduce
            # visits it in another order on AVX2 than on AVX-512: a zero is any zero
            # (every other value, NaN and inf included, still bit for bit)
            zeros = want == 0
            assert (got[zeros] == 0).all(), (shape, got, want)
            got, want = np.where(zeros, 0.0, got), np.where(zeros, 0.0, want)
        assert got.tobytes() == want.tobytes(), (shape, got, want)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name,ref", [("reduce_sum", np.sum), ("reduce_prod", np.prod)])
def test_sum_prod_match_numpy_and_keep_dtype(rng, dtype, name, ref):
    x = rand(rng, (2, 3, 4), dtype)
    out = evaluate(lambda x: getattr(R, name)(x, (0, 2)), x)
    assert out.dtype == dtype and out.shape == (3,)
    np.testing.assert_allclose(out, ref(x, axis=(0, 2)).astype(dtype), **_close(dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name,ref", [("reduce_max", np.max), ("reduce_min", np.min)])
def test_max_min_match_numpy(rng, dtype, name, ref):
    x = rand(rng, (3, 4), dtype)
    np.testing.assert_array_equal(evaluate(lambda x: getattr(R, name)(x, 1), x), ref(x, 1))


def test_max_propagates_nan():
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 0.0]])
    np.testing.assert_array_equal(R.reduce_max(x, 1), [np.nan, 2.0])
    np.testing.assert_array_equal(R.reduce_min(x, 1), [np.nan, 0.0])


@pytest.mark.parametrize("name,ref", [("reduce_and", np.all), ("reduce_or", np.any)])
def test_and_or_match_numpy(rng, name, ref):
    x = rand(rng, (3, 4), np.bool_)
    np.testing.assert_array_equal(evaluate(lambda x: getattr(R, name)(x, None), x), ref(x))
    with pytest.raises(DTypeError, match="bool"):
        getattr(R, name)(np.ones(3), 0)


def test_reduce_errors():
    with pytest.raises(DTypeError, match="bool"):
        R.reduce_sum(np.ones(3, bool), 0)
    with pytest.raises(ShapeError, match="out of bounds"):
        R.reduce_sum(np.ones(3), 1)
    with pytest.raises(ShapeError, match="zero-size"):
        R.reduce_max(np.ones((0, 2)), 0)


def test_empty_axes_return_the_operand():
    x = np.ones((2, 3))
    assert R.reduce_sum(x, ()) is x
    assert len(make_program(lambda x: R.reduce_max(x, ()))(x)) == 0


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("index_dtype", INTS)
def test_argmax_argmin_match_numpy(rng, dtype, index_dtype):
    x = rand(rng, (3, 5), dtype)
    for name in ("argmax", "argmin"):
        out = evaluate(lambda x: getattr(R, name)(x, 1, index_dtype), x)
        assert out.dtype == index_dtype
        np.testing.assert_array_equal(out, getattr(np, name)(x, 1))


def test_argmax_first_nan_wins():
    x = np.array([1.0, np.nan, 5.0, np.nan])
    assert R.argmax(x, 0) == 1 and R.argmin(x, 0) == 1
    with pytest.raises(ShapeError):
        R.argmax(np.ones((2, 0)), 1)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_cumprod_match_numpy(rng, dtype, reverse):
    x = rand(rng, (3, 4), dtype)
    flip = (lambda a: a[:, ::-1]) if reverse else (lambda a: a)
    for name, ref in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
        out = evaluate(lambda x: getattr(R, name)(x, 1, reverse), x)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, flip(ref(flip(x), 1)), **_close(dtype))


@pytest.mark.parametrize("dtype", FLOATS + INTS + (np.bool_,))
@pytest.mark.parametrize("reverse", [False, True])
def test_cummax_cummin_match_numpy(rng, dtype, reverse):
    x = rand(rng, (3, 5), dtype)
    flip = (lambda a: a[::-1]) if reverse else (lambda a: a)
    for name, ref in (("cummax", np.maximum), ("cummin", np.minimum)):
        out = evaluate(lambda x: getattr(R, name)(x, 0, reverse), x)
        np.testing.assert_array_equal(out, flip(ref.accumulate(flip(x), 0)))


def test_scan_errors():
    with pytest.raises(DTypeError):
        R.cumsum(np.ones(3, bool), 0)
    with pytest.raises(ShapeError):
        R.cumprod(np.ones(3), 1)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_matches_loop(rng, dtype, reverse):
    a, b = rand(rng, (4, 3), dtype), rand(rng, (4, 3), dtype)
    out = evaluate(lambda a, b: R.linear_recurrence(a, b, 0, reverse), a, b)
    h, ref = np.zeros(3, dtype), np.zeros_like(b)
    for i in (range(3, -1, -1) if reverse else range(4)):
        h = a[i] * h + b[i]
        ref[i] = h
    np.testing.assert_allclose(out, ref, **_close(dtype))


# ---------------------------------------------------------------- derivatives

def test_reduce_sum_derivatives(rng):
    check_grads(lambda x: R.reduce_sum(x, (0, 2)), [rand(rng, (2, 3, 4))], rng)


def test_reduce_prod_derivatives(rng):
    check_grads(lambda x: R.reduce_prod(x, (0, 2)), [rand(rng, (2, 3, 2))], rng)


def test_reduce_prod_gradient_is_exact_at_zeros():
    x = np.array([2.0, 0.0, 3.0, 0.5])
    np.testing.assert_allclose(grad(lambda x: R.reduce_prod(x, 0))(x), [0, 3.0, 0, 0])
    x = np.array([2.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(grad(lambda x: R.reduce_prod(x, 0))(x), [0, 0, 0, 0])
    # second derivative d2/dx1 dx3 prod = x0 * x2 = 6, taken through the first one
    def second_component_of_gradient(x):
        return L.reshape(L.slice_(grad(lambda y: R.reduce_prod(y, 0))(x), (1,), (2,)), ())
    hess_row = grad(second_component_of_gradient)(x)
    np.testing.assert_allclose(hess_row, [0, 0, 0, 6.0])


def test_reduce_prod_with_zeros_derivatives(rng):
    x = rand(rng, (3, 4))
    x[1, 2] = 0.0
    x[0, 0] = x[0, 3] = 0.0
    check_grads(lambda x: R.reduce_prod(x, 1), [x], rng)


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_max_min_derivatives(rng, name):
    check_grads(lambda x: getattr(R, name)(x, (1,)), [rand(rng, (3, 4))], rng)


def test_max_gradient_averages_ties():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(grad(lambda x: R.reduce_max(x, 0))(x), [0, 0.5, 0.5, 0])


@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_derivatives(rng, reverse):
    check_grads(lambda x: R.cumsum(x, 1, reverse), [rand(rng, (2, 4))], rng)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_derivatives(rng, reverse):
    check_grads(lambda x: R.cumprod(x, 1, reverse), [rand(rng, (2, 4))], rng)


def test_cumprod_derivative_is_exact_with_zeros(rng):
    x = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 2.0]])
    check_grads(lambda x: R.cumprod(x, 1), [x], rng)
    check_grads(lambda x: R.cumprod(x, 1, True), [x], rng)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("reverse", [False, True])
def test_cummax_cummin_derivatives(rng, name, reverse):
    check_grads(lambda x: getattr(R, name)(x, 1, reverse), [rand(rng, (3, 5))], rng)


@pytest.mark.parametrize("reverse", [False, True])
def test_linear_recurrence_derivatives(rng, reverse):
    args = [rand(rng, (4, 2)), rand(rng, (4, 2))]
    check_grads(lambda a, b: R.linear_recurrence(a, b, 0, reverse), args, rng)


def test_argmax_has_zero_derivative(rng):
    x = rand(rng, (4,))

    def f(x):
        index = E.convert_element_type(R.argmax(x, 0), np.float64)
        return E.mul(R.reduce_sum(x, 0), index)
    np.testing.assert_allclose(grad(f)(x), np.full(4, float(np.argmax(x))))


def test_complex_derivatives(rng):
    z = lambda shape: rand(rng, shape, np.complex128)  # noqa: E731
    check_grads(lambda x: R.reduce_prod(x, (1,)), [z((2, 3))], rng)
    check_grads(lambda x: R.cumprod(x, 1, True), [z((2, 3))], rng)
    check_grads(lambda x: R.cumsum(x, 0), [z((3, 2))], rng)
    check_grads(lambda a, b: R.linear_recurrence(a, b, 0), [z((3, 2)), z((3, 2))], rng)


@pytest.mark.parametrize("reverse", [False, True])
def test_cummax_derivative_with_nan_does_not_raise(reverse):
    x = np.array([1.0, 3.0, 2.0, np.nan])  # reversed, no running max is ever attained
    out, tangent = jvp(lambda x: R.cummax(x, 0, reverse), (x,), (np.ones(4),))
    finite = ~np.isnan(out)
    np.testing.assert_array_equal(tangent[finite], np.ones(finite.sum()))
