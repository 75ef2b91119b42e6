"""tnp functions trace on symbolic shapes (``tf.symbolic(("n", 3))``): the program holds for
every n, with the output shapes NumPy would give."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.core.shapes import Sym

N = Sym("n")
X = tf.symbolic(("n", 3))
CASES = [
    ("elementwise", lambda x: tnp.sin(x) * 2.0 + 1, (N, 3)),
    ("broadcast_row", lambda x: x + np.arange(3.0), (N, 3)),
    ("sum_symbolic_axis", lambda x: tnp.sum(x, axis=0), (3,)),
    ("mean_symbolic_axis", lambda x: tnp.mean(x, axis=0), (3,)),
    ("var_all", lambda x: tnp.var(x, ddof=1), ()),
    ("std_keepdims", lambda x: tnp.std(x, axis=0, keepdims=True), (1, 3)),
    ("mean_other_axis", lambda x: tnp.mean(x, axis=1), (N,)),
    ("matmul", lambda x: x @ np.ones((3, 4)), (N, 4)),
    ("transpose", lambda x: x.T, (3, N)),
    ("column", lambda x: x[:, 1], (N,)),
    ("argmax", lambda x: tnp.argmax(x, axis=1), (N,)),
    ("softmax", lambda x: tnp.exp(x) / tnp.sum(tnp.exp(x), axis=-1, keepdims=True), (N, 3)),
    ("where", lambda x: tnp.where(x > 0, x, 0.0), (N, 3)),
    ("concatenate_columns", lambda x: tnp.concatenate([x, x], axis=1), (N, 6)),
    ("zeros_like", lambda x: tnp.zeros_like(x), (N, 3)),
    ("cumsum", lambda x: tnp.cumsum(x, axis=0), (N, 3)),
    ("sort", lambda x: tnp.sort(x, axis=0), (N, 3)),
    ("stack", lambda x: tnp.stack([x, x]), (2, N, 3)),
    ("take_columns", lambda x: tnp.take(x, np.array([0, 2]), axis=1), (N, 2)),
    ("at_column", lambda x: x.at[:, 0].set(1.0), (N, 3)),
    ("flip", lambda x: tnp.flip(x, 0), (N, 3)),
    ("pad_columns", lambda x: tnp.pad(x, ((0, 0), (1, 1))), (N, 5)),
    ("layer_norm", lambda x: (x - tnp.mean(x, -1, keepdims=True)) / tnp.std(x, -1,
                                                                         keepdims=True),
     (N, 3)),
]


@pytest.mark.parametrize("name,fn,shape", CASES, ids=[c[0] for c in CASES])
def test_traces_on_symbolic_shapes(name, fn, shape):
    program = tf.make_program(fn)(X)
    assert program.out_avals[0].shape == shape
