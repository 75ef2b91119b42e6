"""tnp shape manipulation against NumPy, eagerly and traced."""
import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, ShapeError, UnsupportedError

from conftest import DTYPES, assert_same, check, run_traced, sample

RNG = np.random.default_rng(0)
X = sample(np.float64, (2, 3, 4), RNG)


def same(fn, np_fn, first, *rest, **kwargs):
    """``fn(first, *rest, **kwargs)`` against NumPy; only ``first`` (an array, or a list of
    arrays) is traced."""
    if isinstance(first, list):
        check(lambda *a: fn(list(a), *rest, **kwargs), lambda *a: np_fn(list(a), *rest, **kwargs),
              *first)
    else:
        check(lambda a: fn(a, *rest, **kwargs), lambda a: np_fn(a, *rest, **kwargs), first)


@pytest.mark.parametrize("shape", [(24,), (4, -1), (2, 3, 4), (-1,), (1, 2, 1, 12)], ids=repr)
@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_and_ravel(shape, order):
    same(tnp.reshape, np.reshape, X, shape, order=order)
    same(tnp.ravel, np.ravel, X, order=order)


def test_reshape_errors_name_the_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 3, 4\).*\(5, 5\)"):
        tnp.reshape(X, (5, 5))


@pytest.mark.parametrize("axes", [None, (2, 0, 1), (-1, 0, 1), (0, 1, 2)], ids=repr)
def test_transpose_family(axes):
    same(tnp.transpose, np.transpose, X, axes)
    same(tnp.permute_dims, np.permute_dims, X, axes)
    same(tnp.swapaxes, np.swapaxes, X, 0, 2)
    same(tnp.matrix_transpose, np.matrix_transpose, X)
    same(tnp.moveaxis, np.moveaxis, X, 0, -1)
    same(tnp.moveaxis, np.moveaxis, X, (0, 1), (2, 0))
    for axis, start in [(2, 0), (0, 3), (1, -1), (2, 2)]:
        same(tnp.rollaxis, np.rollaxis, X, axis, start)


def test_expand_dims_squeeze_atleast():
    same(tnp.expand_dims, np.expand_dims, X, 1)
    same(tnp.expand_dims, np.expand_dims, X, (0, -1))
    y = X.reshape(1, 2, 1, 12)
    same(tnp.squeeze, np.squeeze, y)
    same(tnp.squeeze, np.squeeze, y, axis=2)
    same(tnp.squeeze, np.squeeze, y, axis=(0, 2))
    with pytest.raises(ShapeError):
        tnp.squeeze(y, axis=1)
    for v in [np.float64(2.0), np.arange(3.0), np.ones((2, 3)), X]:
        for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
            same(getattr(tnp, name), getattr(np, name), v)
    same(tnp.atleast_2d, np.atleast_2d, np.arange(2.0), np.ones((2, 2)))


def test_broadcasting_helpers():
    same(tnp.broadcast_to, np.broadcast_to, np.arange(3.0), (2, 3))
    same(tnp.broadcast_arrays, np.broadcast_arrays, np.arange(3.0), np.ones((2, 1)))
    assert tnp.broadcast_shapes((2, 1), (3,), ()) == np.broadcast_shapes((2, 1), (3,), ())
    with pytest.raises(ShapeError, match="broadcast_to"):
        tnp.broadcast_to(np.arange(3), (2, 4))


@pytest.mark.parametrize("dt1,dt2", [(np.float32, np.int32), (np.bool_, np.int64),
                                     (np.complex128, np.float32), (np.int32, np.int32)])
def test_joining_promotes_like_numpy(dt1, dt2):
    a, b = sample(dt1, (2, 3), RNG), sample(dt2, (2, 3), RNG)
    for axis in [0, 1, -1]:
        same(tnp.concatenate, np.concatenate, [a, b], axis=axis)
        same(tnp.stack, np.stack, [a, b], axis=axis)
    same(tnp.concatenate, np.concatenate, [a, b], axis=None)
    same(tnp.stack, np.stack, [a, b], axis=2)
    same(tnp.concat, np.concat, [a, b], axis=1)
    try:
        np.concatenate([a, b], dtype=np.float64)
    except TypeError:
        with pytest.raises(TypeError):
            tnp.concatenate([a, b], dtype=np.float64)
    else:
        same(tnp.concatenate, np.concatenate, [a, b], dtype=np.float64)
    same(tnp.concatenate, np.concatenate, [a, b], dtype=np.complex128)
    for name in ["hstack", "vstack", "dstack", "column_stack"]:
        same(getattr(tnp, name), getattr(np, name), [a, b])
        same(getattr(tnp, name), getattr(np, name), [a[0], b[0]])
    same(tnp.append, np.append, a, b)
    same(tnp.append, np.append, a, b, axis=0)
    check(lambda x: tnp.unstack(x, axis=1), lambda x: np.unstack(x, axis=1), a)


