import numpy as np
import pytest

from _ops_checks import ALL, check_grads, evaluate, rand
from tf_numba.api import make_program
from tf_numba.errors import DTypeError, ShapeError
from tf_numba.ops import layout as L


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ---------------------------------------------------------------- impl and abstract eval

@pytest.mark.parametrize("dtype", ALL)
def test_broadcast_in_dim_matches_numpy(rng, dtype):
    x = rand(rng, (3, 1), dtype)
    out = evaluate(lambda x: L.broadcast_in_dim(x, (2, 3, 4), (1, 2)), x)
    np.testing.assert_array_equal(out, np.broadcast_to(x[None], (2, 3, 4)))


def test_broadcast_in_dim_rejects_bad_dims():
    x = np.ones((3, 2))
    with pytest.raises(ShapeError, match=r"\(3, 2\)"):
        L.broadcast_in_dim(x, (3, 4), (0, 1))
    with pytest.raises(ShapeError, match="strictly increasing"):
        L.broadcast_in_dim(x, (2, 3), (1, 0))


def test_broadcast_in_dim_identity_adds_no_equation():
    program = make_program(lambda x: L.broadcast_in_dim(x, (2, 3), (0, 1)))(np.ones((2, 3)))
    assert len(program) == 0


@pytest.mark.parametrize("dtype", ALL)
def test_reshape_matches_numpy(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    out = evaluate(lambda x: L.reshape(x, (4, -1)), x)
    np.testing.assert_array_equal(out, x.reshape(4, 6))


def test_reshape_rejects_wrong_size():
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(4,\)"):
        L.reshape(np.ones((2, 3)), (4,))


def test_reshape_to_same_shape_adds_no_equation():
    assert len(make_program(lambda x: L.reshape(x, (2, 3)))(np.ones((2, 3)))) == 0


def test_squeeze_and_expand_dims(rng):
    x = rand(rng, (2, 1, 3))
    np.testing.assert_array_equal(evaluate(lambda x: L.squeeze(x, (1,)), x), x[:, 0])
    np.testing.assert_array_equal(evaluate(lambda x: L.expand_dims(x, (0, -1)), x),
                                  np.expand_dims(x, (0, -1)))
    with pytest.raises(ShapeError):
        L.squeeze(x, (0,))


@pytest.mark.parametrize("dtype", ALL)
def test_transpose_matches_numpy(rng, dtype):
    x = rand(rng, (2, 3, 4), dtype)
    np.testing.assert_array_equal(evaluate(lambda x: L.transpose(x, (2, 0, 1)), x),
                                  x.transpose(2, 0, 1))
    with pytest.raises(ShapeError):
        L.transpose(x, (0, 0, 1))


@pytest.mark.parametrize("dtype", ALL)
def test_rev_matches_numpy(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    np.testing.assert_array_equal(evaluate(lambda x: L.rev(x, (0, 1)), x), x[::-1, ::-1])
    with pytest.raises(ShapeError):
        L.rev(x, (2,))


@pytest.mark.parametrize("dtype", ALL)
def test_slice_matches_numpy(rng, dtype):
    x = rand(rng, (7, 5), dtype)
    out = evaluate(lambda x: L.slice_(x, (1, 0), (7, 4), (2, 3)), x)
    np.testing.assert_array_equal(out, x[1:7:2, 0:4:3])
    np.testing.assert_array_equal(evaluate(lambda x: L.slice_(x, (2, 2), (2, 5)), x), x[2:2, 2:5])


def test_slice_rejects_out_of_range():
    with pytest.raises(ShapeError, match="axis 0"):
        L.slice_(np.ones((3,)), (1,), (4,))
    with pytest.raises(ShapeError):
        L.slice_(np.ones((3,)), (0,), (3,), (0,))


@pytest.mark.parametrize("dtype", ALL)
def test_pad_matches_reference(rng, dtype):
    x = rand(rng, (3, 4), dtype)
    value = rand(rng, (), dtype)
    config = ((1, 2, 1), (-1, 0, 2))
    out = evaluate(lambda x, v: L.pad(x, v, config), x, value)
    # reference: interior padding, then edge padding, then crop the negative part
    inner = np.full((5, 10), value, dtype)
    inner[::2, ::3] = x
    ref = np.concatenate([np.full((1, 10), value, dtype), inner, np.full((2, 10), value, dtype)])
    np.testing.assert_array_equal(out, ref[:, 1:])


def test_pad_crops_past_the_operand(rng):
    x = rand(rng, (4,))
    np.testing.assert_array_equal(L.pad(x, 0.0, [(-2, -1, 0)]), x[2:3])
    np.testing.assert_array_equal(L.pad(x, 0.0, [(-5, 1, 0)]), np.zeros(0))
    with pytest.raises(ShapeError):
        L.pad(x, 0.0, [(-5, 0, 0)])


def test_pad_rejects_bad_value():
    with pytest.raises(DTypeError, match="float32"):
        L.pad(np.ones(3), np.float32(0), [(1, 1, 0)])
    with pytest.raises(ShapeError):
        L.pad(np.ones(3), np.zeros(2), [(1, 1, 0)])
    with pytest.raises(ShapeError):
        L.pad(np.ones(3), 0.0, [(1, 1, -1)])


@pytest.mark.parametrize("dtype", ALL)
def test_concatenate_matches_numpy(rng, dtype):
    xs = [rand(rng, (2, n), dtype) for n in (1, 3, 2)]
    out = evaluate(lambda a, b, c: L.concatenate([a, b, c], 1), *xs)
    np.testing.assert_array_equal(out, np.concatenate(xs, 1))
    np.testing.assert_array_equal(L.concatenate(xs, -1), np.concatenate(xs, -1))


def test_concatenate_rejects_mismatches():
    with pytest.raises(ShapeError, match=r"\(2, 1\).*\(3, 1\)"):
        L.concatenate([np.ones((2, 1)), np.ones((3, 1))], 1)
    with pytest.raises(DTypeError):
        L.concatenate([np.ones(2), np.ones(2, np.float32)], 0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.complex64])
def test_iota_matches_numpy(dtype):
    out = evaluate(lambda: L.iota(dtype, (2, 3), 1))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3, dtype=dtype), (2, 3)))
    assert out.dtype == dtype
    with pytest.raises(ShapeError):
        L.iota(dtype, (2, 3), 2)


