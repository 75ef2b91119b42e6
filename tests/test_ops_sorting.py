import numpy as np
import pytest

from _ops_checks import ALL, check_grads, evaluate, rand
from tf_numba.errors import ShapeError
from tf_numba.ops import sorting as S


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_matches_numpy(rng, dtype, dimension):
    x = rand(rng, (4, 5), dtype)
    (out,) = evaluate(lambda x: S.sort([x], dimension), x)
    np.testing.assert_array_equal(out, np.sort(x, dimension))


def test_sort_puts_nan_last():
    x = np.array([3.0, np.nan, -1.0, np.inf, np.nan, 0.0])
    np.testing.assert_array_equal(S.sort([x], 0)[0], np.sort(x))
    z = np.array([1 + 2j, np.nan, 1 + 1j, 0, -1 + 5j])
    np.testing.assert_array_equal(S.sort([z], 0)[0], np.sort(z))


@pytest.mark.parametrize("dtype", ALL)
def test_sort_carries_other_operands_stably(rng, dtype):
    keys = rng.integers(0, 3, (3, 8)).astype(dtype)
    values = rand(rng, (3, 8), np.float64)
    out_keys, out_values = evaluate(lambda k, v: S.sort([k, v], 1), keys, values)
    order = np.argsort(keys, axis=1, kind="stable")
    np.testing.assert_array_equal(out_keys, np.take_along_axis(keys, order, 1))
    np.testing.assert_array_equal(out_values, np.take_along_axis(values, order, 1))


def test_sort_with_two_keys_is_lexicographic(rng):
    first = rng.integers(0, 3, 10)
    second = rand(rng, (10,))
    payload = np.arange(10, dtype=np.int32)
    outs = evaluate(lambda a, b, c: S.sort([a, b, c], 0, num_keys=2), first, second, payload)
    order = np.lexsort([second, first])
    for out, operand in zip(outs, (first, second, payload)):
        np.testing.assert_array_equal(out, operand[order])


def test_sort_errors():
    with pytest.raises(ShapeError, match=r"\(3,\), \(4,\)"):
        S.sort([np.ones(3), np.ones(4)], 0)
    with pytest.raises(ShapeError, match="num_keys"):
        S.sort([np.ones(3)], 0, num_keys=2)
    with pytest.raises(ShapeError):
        S.sort([np.ones(3)], 1)


def test_sort_derivatives(rng):
    check_grads(lambda x: S.sort([x], 1)[0], [rand(rng, (3, 5))], rng)


def test_sort_derivatives_of_carried_operand(rng):
    def f(keys, values):
        return S.sort([keys, values], 0)[1]
    check_grads(f, [rand(rng, (6, 2)), rand(rng, (6, 2))], rng)