def test_block_matches_numpy():
    a, b = np.ones((2, 2)), np.zeros((2, 3))
    check(lambda x, y: tnp.block([[x, y], [y[:, :2], x]]),
          lambda x, y: np.block([[x, y], [y[:, :2], x]]), a, np.zeros((2, 2)))
    check(lambda x, y: tnp.block([[x, y]]), lambda x, y: np.block([[x, y]]), a, b)
    check(lambda x: tnp.block([x, x]), lambda x: np.block([x, x]), np.arange(3.0))
    check(lambda x: tnp.block([[x], [x]]), lambda x: np.block([[x], [x]]), np.arange(3.0))


def test_concatenate_errors():
    with pytest.raises(ShapeError, match="concatenate"):
        tnp.concatenate([np.ones((2, 3)), np.ones((3, 2))])
    with pytest.raises(ShapeError):
        tnp.concatenate([np.float64(1.0), np.float64(2.0)])
    with pytest.raises(ShapeError, match="stack"):
        tnp.stack([np.ones(2), np.ones(3)])


@pytest.mark.parametrize("spec", [2, 3, [1, 3], [0, 5, 2], [-2], [10]], ids=repr)
def test_split_family(spec):
    y = np.arange(24.0).reshape(4, 6)
    for axis in [0, 1]:
        try:
            np.split(y, spec, axis=axis)
        except ValueError:
            with pytest.raises(ShapeError, match="equal division"):
                tnp.split(y, spec, axis=axis)
        else:
            same(tnp.split, np.split, y, spec, axis=axis)
        same(tnp.array_split, np.array_split, y, spec, axis=axis)
    if spec in (2, [1, 3]):
        same(tnp.hsplit, np.hsplit, y, spec)
        same(tnp.vsplit, np.vsplit, y, spec)
        same(tnp.dsplit, np.dsplit, y.reshape(2, 2, 6), spec)


def test_array_split_with_more_sections_than_elements():
    same(tnp.array_split, np.array_split, np.arange(3.0), 5)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), (0, 2)], ids=repr)
def test_tile(reps):
    for v in [np.arange(3), np.ones((2, 2), np.float32), np.float64(3.0)]:
        same(tnp.tile, np.tile, v, reps)


def test_repeat():
    y = np.arange(6).reshape(2, 3)
    same(tnp.repeat, np.repeat, y, 2)
    same(tnp.repeat, np.repeat, y, 2, axis=1)
    same(tnp.repeat, np.repeat, y, [1, 0, 3], axis=1)
    same(tnp.repeat, np.repeat, y, [2], axis=0)
    same(tnp.repeat, np.repeat, np.float64(2.0), 3)
    with pytest.raises(ConcretizationError):
        run_traced(lambda a, r: tnp.repeat(a, r), y, np.array([1, 2, 3, 4, 5, 6]))


def test_flips_and_rolls_and_rot90():
    same(tnp.flip, np.flip, X)
    same(tnp.flip, np.flip, X, 1)
    same(tnp.flip, np.flip, X, (0, 2))
    same(tnp.fliplr, np.fliplr, X)
    same(tnp.flipud, np.flipud, X)
    for shift, axis in [(1, None), (-2, None), (5, 1), ((1, 2), (0, 2)), (2, (0, 1)),
                        ((1, 1), (1, 1)), (0, 0)]:
        same(tnp.roll, np.roll, X, shift, axis=axis)
    for k in range(-1, 5):
        same(tnp.rot90, np.rot90, X, k)
        same(tnp.rot90, np.rot90, X, k, axes=(2, 0))


def test_roll_by_a_traced_shift():
    y = np.arange(5.0)
    for s in [0, 2, -1, 7]:
        out = run_traced(lambda a, k: tnp.roll(a, k), y, np.array(s))
        assert_same(out, np.roll(y, s), check_type=False)