def test_full_is_a_broadcast_scalar():
    out = L.full((2, 3), 7, np.float32)
    assert out.dtype == np.float32 and out.shape == (2, 3) and (out == 7).all()
    assert L.full((), 1.5).shape == ()
    program = make_program(lambda: L.full((2, 3), 1.0))()
    assert [e.prim.name for e in program.eqns] == ["broadcast_in_dim"]


# ---------------------------------------------------------------- derivatives

def test_broadcast_in_dim_derivatives(rng):
    check_grads(lambda x: L.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [rand(rng, (3, 1))], rng)
    check_grads(lambda x: L.broadcast_in_dim(x, (2, 3), ()), [rand(rng, ())], rng)


def test_reshape_transpose_rev_derivatives(rng):
    x = rand(rng, (2, 3, 4))
    check_grads(lambda x: L.reshape(x, (4, 6)), [x], rng)
    check_grads(lambda x: L.transpose(x, (2, 0, 1)), [x], rng)
    check_grads(lambda x: L.rev(x, (0, 2)), [x], rng)


def test_slice_derivatives(rng):
    check_grads(lambda x: L.slice_(x, (1, 0), (7, 4), (2, 3)), [rand(rng, (7, 5))], rng)
    check_grads(lambda x: L.slice_(x, (1,), (2,)), [rand(rng, (4,))], rng)


def test_pad_derivatives(rng):
    config = ((1, 2, 1), (-1, -2, 2))
    check_grads(lambda x, v: L.pad(x, v, config), [rand(rng, (3, 4)), rand(rng, ())], rng)
    check_grads(lambda x: L.pad(x, 1.5, [(2, -3, 0)]), [rand(rng, (4,))], rng)


def test_pad_derivative_in_value_only(rng):
    x = rand(rng, (3,))
    check_grads(lambda v: L.pad(x, v, [(1, 1, 1)]), [rand(rng, ())], rng)


def test_concatenate_derivatives(rng):
    xs = [rand(rng, (2, n)) for n in (1, 3)]
    check_grads(lambda a, b: L.concatenate([a, b], 1), xs, rng)
    const = rand(rng, (2, 2))
    check_grads(lambda a: L.concatenate([const, a], 1), xs[:1], rng)


def test_parameter_errors_name_the_op_and_the_user_line():
    with pytest.raises(ShapeError) as info:
        L.reshape(np.ones((2, 3)), (4, -1))
    assert info.value.op == "reshape"
    assert info.value.source[0] == __file__
