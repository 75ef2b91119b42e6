import numpy as np
import pytest

from _ops_checks import ALL, INTS, NUMERIC, check_grads, evaluate, rand
from tf_numba.api import make_program
from tf_numba.core.interpreter import eval_program
from tf_numba.errors import DTypeError, ShapeError, TfIndexError
from tf_numba.ops import indexing as I


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# indices into axes (0, 2) of a (4, 5, 3) operand, batch shape (2, 3), with negative ones
INDICES = np.array([[[0, 1], [3, -1], [-4, 2]],
                    [[1, 0], [1, 0], [2, -3]]])


def _gather_reference(x, idx):
    out = np.empty(idx.shape[:-1] + (x.shape[1],), x.dtype)
    for b in np.ndindex(idx.shape[:-1]):
        out[b] = x[idx[b][0], :, idx[b][1]]
    return out


# ---------------------------------------------------------------- gather

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("index_dtype", INTS)
def test_gather_matches_reference(rng, dtype, index_dtype):
    x = rand(rng, (4, 5, 3), dtype)
    idx = INDICES.astype(index_dtype)
    out = evaluate(lambda x, i: I.gather(x, i, (0, 2)), x, idx)
    np.testing.assert_array_equal(out, _gather_reference(x, idx))


def test_gather_axes_order_is_the_index_column_order(rng):
    x = rand(rng, (4, 5))
    idx = np.array([[2, 1], [0, 3]])
    np.testing.assert_array_equal(I.gather(x, idx, (1, 0)), x[idx[:, 1], idx[:, 0]])


def test_gather_with_no_axes_broadcasts(rng):
    x = rand(rng, (2, 3))
    out = evaluate(lambda x: I.gather(x, np.zeros((4, 0), np.int64), ()), x)
    np.testing.assert_array_equal(out, np.broadcast_to(x, (4, 2, 3)))


@pytest.mark.parametrize("bad", [5, -6])
def test_gather_out_of_range_raises(bad):
    with pytest.raises(TfIndexError, match=rf"index {bad} .* axis 1 of size 5"):
        I.gather(np.ones((3, 5)), np.array([[0, 1], [2, bad]]), (0, 1))


def test_gather_out_of_range_raises_when_traced():
    program = make_program(lambda x, i: I.gather(x, i, (0,)))(np.ones(3), np.zeros((2, 1), int))
    with pytest.raises(TfIndexError, match="index 3"):
        eval_program(program, [np.ones(3), np.array([[0], [3]])])


def test_gather_errors():
    with pytest.raises(DTypeError, match="float64"):
        I.gather(np.ones(3), np.zeros((2, 1)), (0,))
    with pytest.raises(ShapeError, match=r"\(2, 2\)"):
        I.gather(np.ones(3), np.zeros((2, 2), int), (0,))
    with pytest.raises(ShapeError):
        I.gather(np.ones(3), np.zeros((2, 1), int), (1,))


