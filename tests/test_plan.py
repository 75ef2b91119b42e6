"""Plans: the interpreted tier gives what the program computes, whatever it reads as views."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import nn
from tf_numba.core.interpreter import eval_program
from tf_numba.lowering.plan import Plan, _broadcasts_as_views
from tf_numba.transforms.simplify import simplify

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 4))
B = RNG.standard_normal(4)

CASES = {
    "bias": (lambda x, b: tnp.tanh(x + b), (X, B)),
    "centred_rows": (lambda x, b: x - tnp.mean(x, axis=1, keepdims=True), (X, B)),
    "softmax_grad": (tf.grad(lambda x, b: tnp.sum(nn.softmax(x + b, axis=-1) ** 2)), (X, B)),
    "layer_norm_vjp": (tf.grad(lambda x, b: tnp.sum(
        (x - tnp.mean(x, -1, keepdims=True)) / tnp.std(x, -1, keepdims=True) * b)), (X, B)),
    "broadcast_is_an_output": (lambda x, b: (tnp.broadcast_to(b, x.shape), x * 2), (X, B)),
    "broadcast_then_reduced": (lambda x, b: tnp.sum(tnp.broadcast_to(b, x.shape), axis=0), (X, B)),
    "mean_gradient": (tf.grad(lambda x, b: tnp.mean(tnp.sin(x) * b)), (X, B)),
    "log_softmax_ce_grad": (tf.grad(lambda x, b: -tnp.mean(tnp.sum(
        (x - tnp.max(x, 1, keepdims=True)) * tnp.cos(x) + b, axis=1))), (X, B)),
    "an_effect": (lambda x, b: (tf.debug.print("x {}", x), tnp.tanh(x + b))[1], (X, B)),
    "broadcast_both_sides": (lambda x, b: tnp.outer(b, b) + b[:, None], (X, B)),
    # a where whose mask and false branch are both broadcasts of rows, the mask false
    # throughout (advi.py's NaN parameters): the result is the full batch, not one row
    "false_mask_and_branch_broadcast": (lambda x, b: tnp.where(
        tnp.broadcast_to(b > 10.0, x.shape), tnp.sin(x), tnp.broadcast_to(b * 2, x.shape)),
        (X, B)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_interpreted_tier_equals_the_program(name):
    fn, args = CASES[name]
    program = tf.make_program(fn)(*args)
    want = eval_program(program, list(args))
    got = Plan(program, tiered=True).interpret(list(args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is np.ndarray and g.shape == np.shape(w)
        np.testing.assert_array_equal(g, w)


def test_broadcasts_read_by_elementwise_ops_become_views():
    program = tf.make_program(lambda x, b: tnp.tanh(x + b) * 2.0)(X, B)
    names = [e.prim.name for e in _broadcasts_as_views(program).eqns]
    assert "broadcast_in_dim" in [e.prim.name for e in program.eqns]
    assert "broadcast_in_dim" not in names and "reshape" in names
    kept = tf.make_program(lambda x, b: tnp.broadcast_to(b, x.shape))(X, B)
    assert _broadcasts_as_views(kept) is kept            # an output stays full size


def test_a_view_is_made_once_and_a_filled_scalar_is_read_as_a_scalar():
    # a row maximum kept as a column is read as the same view by the shift and by its
    # gradient; the mean's 1/n cotangent, filled to a column, is read as the scalar
    program = simplify(tf.make_program(CASES["log_softmax_ce_grad"][0])(X, B))
    interpreted = _broadcasts_as_views(program)
    made = [(e.invars[0], e.params["new_sizes"]) for e in interpreted.eqns
            if e.prim.name == "reshape"]
    assert len(made) == len(set(made)), interpreted
    assert "broadcast_in_dim" not in [e.prim.name for e in interpreted.eqns], interpreted
    assert len(interpreted.eqns) < len(program.eqns)


def test_the_interpreted_tier_of_an_unsimplified_program_whose_output_is_a_reshape_made_twice():
    # found by the fuzzer: the second reshape, an output, was read as the first, and the
    # output was left undefined (KeyError); a Runtime takes programs unsimplified
    def f(x):
        first = tnp.expand_dims(x, -1)
        return tnp.expand_dims(x, 1), first * 2
    x = np.arange(5.0)
    program = tf.make_program(f)(x)
    got = Plan(program, tiered=True).interpret([x])
    for a, b in zip(got, eval_program(program, [x])):
        np.testing.assert_array_equal(a, b)
