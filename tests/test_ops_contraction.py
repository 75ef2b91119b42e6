import numpy as np
import pytest

from _ops_checks import ALL, check_grads, evaluate, rand
from tf_numba.api import vjp
from tf_numba.errors import DTypeError, ShapeError
from tf_numba.ops import contraction as C

# (lhs shape, rhs shape, dimension_numbers, einsum reference)
CASES = [
    ((2, 3), (3, 4), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    ((3,), (3,), (((0,), (0,)), ((), ())), "i,i->"),
    ((2, 3), (4,), (((), ()), ((), ())), "ij,k->ijk"),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
    # batch dims not leading, two contracting dims paired out of order, free dims between
    ((3, 2, 4, 5), (4, 6, 5, 3), (((2, 0), (0, 3)), ((3,), (2,))), "aibc,bjca->cij"),
    ((2, 0), (0, 3), (((1,), (0,)), ((), ())), "ij,jk->ik"),
]


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("lhs,rhs,dims,ref", CASES)
def test_dot_general_matches_einsum(rng, dtype, lhs, rhs, dims, ref):
    a, b = rand(rng, lhs, dtype), rand(rng, rhs, dtype)
    out = evaluate(lambda a, b: C.dot_general(a, b, dims), a, b)
    assert out.dtype == dtype
    expected = np.einsum(ref, a, b)
    if dtype == np.bool_:
        expected = np.einsum(ref, a.astype(int), b.astype(int)) > 0
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tol, atol=tol)


def test_preferred_element_type_accumulates_wider(rng):
    a = np.full((1, 3), 2**30, np.int32)
    b = np.ones((3, 1), np.int32)
    out = evaluate(lambda a, b: C.dot_general(a, b, (((1,), (0,)), ((), ())), np.int64), a, b)
    assert out.dtype == np.int64 and out[0, 0] == 3 * 2**30
    with pytest.raises(DTypeError, match="int32"):
        C.dot_general(np.ones(2), np.ones(2), (((0,), (0,)), ((), ())), np.int32)


def test_contracting_size_mismatch_names_shapes_and_dims():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4, 5\).*lhs dim 1 is 3, rhs dim 0 is 4"):
        C.dot_general(np.ones((2, 3)), np.ones((4, 5)), (((1,), (0,)), ((), ())))
    with pytest.raises(ShapeError, match="batch"):
        C.dot_general(np.ones((2, 3)), np.ones((4, 3)), (((1,), (1,)), ((0,), (0,))))


def test_dot_general_errors():
    with pytest.raises(DTypeError, match="float64 and float32"):
        C.dot_general(np.ones(2), np.ones(2, np.float32), (((0,), (0,)), ((), ())))
    with pytest.raises(ShapeError):
        C.dot_general(np.ones(2), np.ones(2), (((0,), (0,)), ((0,), (0,))))
    with pytest.raises(ShapeError):
        C.dot_general(np.ones(2), np.ones(2), (((1,), (0,)), ((), ())))


@pytest.mark.parametrize("lhs,rhs,dims,ref", CASES[:5])
def test_dot_general_derivatives(rng, lhs, rhs, dims, ref):
    args = [rand(rng, lhs), rand(rng, rhs)]
    check_grads(lambda a, b: C.dot_general(a, b, dims), args, rng)


def test_dot_general_derivative_in_one_operand(rng):
    b = rand(rng, (3, 4))
    check_grads(lambda a: C.dot_general(a, b, (((1,), (0,)), ((), ()))), [rand(rng, (2, 3))], rng)
    a = rand(rng, (3, 2))
    check_grads(lambda b: C.dot_general(a, b, (((0,), (0,)), ((), ()))), [rand(rng, (3, 4))], rng)


def test_preferred_element_type_cotangents_keep_operand_dtypes(rng):
    a, b = rand(rng, (2, 3), np.float32), rand(rng, (3, 4), np.float32)
    dims = (((1,), (0,)), ((), ()))
    out, vjp_fn = vjp(lambda a, b: C.dot_general(a, b, dims, np.float64), a, b)
    assert out.dtype == np.float64
    ct = rand(rng, (2, 4))
    ct_a, ct_b = vjp_fn(ct)
    assert ct_a.dtype == ct_b.dtype == np.float32
    np.testing.assert_allclose(ct_a, ct @ b.T.astype(np.float64), rtol=1e-5)
    np.testing.assert_allclose(ct_b, a.T.astype(np.float64) @ ct, rtol=1e-5)


def test_complex_derivatives(rng):
    args = [rand(rng, (5, 2, 3), np.complex128), rand(rng, (5, 3, 4), np.complex128)]
    check_grads(lambda a, b: C.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), args, rng)


def test_integer_products_may_accumulate_in_any_float():
    # as JAX's int8 x int8 -> float32: int32 does not cast safely to float32, yet it may
    # accumulate there (the products are rounded once, like JAX's)
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = evaluate(lambda a: C.dot_general(a, a, (((1,), (1,)), ((), ())), np.float32), a)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, (a @ a.T).astype(np.float32))


def test_precision_names_and_pairs_are_accepted_and_others_are_errors():
    from tf_numba.errors import ArgumentError
    P = C.Precision
    assert P("highest") is P("float32") is P.HIGHEST and P("tensorfloat32") is P.HIGH
    assert P("fastest") is P("bfloat16") is P.DEFAULT and str(P.HIGH) == "HIGH"
    for ok in (None, P.HIGH, "default", ("high", "highest"), [P.DEFAULT, P.HIGHEST]):
        C.check_precision(ok, "dot")
    for bad in ("fast", 3, (P.HIGH, "nope"), (P.HIGH,) * 3):
        with pytest.raises(ArgumentError, match="dot: precision"):
            C.check_precision(bad, "dot")