@pytest.mark.parametrize("dtype", ALL)
def test_take_along_axis_matches_numpy(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    idx = rng.integers(-4, 4, (3, 6))
    out = evaluate(lambda x, i: I.take_along_axis(x, i, 1), x, idx)
    np.testing.assert_array_equal(out, np.take_along_axis(x, idx, 1))


# ---------------------------------------------------------------- scatters

SCATTER_IDX = np.array([[1, 0], [3, -1], [1, 0], [0, 2]])  # (1, 0) twice


@pytest.mark.parametrize("dtype", NUMERIC)
def test_scatter_add_accumulates_duplicates(rng, dtype):
    x, upd = rand(rng, (4, 2, 3), dtype), rand(rng, (4, 2), dtype)
    out = evaluate(lambda x, u: I.scatter_add(x, SCATTER_IDX, u, (0, 2)), x, upd)
    ref = x.copy()
    np.add.at(np.moveaxis(ref, 2, 1), (SCATTER_IDX[:, 0], SCATTER_IDX[:, 1]), upd)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_scatter_mul_multiplies_duplicates(rng, dtype):
    x, upd = rand(rng, (4, 2, 3), dtype), rand(rng, (4, 2), dtype)
    out = evaluate(lambda x, u: I.scatter_mul(x, SCATTER_IDX, u, (0, 2)), x, upd)
    ref = x.copy()
    np.multiply.at(np.moveaxis(ref, 2, 1), (SCATTER_IDX[:, 0], SCATTER_IDX[:, 1]), upd)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_last_update_wins(rng, dtype):
    x, upd = rand(rng, (4, 2, 3), dtype), rand(rng, (4, 2), dtype)
    out = evaluate(lambda x, u: I.scatter(x, SCATTER_IDX, u, (0, 2)), x, upd)
    ref = x.copy()
    for (i, j), u in zip(SCATTER_IDX, upd):
        ref[i, :, j] = u
    np.testing.assert_array_equal(out, ref)


def test_scatter_does_not_modify_its_operand(rng):
    x = rand(rng, (3,))
    before = x.copy()
    I.scatter_add(x, np.array([[0]]), np.ones(1), (0,))
    I.scatter(x, np.array([[0]]), np.ones(1), (0,))
    np.testing.assert_array_equal(x, before)


def test_scatter_errors():
    x = np.ones((3, 2))
    with pytest.raises(ShapeError, match=r"\(1, 2\)"):
        I.scatter_add(x, np.array([[0]]), np.ones((1, 3)), (0,))
    with pytest.raises(DTypeError):
        I.scatter(x, np.array([[0]]), np.ones((1, 2), np.float32), (0,))
    with pytest.raises(TfIndexError, match="index -4 .* axis 0 of size 3"):
        I.scatter_mul(x, np.array([[-4]]), np.ones((1, 2)), (0,))


# ---------------------------------------------------------------- dynamic slices

@pytest.mark.parametrize("dtype", ALL)
def test_dynamic_slice_matches_slicing(rng, dtype):
    x = rand(rng, (5, 4), dtype)
    out = evaluate(lambda x, i, j: I.dynamic_slice(x, [i, j], (2, 3)),
                   x, np.int32(-3), np.int64(1))
    np.testing.assert_array_equal(out, x[2:4, 1:4])


@pytest.mark.parametrize("start", [4, -6, 5])
def test_dynamic_slice_out_of_range_raises(start):
    with pytest.raises(TfIndexError, match=f"start index {start} of axis 0"):
        I.dynamic_slice(np.ones(5), [start], (2,))


def test_dynamic_slice_errors():
    with pytest.raises(ShapeError):
        I.dynamic_slice(np.ones(5), [0], (6,))
    with pytest.raises(ShapeError):
        I.dynamic_slice(np.ones(5), [0, 0], (1,))
    with pytest.raises(DTypeError):
        I.dynamic_slice(np.ones(5), [np.float64(0)], (1,))


@pytest.mark.parametrize("dtype", ALL)
def test_dynamic_update_slice_matches_assignment(rng, dtype):
    x, upd = rand(rng, (5, 4), dtype), rand(rng, (2, 3), dtype)
    out = evaluate(lambda x, u, i: I.dynamic_update_slice(x, u, [i, 1]), x, upd, np.int64(-2))
    ref = x.copy()
    ref[3:5, 1:4] = upd
    np.testing.assert_array_equal(out, ref)


def test_dynamic_update_slice_errors():
    with pytest.raises(TfIndexError, match="start index 4"):
        I.dynamic_update_slice(np.ones(5), np.ones(2), [4])
    with pytest.raises(ShapeError):
        I.dynamic_update_slice(np.ones(5), np.ones(6), [0])
    with pytest.raises(DTypeError):
        I.dynamic_update_slice(np.ones(5), np.ones(2, np.float32), [0])


# ---------------------------------------------------------------- derivatives

def test_gather_derivatives_with_repeated_indices(rng):
    check_grads(lambda x: I.gather(x, INDICES, (0, 2)), [rand(rng, (4, 5, 3))], rng)


def test_take_along_axis_derivatives(rng):
    idx = rng.integers(0, 4, (3, 6))
    check_grads(lambda x: I.take_along_axis(x, idx, 1), [rand(rng, (3, 4))], rng)


def test_scatter_add_derivatives(rng):
    args = [rand(rng, (4, 2, 3)), rand(rng, (4, 2))]
    check_grads(lambda x, u: I.scatter_add(x, SCATTER_IDX, u, (0, 2)), args, rng)


def test_scatter_derivatives_with_duplicates(rng):
    # only the winning duplicate influences the result, so only it gets a cotangent
    args = [rand(rng, (4, 2, 3)), rand(rng, (4, 2))]
    check_grads(lambda x, u: I.scatter(x, SCATTER_IDX, u, (0, 2)), args, rng)


def test_scatter_mul_derivatives_unique_indices(rng):
    idx = np.array([[1, 0], [3, -1], [0, 2]])
    args = [rand(rng, (4, 2, 3)), rand(rng, (3, 2))]
    check_grads(lambda x, u: I.scatter_mul(x, idx, u, (0, 2)), args, rng)


def test_scatter_mul_derivative_in_operand_with_duplicates(rng):
    upd = rand(rng, (4, 2))
    check_grads(lambda x: I.scatter_mul(x, SCATTER_IDX, upd, (0, 2)),
                [rand(rng, (4, 2, 3))], rng)


def test_scatter_mul_derivatives_in_updates_with_duplicates(rng):
    # found by the fuzzer: each duplicate's derivative left out the other updates' product
    args = [rand(rng, (4, 2, 3)), rand(rng, (4, 2))]
    check_grads(lambda x, u: I.scatter_mul(x, SCATTER_IDX, u, (0, 2)), args, rng)
    with_zero = rand(rng, (4, 2))
    with_zero[0, 1] = 0.0               # a zero beside its duplicate, and one alone
    with_zero[1, 0] = 0.0
    check_grads(lambda u: I.scatter_mul(args[0], SCATTER_IDX, u, (0, 2)), [with_zero], order=1,
                rng=rng)
    two_zeros = with_zero.copy()
    two_zeros[2, 1] = 0.0               # both duplicates at (1, 0) zero, in one column
    check_grads(lambda u: I.scatter_mul(args[0], SCATTER_IDX, u, (0, 2)), [two_zeros], order=1,
                rng=rng)


def test_dynamic_slice_derivatives(rng):
    check_grads(lambda x: I.dynamic_slice(x, [np.int64(1), np.int32(-3)], (3, 2)),
                [rand(rng, (5, 4))], rng)


def test_dynamic_update_slice_derivatives(rng):
    args = [rand(rng, (5, 4)), rand(rng, (2, 3))]
    check_grads(lambda x, u: I.dynamic_update_slice(x, u, [np.int64(2), np.int64(-3)]),
                args, rng)


def test_complex_derivatives(rng):
    args = [rand(rng, (4, 2, 3), np.complex128), rand(rng, (4, 2), np.complex128)]
    check_grads(lambda x, u: I.scatter(x, SCATTER_IDX, u, (0, 2)), args, rng)
    check_grads(lambda x: I.gather(x, INDICES, (0, 2)), [rand(rng, (4, 5, 3), np.complex128)],
                rng)
