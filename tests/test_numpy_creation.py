"""tnp array creation against NumPy, eagerly and traced (where the values come from iota
and broadcasts instead of embedded constants)."""
import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, DTypeError

from conftest import assert_same, check, run_traced


def _both(fn, expected):
    """``fn()`` eagerly and inside a trace (with a dummy input) against ``expected``."""
    assert_same(fn(), expected, what="eager")
    out = run_traced(lambda _: fn(), np.zeros(1))
    assert_same(out, expected, check_type=False, what="traced")


@pytest.mark.parametrize("dtype", [None, np.float32, np.int32, np.int64, np.bool_,
                                   np.complex128])
def test_constant_fills(dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    for name in ["zeros", "ones", "empty"]:
        expected = getattr(np, name)((2, 3), **kwargs)
        if name == "empty":
            expected = np.zeros((2, 3), **kwargs)
        _both(lambda: getattr(tnp, name)((2, 3), **kwargs), expected)
        _both(lambda: getattr(tnp, name)(3, **kwargs), np.zeros(3, **kwargs) + (
            name == "ones"))
    _both(lambda: tnp.full((2, 2), 7, **kwargs), np.full((2, 2), 7, **kwargs))
    _both(lambda: tnp.full((2, 2), np.array([1, 2]), **kwargs),
          np.full((2, 2), np.array([1, 2]), **kwargs))


def test_full_takes_the_fill_values_dtype():
    _both(lambda: tnp.full(3, 2.5), np.full(3, 2.5))
    _both(lambda: tnp.full(3, np.float32(2.5)), np.full(3, np.float32(2.5)))
    _both(lambda: tnp.full((), True), np.full((), True))


def test_full_with_a_traced_fill_value():
    out = run_traced(lambda v: tnp.full((2, 3), v), np.float32(1.5))
    assert_same(out, np.full((2, 3), np.float32(1.5)), check_type=False)


@pytest.mark.parametrize("dtype", [None, np.float32, np.int32])
def test_like_functions(dtype):
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    for name in ["zeros_like", "ones_like"]:
        check(lambda a: getattr(tnp, name)(a, dtype=dtype),
              lambda a: getattr(np, name)(a, dtype=dtype), x)
    check(lambda a: tnp.full_like(a, 4, dtype=dtype), lambda a: np.full_like(a, 4, dtype=dtype),
          x)
    assert tnp.empty_like(x, dtype=dtype).shape == x.shape
    check(lambda a: tnp.zeros_like(a, shape=(4,)), lambda a: np.zeros_like(a, shape=(4,)), x)


ARANGES = [(5,), (1, 7, 2), (0.0, 1.0, 0.1), (2, -3, -1), (0, 5, 0.5), (np.float32(0.5), 3),
           (3, 3), (0.1, 0.95, 0.2), (-1.5, 2.0, 0.7)]


@pytest.mark.parametrize("args", ARANGES, ids=repr)
@pytest.mark.parametrize("dtype", [None, np.float32, np.int32])
def test_arange_matches_numpy_exactly(args, dtype):
    try:
        with np.errstate(all="ignore"):
            expected = np.arange(*args, dtype=dtype)
    except (TypeError, ValueError) as err:      # (float steps with an int dtype, at times)
        with pytest.raises(type(err)):
            tnp.arange(*args, dtype=dtype)
        return
    _both(lambda: tnp.arange(*args, dtype=dtype), expected)


def test_arange_under_trace_is_an_iota_not_a_constant():
    from tf_numba.core.ir import aval_of_value
    from tf_numba.core.trace import trace
    program, _ = trace(lambda _: [tnp.arange(0, 100, 3)], [aval_of_value(np.zeros(1))])
    assert not program.consts
    assert any(e.prim.name == "iota" for e in program.eqns)


def test_arange_needs_concrete_bounds():
    with pytest.raises(ConcretizationError):
        run_traced(lambda n: tnp.arange(n), np.array(3))


LINSPACES = [dict(start=0, stop=1, num=5), dict(start=0, stop=1, num=5, endpoint=False),
             dict(start=-2.5, stop=7, num=13), dict(start=1, stop=1, num=3),
             dict(start=0, stop=1, num=1), dict(start=0, stop=1, num=0),
             dict(start=0, stop=10, num=4, dtype=np.int64),
             dict(start=np.float32(0), stop=np.float32(3), num=7),
             dict(start=np.array([0.0, 1.0]), stop=np.array([1.0, 3.0]), num=4),
             dict(start=np.array([0.0, 1.0]), stop=5.0, num=3, axis=1),
             dict(start=0, stop=1, num=4, retstep=True),
             dict(start=1e-30, stop=1e-30 + 1e-45, num=3)]


@pytest.mark.parametrize("kwargs", LINSPACES, ids=lambda k: repr(sorted(k.items())))
def test_linspace_matches_numpy(kwargs):
    _both(lambda: tnp.linspace(**kwargs), np.linspace(**kwargs))


def test_linspace_with_traced_end_points():
    start, stop = np.array([0.0, 2.0]), np.array([1.0, -1.0])
    check(lambda a, b: tnp.linspace(a, b, 5), lambda a, b: np.linspace(a, b, 5), start, stop)


@pytest.mark.parametrize("kwargs", [dict(start=0, stop=2, num=3), dict(start=0, stop=2, num=4,
                                                                       base=2.0),
                                    dict(start=np.float32(0), stop=np.float32(1), num=3),
                                    dict(start=0, stop=2, num=3, endpoint=False)],
                         ids=repr)
def test_logspace_matches_numpy(kwargs):
    expected = np.logspace(**kwargs)
    out = tnp.logspace(**kwargs)
    assert_same(out, expected, exact=False)


def test_geomspace_matches_numpy_for_positive_end_points():
    for args in [(1, 1000, 4), (2.0, 32.0, 5), (1, 10, 4)]:
        assert_same(tnp.geomspace(*args), np.geomspace(*args), exact=False)
        assert_same(tnp.geomspace(*args, endpoint=False), np.geomspace(*args, endpoint=False),
                    exact=False)


@pytest.mark.parametrize("args", [(3,), (2, 4), (4, 2, 1), (3, 3, -1), (3, 5, 7), (0,)],
                         ids=repr)
@pytest.mark.parametrize("dtype", [float, np.int32, np.bool_, np.complex128])
def test_eye_identity_tri(args, dtype):
    _both(lambda: tnp.eye(*args, dtype=dtype), np.eye(*args, dtype=dtype))
    _both(lambda: tnp.tri(*args, dtype=dtype), np.tri(*args, dtype=dtype))
    _both(lambda: tnp.identity(args[0], dtype=dtype), np.identity(args[0], dtype=dtype))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = [np.arange(3), np.linspace(0, 1, 2), np.array([5.0, 6.0, 7.0, 8.0])]
    for n in (1, 2, 3):
        check(lambda *a: tnp.meshgrid(*a, indexing=indexing, sparse=sparse),
              lambda *a: np.meshgrid(*a, indexing=indexing, sparse=sparse), *xs[:n])


def test_indices_and_fromfunction():
    _both(lambda: tnp.indices((2, 3)), np.indices((2, 3)))
    _both(lambda: tnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True))
    _both(lambda: tnp.indices((2, 3), dtype=np.int32), np.indices((2, 3), dtype=np.int32))
    _both(lambda: tnp.fromfunction(lambda i, j: i * 10 + j, (2, 3)),
          np.fromfunction(lambda i, j: i * 10 + j, (2, 3)))


