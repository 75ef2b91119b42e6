"""The NumPy interpreter: a program's first runs step through its schedule; once it has run
``COMPILE_AFTER_RUNS`` times it runs as a Python function written for it. Both must give
the same values and the same errors."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.core import interpreter
from tf_numba.core.interpreter import eval_program
from tf_numba.errors import TfIndexError

RUNS = interpreter.COMPILE_AFTER_RUNS + 3


def _model(w, xs, b):
    def cell(h, x):
        h = tnp.tanh(w @ h + x)
        return h, tnp.sum(h) * 0.5                 # literals inside a scan body
    h, ys = lax.scan(cell, tnp.zeros(3), xs)
    lo, hi = tnp.sort(ys)[0], tnp.max(ys)
    return h, ys, lo + hi, b, tnp.linalg.inv(w + 3.0 * tnp.eye(3))


def _model_np(w, xs, b):
    h, ys = np.zeros(3), []
    for x in xs:
        h = np.tanh(w @ h + x)
        ys.append(np.sum(h) * 0.5)
    ys = np.array(ys)
    return h, ys, ys.min() + ys.max(), b, np.linalg.inv(w + 3.0 * np.eye(3))


def test_a_program_run_many_times_gives_the_values_of_its_first_runs():
    rng = np.random.default_rng(3)
    w, xs, b = rng.standard_normal((3, 3)), rng.standard_normal((6, 3)), np.float64(2.5)
    program = tf.make_program(_model)(w, xs, b)
    first = eval_program(program, [w, xs, b])
    for _ in range(RUNS):
        outs = eval_program(program, [w, xs, b])
    assert program._schedule.run is not None          # now the written function's
    for got, was, want in zip(outs, first, _model_np(w, xs, b)):
        np.testing.assert_array_equal(got, was)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    # and on other arguments, as a jitted call's later steps are
    w2 = w[::-1].copy()
    for got, want in zip(eval_program(program, [w2, xs, b]), _model_np(w2, xs, b)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _take_thrice(x, i):
    return tnp.take(x, i) * 3.0          # the line the error must name


def test_an_error_on_the_written_function_names_the_op_the_index_and_the_users_line():
    x, good, bad = np.arange(5.0), np.array([1, 2]), np.array([0, 9])
    program = tf.make_program(_take_thrice)(x, good)
    for _ in range(RUNS):
        np.testing.assert_array_equal(eval_program(program, [x, good])[0], [3.0, 6.0])
    assert program._schedule.run is not None
    with pytest.raises(TfIndexError) as info:
        eval_program(program, [x, bad])
    message = str(info.value)
    assert "index 9" in message and "size 5" in message, message
    assert info.value.op is not None
    assert info.value.source is not None and info.value.source[0] == __file__


def test_equations_of_constants_are_computed_once_when_the_program_is_scheduled():
    x = np.linspace(0.0, 2.0, 7)
    program = tf.make_program(lambda x: (tnp.mean(x), tnp.var(x)))(x)
    mean, var = eval_program(program, [x])
    np.testing.assert_allclose([mean, var], [np.mean(x), np.var(x)], rtol=1e-15)
    names = [step[-1].prim.name for step in program._schedule.steps]
    assert "dim_size" in [e.prim.name for e in program.eqns]
    assert "dim_size" not in names and "convert_element_type" not in names, names


def _constant_outputs(x):
    zero_grad = tf.grad(lambda y: tnp.sum(y) * 0.0 + 1.0)(x)
    return tnp.sum(x), tnp.ones(3) * 2.0, zero_grad


def _literal_output(x):
    return tnp.sum(x), tnp.zeros(()) + x.shape[0] / 2


@pytest.mark.parametrize("tiered", [True, False])
@pytest.mark.parametrize("f, want", [
    (_constant_outputs, [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0, 0.0]]),
    (_literal_output, [2.0])])
def test_a_constant_output_is_a_new_array_on_every_call(f, want, tiered):
    # a const, a literal or a gradient that is zero is the same value in every run: a
    # caller that changes what one call gave it must change no later call
    jitted = tf.jit(f, tiered=tiered)
    x = np.arange(4.0)
    for _ in range(RUNS):
        out = jitted(x)
        for got, expected in zip(out[1:], want):
            np.testing.assert_array_equal(got, expected)
            got[...] = -1.0


def _temporaries(x, y):
    t = tnp.exp(x) * y                  # a temporary ...
    col = t.reshape(-1)                 # ... with a view that outlives its last direct read
    u = tnp.tanh(t + 1.0)
    v = u * u - y                       # an operand read twice, then an input
    w = tnp.maximum(v, 0.0) / 3.0
    return w, col[:5] + 0.0, x.T * 2.0 + w, -v


def _temporaries_np(x, y):
    t = np.exp(x) * y
    col = t.reshape(-1)
    u = np.tanh(t + 1.0)
    v = u * u - y
    w = np.maximum(v, 0.0) / 3.0
    return w, col[:5] + 0.0, x.T * 2.0 + w, -v


def test_results_written_into_dying_operands_keep_every_value_input_and_view():
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))
    x0, y0 = x.copy(), y.copy()
    program = tf.make_program(_temporaries)(x, y)
    want = _temporaries_np(x, y)
    for _ in range(RUNS):
        got = eval_program(program, [x, y])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(x, x0)            # the inputs are never written
        np.testing.assert_array_equal(y, y0)
        assert not any(np.shares_memory(a, b) for i, a in enumerate(got) for b in got[:i])
    run = program._schedule.run
    assert run is not None and run.reuses >= 4          # the function was written and reuses


def test_no_result_is_written_into_an_array_something_else_holds():
    a = np.ones((64, 64))
    kept = [a]
    assert not interpreter._reusable(a, a.shape)        # a list holds it too
    del kept
    assert interpreter._reusable(a, a.shape)
    view = a[1:]
    assert not interpreter._reusable(a, a.shape)        # a view of it is alive
    assert not interpreter._reusable(view, view.shape)  # a view does not own its memory
    del view
    assert not interpreter._reusable(a, (64, 1))        # a result of another shape
    a.flags.writeable = False
    assert not interpreter._reusable(a, a.shape)
