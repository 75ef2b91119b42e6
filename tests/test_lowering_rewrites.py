"""Program rewrites made before lowering: same values, code that compiles better."""
import numpy as np
from schedule_checks import calls, numpy_steps

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.lowering.partition import FusedRegion, partition
from tf_numba.ops import elementwise
from tf_numba.lowering.rewrites import (convert_masks_where_read, inline_custom_calls,
                                                    prepare_for_lowering,
                                                    sink_accumulated_products)

SHIFT = np.linspace(0.0, 1.0, 4)        # a constant the custom function's body closes over


@tf.custom_vjp
def _scaled_softplus(x):
    return tnp.log1p(tnp.exp(x + SHIFT)) * 1.5


_scaled_softplus.defvjp(lambda x: (_scaled_softplus(x), x),
                        lambda x, g: (g * 1.5 / (1.0 + tnp.exp(-(x + SHIFT))),))


def test_a_custom_vjp_function_is_inlined_and_compiles_with_the_rest():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    program = tf.make_program(lambda x: tnp.sum(_scaled_softplus(x) ** 2))(x)
    assert any(e.prim.name == "custom_vjp_call" for e in program.eqns)
    inlined = inline_custom_calls(program)
    assert not any(e.prim.name == "custom_vjp_call" for e in inlined.eqns)
    f = tf.jit(lambda x: tnp.sum(_scaled_softplus(x) ** 2), tiered=False)
    want = np.sum((np.log1p(np.exp(x + SHIFT)) * 1.5) ** 2)
    np.testing.assert_allclose(f(x), want, rtol=1e-13)
    assert not numpy_steps(f, x)          # one kernel, no host step
    # the rule still applies to transforms taken before jit
    g = tf.jit(tf.grad(lambda x: tnp.sum(_scaled_softplus(x))), tiered=False)
    np.testing.assert_allclose(g(x), 1.5 / (1.0 + np.exp(-(x + SHIFT))), rtol=1e-13)


def _rnn_loss(params, xs):
    def cell(h, x_t):
        h = tnp.tanh(x_t @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h
    _, hs = tf.lax.scan(cell, tnp.zeros((xs.shape[1], 3)), xs)
    return tnp.sum(hs ** 2) / 7.0


def _rnn_loss_numpy(params, xs):
    h, total = np.zeros((xs.shape[1], 3)), 0.0
    for x_t in xs:
        h = np.tanh(x_t @ params["wx"] + h @ params["wh"] + params["b"])
        total += np.sum(h ** 2)
    return total / 7.0


def _rnn_params(rng):
    return {"wx": rng.standard_normal((2, 3)), "wh": rng.standard_normal((3, 3)) / 2,
            "b": rng.standard_normal(3)}


def _scans(program):
    return [e for e in program.eqns if e.prim.name == "scan"]


def test_the_weight_gradients_an_rnn_accumulates_leave_its_backward_loop():
    rng = np.random.default_rng(3)
    params, xs = _rnn_params(rng), rng.standard_normal((6, 4, 2))
    program = tf.make_program(tf.grad(_rnn_loss))(params, xs)
    rewritten = sink_accumulated_products(program)
    before = [e.params["num_carry"] for e in _scans(program)]
    after = [e.params["num_carry"] for e in _scans(rewritten)]
    # the backward loop carried h's cotangent and the three accumulated gradients; now
    # only h's: the gradients are products (and a sum) over all steps after the loop
    assert sum(before) - sum(after) == 3
    backward = _scans(rewritten)[-1].params["body"]
    assert sum(e.prim.name == "dot_general" for e in backward.eqns) == 1
    # the gradients start at zero: each is its product over the steps, not zeros + it
    zero_fills = {e.outvars[0] for e in rewritten.eqns if e.prim.name == "broadcast_in_dim"
                  and type(e.invars[0]) is tf.core.ir.Literal and not np.any(e.invars[0].value)}
    assert not [e for e in rewritten.eqns if e.prim.name == "add" and zero_fills & set(e.invars)]
    # the values: the rewritten program, the compiled plan and the interpreter against
    # central differences of a NumPy loop
    got = dict(zip(sorted(params), tf.core.interpreter.eval_program(
        rewritten, [params[k] for k in sorted(params)] + [xs])))
    compiled = tf.jit(tf.grad(_rnn_loss), tiered=False)(params, xs)
    eager = tf.grad(_rnn_loss)(params, xs)
    for k, w in params.items():
        want = np.zeros_like(w)
        for i in np.ndindex(w.shape):
            up, down = {n: v.copy() for n, v in params.items()}, {
                n: v.copy() for n, v in params.items()}
            up[k][i] += 1e-6
            down[k][i] -= 1e-6
            want[i] = (_rnn_loss_numpy(up, xs) - _rnn_loss_numpy(down, xs)) / 2e-6
        for value in (got[k], compiled[k], eager[k]):
            np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-8)