def test_array_and_asarray():
    assert_same(tnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    assert_same(tnp.array([1, 2], dtype=np.float32), np.array([1, 2], dtype=np.float32))
    assert_same(tnp.array(3.0), np.array(3.0))
    assert_same(tnp.array([1, 2], ndmin=3), np.array([1, 2], ndmin=3))
    x = np.arange(3.0)
    assert tnp.asarray(x) is x
    assert_same(tnp.asarray([1.5, 2]), np.asarray([1.5, 2]))
    assert_same(tnp.asarray(x, dtype=np.int32), np.asarray(x, dtype=np.int32))
    copied = tnp.copy(x)
    assert copied is not x and np.array_equal(copied, x)


def test_array_of_lists_holding_tracers_stacks_them():
    a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    check(lambda x, y: tnp.array([x, y]), lambda x, y: np.array([x, y]), a, b)
    check(lambda x, y: tnp.array([[x[0], 2.0], [y[1], x[1]]]),
          lambda x, y: np.array([[x[0], 2.0], [y[1], x[1]]]), a, b)
    check(lambda x: tnp.asarray(x, dtype=np.float64), lambda x: x.astype(np.float64), a)


def test_narrow_dtypes_are_kept_and_others_rejected():
    assert_same(tnp.array(np.array([1, 2], np.uint8)), np.array([1, 2], np.uint8))
    assert_same(tnp.zeros(2, np.float16), np.zeros(2, np.float16))
    with pytest.raises(DTypeError):
        tnp.zeros(2, dtype=np.longdouble)


def test_array_conversion_aliases():
    x = np.arange(3.0)
    for name in ["asanyarray", "ascontiguousarray"]:
        assert_same(getattr(tnp, name)(x), getattr(np, name)(x))
        assert_same(getattr(tnp, name)([1, 2], dtype=np.float32),
                    getattr(np, name)([1, 2], dtype=np.float32))
        check(getattr(tnp, name), getattr(np, name), x)
