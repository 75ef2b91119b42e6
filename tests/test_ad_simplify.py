"""Gradient programs stay small: symbolic zeros and simplification leave no dead weight."""
import numpy as np
import pytest

import tf_numba as tf
from tf_numba.ops import contraction as C
from tf_numba.ops import elementwise as E
from tf_numba.ops import reductions as R

W = np.random.default_rng(0).standard_normal((256, 256)) / 16
X = np.random.default_rng(1).standard_normal((256, 1))


def _ops_spelling(w, x):
    return R.reduce_sum(E.tanh(C.dot_general(w, x, (((1,), (0,)), ((), ())))))


def _tnp_spelling(w, x):
    import tf_numba.numpy as tnp
    return tnp.sum(tnp.tanh(w @ x))


def _tnp_ready():
    try:
        import tf_numba.numpy as tnp
    except ImportError:
        return False
    return all(hasattr(tnp, name) for name in ("sum", "tanh"))


@pytest.mark.parametrize("f", [
    _ops_spelling,
    pytest.param(_tnp_spelling, marks=pytest.mark.skipif(not _tnp_ready(),
                                                         reason="tf_numba.numpy not there yet")),
])
def test_gradient_of_sum_tanh_matvec_has_at_most_9_equations(f):
    program = tf.make_program(tf.grad(f))(W, X)
    assert len(program.eqns) <= 9, f"gradient program has {len(program.eqns)} equations:\n{program}"
    g = tf.grad(f)(W, X)
    expected = (1 - np.tanh(W @ X) ** 2) @ X.T
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)


def test_a_reshape_undone_by_the_next_is_dropped():
    import tf_numba.numpy as tnp
    from tf_numba.transforms.simplify import simplify

    def make_program(f):
        return lambda *args: simplify(tf.make_program(f)(*args))
    x = np.arange(24.0).reshape(4, 6)
    back = make_program(lambda x: tnp.sin(x.reshape(24).reshape(4, 6)))(x)
    assert [e.prim.name for e in back.eqns] == ["sin"], back
    np.testing.assert_array_equal(tf.jit(lambda x: tnp.sin(x.reshape(24).reshape(4, 6)))(x),
                                  np.sin(x))
    # reshaped to another shape, or read between the two: both reshapes stay
    other = make_program(lambda x: tnp.sin(x.reshape(24).reshape(6, 4)))(x)
    assert [e.prim.name for e in other.eqns].count("reshape") >= 1, other
    flat = make_program(lambda x: (tnp.sin(x.reshape(24).reshape(4, 6)),
                                      x.reshape(24) * 2))(x)
    assert [e.prim.name for e in flat.eqns].count("reshape") == 1, flat