def test_a_carry_read_elsewhere_in_the_step_stays_in_the_loop():
    def f(w, xs):
        def body(acc, x):
            acc = acc + x @ w
            return acc, tnp.sum(acc)       # the accumulator is read: it must stay a carry
        return tf.lax.scan(body, tnp.zeros(3), xs)
    rng = np.random.default_rng(4)
    w, xs = rng.standard_normal((2, 3)), rng.standard_normal((5, 2))
    program = tf.make_program(f)(w, xs)
    assert sink_accumulated_products(program) is program
    acc, sums = tf.jit(f, tiered=False)(w, xs)
    np.testing.assert_allclose(acc, xs.sum(0) @ w, rtol=1e-12)
    np.testing.assert_allclose(sums, np.cumsum(xs @ w, axis=0).sum(1), rtol=1e-12)


def test_an_accumulated_product_of_a_forward_scan_sums_over_all_steps():
    def f(xs, ys):
        def body(acc, xy):
            x, y = xy
            return acc + x[:, None] @ y[None, :], None      # made values, stacked anew
        acc, _ = tf.lax.scan(body, tnp.ones((2, 3)), (xs, ys))
        return acc
    rng = np.random.default_rng(5)
    xs, ys = rng.standard_normal((8, 2)), rng.standard_normal((8, 3))
    program = tf.make_program(f)(xs, ys)
    rewritten = sink_accumulated_products(program)
    assert [e.params["num_carry"] for e in _scans(rewritten)] == [0]
    want = np.ones((2, 3)) + xs.T @ ys
    np.testing.assert_allclose(tf.core.interpreter.eval_program(rewritten, [xs, ys])[0],
                               want, rtol=1e-12)
    np.testing.assert_allclose(tf.jit(f, tiered=False)(xs, ys), want, rtol=1e-12)


def test_a_later_pass_reads_the_boolean_mask_of_a_max_not_its_float_conversion():
    """A max pool's gradient multiplies by the float mask of the maxima; the backward
    pass converts the 1-byte mask again itself, with the interpreter's bits."""
    x = np.round(np.random.default_rng(1).normal(size=(4, 6, 6, 3)), 1)   # ties
    g = np.random.default_rng(2).normal(size=(4, 3, 3, 3))

    def loss(x):
        return tnp.sum(tf.nn.max_pool(x * x, (2, 2), (2, 2)) * g)

    program = tf.make_program(tf.grad(loss))(x)
    converts = [e for e in program.eqns if e.prim is elementwise.convert_element_type_p]
    again = [e for e in convert_masks_where_read(program).eqns
             if e.prim is elementwise.convert_element_type_p]
    assert len(again) == len(converts) + 1
    rewritten = prepare_for_lowering(program)
    kept = {v for step in partition(rewritten) if type(step) is FusedRegion
            for v in step.materialize}
    floats = {e.outvars[0] for e in rewritten.eqns
              if e.prim is elementwise.convert_element_type_p}
    assert not kept & floats
    assert any(v.aval.dtype == np.bool_ and len(v.aval.shape) == 6 for v in kept)
    f = tf.jit(tf.grad(loss), tiered=False)
    np.testing.assert_array_equal(f(x), tf.grad(loss)(x))


def test_a_convolution_input_gradient_is_one_step_of_product_and_col2im():
    x, w = np.random.default_rng(3).normal(size=(3, 5, 5, 2)), np.ones((3, 3, 2, 4)) / 7.0

    def loss(x):
        y = tf.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return tnp.sum(y * y)

    f = tf.jit(tf.grad(loss), tiered=False)
    names = [c.eqn.prim.name for c in calls(f, x)]
    assert "product_patches_transpose" in names and "patches_transpose" not in names
    np.testing.assert_allclose(f(x), tf.grad(loss)(x), rtol=1e-13)