PAD_WIDTHS = [1, (1, 2), ((0, 1), (2, 0)), ((1, 1),), [[2, 3], [1, 0]]]


@pytest.mark.parametrize("width", PAD_WIDTHS, ids=repr)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap",
                                  "maximum", "minimum", "mean", "linear_ramp", "empty"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_pad_matches_numpy(mode, width, dtype):
    y = sample(dtype, (3, 4), RNG)
    if mode == "empty":
        expected = np.pad(y, width, mode="constant")
        assert_same(tnp.pad(y, width, mode="empty"), expected)
        return
    same(tnp.pad, np.pad, y, width, mode=mode)


def test_pad_with_wide_reflections_and_values():
    y = np.arange(3.0)
    for mode in ["reflect", "symmetric", "wrap", "edge"]:
        same(tnp.pad, np.pad, y, (7, 5), mode=mode)
    z = np.arange(6).reshape(2, 3)
    same(tnp.pad, np.pad, z, 1, constant_values=9)
    same(tnp.pad, np.pad, z, ((1, 2), (1, 1)), constant_values=((1, 2), (3, 4)))
    same(tnp.pad, np.pad, z, 2, constant_values=1.7)
    same(tnp.pad, np.pad, z.astype(float), 2, mode="linear_ramp", end_values=(5, -3))
    out = run_traced(lambda a, v: tnp.pad(a, 1, constant_values=v), z, np.array(7))
    assert_same(out, np.pad(z, 1, constant_values=7), check_type=False)


def test_pad_rejects_what_it_does_not_implement():
    with pytest.raises(UnsupportedError, match="mode"):
        tnp.pad(np.ones(3), 1, mode=lambda *a: None)
    with pytest.raises(UnsupportedError, match="odd"):
        tnp.pad(np.ones(3), 1, mode="reflect", reflect_type="odd")
    with pytest.raises(UnsupportedError, match="stat_length"):
        tnp.pad(np.ones(3), 1, mode="mean", stat_length=2)


@pytest.mark.parametrize("offset", [-3, -1, 0, 1, 2, 5])
def test_diagonals(offset):
    for shape in [(3, 3), (3, 5), (5, 2), (2, 3, 4)]:
        y = np.arange(np.prod(shape)).reshape(shape)
        same(tnp.diagonal, np.diagonal, y, offset)
        same(tnp.diagonal, np.diagonal, y, offset, axis1=-1, axis2=0)
        if len(shape) == 2:
            same(tnp.diag, np.diag, y, offset)
            same(tnp.tril, np.tril, y, offset)
            same(tnp.triu, np.triu, y, offset)
        else:
            same(tnp.tril, np.tril, y, offset)
            same(tnp.triu, np.triu, y, offset)
    for dtype in DTYPES:
        v = sample(dtype, (3,), RNG)
        same(tnp.diag, np.diag, v, offset)
        same(tnp.diagflat, np.diagflat, v.reshape(3, 1), offset)
        same(tnp.tril, np.tril, v, offset)


def test_astype_and_delete_and_shape_queries():
    for dtype in DTYPES:
        same(tnp.astype, np.astype, X, dtype)
    z = np.arange(10).reshape(2, 5)
    same(tnp.delete, np.delete, z, 1)
    same(tnp.delete, np.delete, z, [0, -1], axis=1)
    same(tnp.delete, np.delete, z, slice(1, 4), axis=1)
    same(tnp.delete, np.delete, z, np.array([True, False]), axis=0)
    assert tnp.shape(X) == np.shape(X) and tnp.ndim(X) == 3 and tnp.size(X) == X.size
    assert tnp.size(X, 1) == 3 and tnp.shape(2.0) == ()
    out = run_traced(lambda a: tnp.full(tnp.shape(a), tnp.size(a)), X)
    assert_same(out, np.full(X.shape, X.size), check_type=False)


def test_roll_of_a_0d_array_along_an_axis_is_a_shape_error():
    # found by the fuzzer: a bare IndexError (NumPy raises AxisError)
    for axis in (0, -1):
        with pytest.raises(ShapeError, match="out of bounds"):
            tnp.roll(np.array(1.0), 1, axis=axis)
    assert_same(tnp.roll(np.array(1.0), 1), np.roll(np.array(1.0), 1))
