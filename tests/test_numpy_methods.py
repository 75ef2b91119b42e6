"""Operators, methods and properties of traced arrays: NumPy's result dtypes and shapes."""
import operator

import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError

from conftest import DTYPES, assert_same, numpy_reference, run_traced, sample

RNG = np.random.default_rng(0)

BINARY_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv,
                    operator.floordiv, operator.mod, operator.pow, operator.eq, operator.ne,
                    operator.lt, operator.le, operator.gt, operator.ge, operator.and_,
                    operator.or_, operator.xor]


def _same_as_numpy(fn, *args, exact=True):
    try:
        expected = numpy_reference(fn, args)
    except (TypeError, ValueError, ZeroDivisionError):
        with pytest.raises((TypeError, ValueError)):
            run_traced(fn, *args)
        return
    with np.errstate(all="ignore"):
        out = run_traced(fn, *args)
    assert_same(out, np.asarray(expected), exact=exact, check_type=False)


@pytest.mark.parametrize("dt2", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dt1", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", BINARY_OPERATORS, ids=lambda o: o.__name__)
def test_binary_operators_follow_numpy(op, dt1, dt2):
    a = sample(dt1, (2, 3), RNG, "positive")
    b = sample(dt2, (3,), RNG, "small" if op is operator.pow else "positive")
    _same_as_numpy(op, a, b)


@pytest.mark.parametrize("scalar", [2, 2.5, True, 1j], ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", BINARY_OPERATORS, ids=lambda o: o.__name__)
def test_operators_with_python_scalars_both_sides(op, dtype, scalar):
    a = sample(dtype, (4,), RNG, "positive")
    if op is operator.pow and dtype is np.bool_ and scalar == 2:
        pytest.skip("NumPy's bool_array ** 2 is its square (int8); np.power promotes as tnp")
    _same_as_numpy(lambda x: op(x, scalar), a)
    _same_as_numpy(lambda x: op(scalar, x), a)


def test_ndarray_on_the_left_defers_to_the_tracer():
    a = np.arange(1.0, 4.0)
    _same_as_numpy(lambda x: a + x, np.ones(3, np.float32))
    _same_as_numpy(lambda x: a @ x, np.ones(3))
    _same_as_numpy(lambda x: a < x, np.ones(3))
    _same_as_numpy(lambda x: np.float32(2) * x, np.ones(3, np.int32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_unary_operators(dtype):
    a = sample(dtype, (3,), RNG)
    for op in [operator.neg, operator.pos, abs, operator.invert]:
        _same_as_numpy(op, a)


def test_matmul_operator():
    _same_as_numpy(operator.matmul, sample(np.float32, (2, 3), RNG), sample(np.float32, (3,),
                                                                            RNG), exact=False)
    _same_as_numpy(lambda x, y: y.__rmatmul__(x), sample(np.float64, (2, 3), RNG),
                   sample(np.float64, (3, 2), RNG), exact=False)


def test_properties():
    x = sample(np.complex128, (2, 3, 4), RNG)
    for prop in ["T", "mT", "real", "imag"]:
        _same_as_numpy(lambda a: getattr(a, prop), x)
    out = run_traced(lambda a: [a.shape == (2, 3, 4), a.ndim == 3, a.size == 24,
                                a.dtype == np.complex128, a.itemsize == 16, a.nbytes == 384],
                     x)
    assert all(out)


METHODS = [
    ("sum", (), {}), ("sum", (1,), {"keepdims": True}), ("mean", (), {"axis": 0}),
    ("std", (), {"ddof": 1}), ("max", (), {"axis": -1}), ("min", (), {}),
    ("prod", (0,), {}), ("argmax", (), {}), ("argmin", (1,), {}), ("all", (), {}),
    ("any", (0,), {}), ("cumsum", (1,), {}), ("cumprod", (), {}), ("reshape", ((4, 3),), {}),
    ("reshape", (4, 3), {}), ("reshape", (-1,), {}), ("transpose", (), {}),
    ("transpose", ((1, 0),), {}), ("transpose", (1, 0), {}), ("swapaxes", (0, 1), {}),
    ("ravel", (), {}), ("flatten", (), {}), ("astype", (np.int32,), {}),
    ("clip", (0.0, 1.0), {}), ("conj", (), {}), ("conjugate", (), {}), ("round", (1,), {}),
    ("dot", (np.ones(4),), {}), ("argsort", (), {}), ("take", ([0, 2],), {"axis": 1}),
    ("diagonal", (), {}), ("trace", (), {}), ("repeat", (2,), {"axis": 0}), ("copy", (), {}),
    ("squeeze", (), {}),
]


@pytest.mark.parametrize("name,args,kwargs", METHODS, ids=[f"{m[0]}{m[1]}" for m in METHODS])
def test_methods_match_ndarray_methods(name, args, kwargs):
    x = sample(np.float64, (3, 4), RNG)
    _same_as_numpy(lambda a: getattr(a, name)(*args, **kwargs), x, exact=name not in (
        "mean", "std", "dot"))


def test_sort_method_returns_the_sorted_array():
    x = sample(np.float64, (3, 4), RNG)
    out = run_traced(lambda a: a.sort(axis=0), x)
    assert_same(out, np.sort(x, axis=0), check_type=False)


def test_round_builtin_and_len_and_iter():
    x = np.array([1.25, 2.5, -0.5])
    assert_same(run_traced(lambda a: round(a), x), np.round(x), check_type=False)
    assert run_traced(lambda a: [len(a) == 3][0] * a, x).shape == (3,)
    out = run_traced(lambda a: list(a), x)
    assert [float(o) for o in out] == list(x)


def test_concretizing_methods_raise():
    for fn in [lambda a: a.item(), lambda a: a.tolist(), lambda a: float(a[0]),
               lambda a: bool(a[0] > 0), lambda a: a if a[0] > 0 else a]:
        with pytest.raises(ConcretizationError):
            run_traced(fn, np.ones(2))


def test_comparison_with_non_arrays_is_not_elementwise():
    out = run_traced(lambda a: [a, a == None], np.ones(2))  # noqa: E711
    assert out[1] is False or out[1] == False  # noqa: E712


def test_tnp_functions_accept_tracers_from_operators():
    x = sample(np.float32, (2, 3), RNG)
    out = run_traced(lambda a: tnp.sum(tnp.sin(a) * 2.0 + a.T.T ** 2, axis=1), x)
    assert_same(out, np.sum(np.sin(x) * 2.0 + x ** 2, axis=1), exact=False, check_type=False)
