"""tnp products (dot, matmul, tensordot, ...) against NumPy, eagerly and traced."""
import itertools

import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError

from conftest import DTYPES, check, sample

RNG = np.random.default_rng(0)

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((3,), (5, 3, 4)),
                 ((5, 2, 3), (3,)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                 ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 2)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=repr)
def test_matmul_shapes(sa, sb):
    a, b = sample(np.float64, sa, RNG), sample(np.float64, sb, RNG)
    check(tnp.matmul, np.matmul, a, b, exact=False)
    check(lambda x, y: x @ y, np.matmul, a, b, exact=False)


PAIRS = list(itertools.product(DTYPES, DTYPES))


@pytest.mark.parametrize("dt1,dt2", PAIRS,
                         ids=[f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in PAIRS])
def test_products_promote_like_numpy(dt1, dt2):
    a, b = sample(dt1, (2, 3), RNG), sample(dt2, (3, 4), RNG)
    exact = np.dtype(dt1).kind in "biu" and np.dtype(dt2).kind in "biu"
    check(tnp.matmul, np.matmul, a, b, exact=exact)
    check(tnp.dot, np.dot, a, b, exact=exact)
    check(tnp.inner, np.inner, a, b.T, exact=exact)
    check(tnp.outer, np.outer, a, b, exact=True)
    check(tnp.vdot, np.vdot, a, b[:, :2].T, exact=exact)
    check(tnp.kron, np.kron, a, b, exact=True)


@pytest.mark.parametrize("sa,sb", [((2, 3), (3,)), ((2, 3), (4, 3, 5)), ((3,), (3,)),
                                   ((), (2, 2)), ((2, 3, 4), (4,)), ((3,), (3, 2))], ids=repr)
def test_dot_and_inner_shapes(sa, sb):
    a, b = sample(np.float32, sa, RNG), sample(np.float32, sb, RNG)
    check(tnp.dot, np.dot, a, b, exact=False)
    bi = np.moveaxis(b, -2, -1) if b.ndim >= 2 else b
    check(tnp.inner, np.inner, a, bi, exact=False)


TENSORDOTS = [((3, 4), (5, 2), 0), ((3, 4), (4, 2), 1), ((3, 4, 5), (4, 5, 2), 2),
              ((3, 4, 5), (4, 3, 2), ([1, 0], [0, 1])), ((3, 4, 5), (2, 5), ([2], [1])),
              ((3, 4, 5), (5, 2, 3), ([0, 2], [2, 0])), ((3, 4), (3, 4), 2)]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOTS, ids=repr)
def test_tensordot(sa, sb, axes):
    a, b = sample(np.float64, sa, RNG), sample(np.float64, sb, RNG)
    check(lambda x, y: tnp.tensordot(x, y, axes), lambda x, y: np.tensordot(x, y, axes), a, b,
          exact=False)


def test_tensordot_over_an_axis_of_a_0d_operand_is_a_shape_error():
    # found by the fuzzer: it raised a bare IndexError (as NumPy does)
    for a, b in [(np.ones((2, 8)), np.float64(3.0)), (np.array(2.0), np.ones(3))]:
        with pytest.raises(ShapeError, match="0-d operand"):
            tnp.tensordot(a, b, axes=([0], [0]))


@pytest.mark.parametrize("offset", [-1, 0, 2])
def test_trace(offset):
    for dtype in [np.int32, np.float32, np.bool_]:
        a = sample(dtype, (3, 4, 2), RNG)
        check(lambda x: tnp.trace(x, offset), lambda x: np.trace(x, offset), a)
        check(lambda x: tnp.trace(x, offset, 1, 2), lambda x: np.trace(x, offset, 1, 2), a)
    check(lambda x: tnp.trace(x, dtype=np.float64), lambda x: np.trace(x, dtype=np.float64),
          sample(np.int32, (3, 3), RNG))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors:DeprecationWarning")
@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((4, 3), (3,)), ((2, 1, 3), (4, 3)),
                                   ((2,), (3,)), ((3,), (2,)), ((2,), (2,)), ((5, 2), (5, 2))],
                         ids=repr)
def test_cross(sa, sb):
    a, b = sample(np.float64, sa, RNG), sample(np.float64, sb, RNG)
    if sa[-1] == 2 and sb[-1] == 2:
        with pytest.warns(DeprecationWarning):
            expected = np.cross(a, b)
        check(tnp.cross, lambda x, y: expected, a, b)
        return
    check(tnp.cross, np.cross, a, b)
    ai, bi = sample(np.int64, sa, RNG), sample(np.int64, sb, RNG)
    check(tnp.cross, np.cross, ai, bi)


def test_cross_axes():
    a, b = sample(np.float64, (3, 4), RNG), sample(np.float64, (4, 3), RNG)
    check(lambda x, y: tnp.cross(x, y, axisa=0, axisb=1, axisc=0),
          lambda x, y: np.cross(x, y, axisa=0, axisb=1, axisc=0), a, b)


def test_vecdot_matvec_vecmat():
    a = sample(np.complex128, (2, 3), RNG)
    b = sample(np.complex128, (3,), RNG)
    m = sample(np.complex128, (4, 2, 3), RNG)
    check(tnp.vecdot, np.vecdot, a, b, exact=False)
    check(lambda x, y: tnp.vecdot(x, y, axis=0), lambda x, y: np.vecdot(x, y, axis=0),
          a.T, a.T, exact=False)
    check(tnp.matvec, np.matvec, m, b, exact=False)
    check(tnp.vecmat, np.vecmat, a[:, 0], m, exact=False)


def test_shape_mismatches_name_the_function_and_shapes():
    with pytest.raises(ShapeError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        tnp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ShapeError, match="dot"):
        tnp.dot(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ShapeError, match="matmul"):
        tnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4)))
    with pytest.raises(ShapeError, match="matmul"):
        tnp.matmul(np.float64(1.0), np.ones(3))
    with pytest.raises(ShapeError, match="tensordot"):
        tnp.tensordot(np.ones((2, 3)), np.ones((2, 3)), ([0], [1]))


# ---------------------------------------------------------------- JAX's keywords

def test_jax_precision_and_preferred_element_type_on_products():
    from tf_numba import lax
    from tf_numba.errors import ArgumentError
    rng = np.random.default_rng(3)
    a32, b32 = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 2)).astype(
        np.float32)
    wide = a32.astype(np.float64) @ b32.astype(np.float64)
    for fn in (tnp.dot, tnp.matmul, lambda a, b, **k: tnp.einsum("ij,jk->ik", a, b, **k),
               lambda a, b, **k: tnp.tensordot(a, b, 1, **k),
               lambda a, b, **k: tnp.inner(a, b.T, **k)):
        same = fn(a32, b32, precision=lax.Precision.HIGHEST)
        assert same.dtype == np.float32
        np.testing.assert_allclose(same, wide, rtol=1e-5)
        out = fn(a32, b32, precision=("high", "highest"), preferred_element_type=np.float64)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, wide, rtol=1e-14)
        with pytest.raises(ArgumentError, match="precision"):
            fn(a32, b32, precision="fast")
    v = tnp.vdot(a32, a32, preferred_element_type=np.float64)
    assert v.dtype == np.float64
    np.testing.assert_allclose(v, np.sum(a32.astype(np.float64) ** 2), rtol=1e-14)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = tnp.matmul(ints, ints.T, preferred_element_type=np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, (ints @ ints.T).astype(np.float32))
    assert tnp.dot(2.0, a32, preferred_element_type=np.float64).dtype == np.float64
