"""Kernel workspaces: intermediates no output can reach live in a buffer the segment keeps
between calls; outputs never do, and a dead scatter operand is combined into in place."""
import threading

import numpy as np
from schedule_checks import calls, schedules

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.lowering import workspace


def compiled(fn):
    return tf.jit(fn, tiered=False)


def _two_pass(x):
    # exp(x) is kept for the second pass (a row sum sits between): a private intermediate
    e = tnp.exp(x - tnp.max(x, axis=1, keepdims=True))
    return e / tnp.sum(e, axis=1, keepdims=True), tnp.reshape(x * 2, (-1,))


def _reference(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), (x * 2).reshape(-1)


def _segment(f, *args):
    return f.lower(*args).compile().plan.segments[0]


def test_private_intermediates_come_from_the_workspace_and_outputs_never_do():
    f = compiled(_two_pass)
    rng = np.random.default_rng(0)
    (sched,) = schedules(f, np.ones((2, 3)))
    assert sched.workspace and not sched.workspace & set(sched.program.outvars)
    kept = []
    # the first call of a shape sizes its workspace; the later ones use it
    for rows, cols in [(2, 3), (5, 7)] * 3 + [(40, 50)] * 3:
        x = rng.normal(size=(rows, cols))
        got = f(x)
        for g, w in zip(got, _reference(x)):
            np.testing.assert_allclose(g, w, rtol=1e-14)
        kept.append((x, [g.copy() for g in got], got))
    for _, copies, got in kept:                # later calls did not write into old outputs
        for c, g in zip(copies, got):
            np.testing.assert_array_equal(c, g)
    seg = _segment(f, np.ones((40, 50)))
    assert seg.workspaces is not None and seg.workspaces.nbytes() >= 40 * 50 * 8


def test_workspace_grows_to_what_a_call_asked_and_falls_back_when_short():
    pool = workspace.Workspaces()
    ws = pool.acquire()
    assert ws[0].size == 0
    ws[1][:] = (0, 4096)
    pool.release(ws)
    ws = pool.acquire()
    assert ws[0].size == 4096 and ws[0].ctypes.data % workspace.ALIGN == 0
    f = compiled(_two_pass)
    x = np.random.default_rng(1).normal(size=(64, 64))
    for _ in range(3):                          # the first call asks, the next ones fit
        np.testing.assert_allclose(f(x)[0], _reference(x)[0], rtol=1e-14)


def test_threads_running_one_kernel_each_get_their_own_workspace():
    f = compiled(_two_pass)
    rng = np.random.default_rng(2)
    inputs = [rng.normal(size=(30, 20 + k)) for k in range(6)]
    f(inputs[0])
    errors = []

    def work(x):
        for _ in range(30):
            for g, w in zip(f(x), _reference(x)):
                if not np.allclose(g, w, rtol=1e-14, atol=0):
                    errors.append(x.shape)

    threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_scatter_combines_into_a_dead_operand_and_copies_a_live_one():
    idx = np.array([0, 2, 2])

    def dead(x, u):
        return (tnp.zeros_like(x) * x).at[idx].add(u) + x

    def live(x, u):
        base = x * 3
        return base.at[idx].add(u), base

    x, u = np.arange(12.0).reshape(4, 3), np.ones((3, 3))
    want = np.zeros_like(x)
    np.add.at(want, idx, u)
    f = compiled(dead)
    (scatter,) = calls(f, x, u, prim="scatter_add")
    assert scatter.overwrites                   # its operand's only reader
    np.testing.assert_array_equal(f(x, u), want + x)
    g = compiled(live)
    (scatter,) = calls(g, x, u, prim="scatter_add")
    assert not scatter.overwrites               # the operand is an output too
    scattered, base = g(x, u)
    np.testing.assert_array_equal(base, x * 3)
    np.testing.assert_array_equal(scattered, x * 3 + want)


def test_an_operand_of_a_product_is_private_the_product_is_not():
    """dot_general always writes a fresh array, so its operands can be workspace arrays
    even when the product is an output; the outputs of earlier calls stay intact."""
    f = compiled(lambda x, w: (tnp.tanh(x) * 2.0) @ w)
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(64, 48)), rng.normal(size=(48, 32))
    (sched,) = schedules(f, x, w)
    (product,) = [c for c in sched.calls() if c.product is not None]
    assert product.eqn.invars[0] in sched.workspace        # the operand
    assert product.eqn.outvars[0] not in sched.workspace   # the product: an output
    kept = []
    for _ in range(3):
        x = rng.normal(size=(64, 48))
        kept.append((f(x, w), (np.tanh(x) * 2.0) @ w))
    for got, want in kept:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_scatter_into_a_view_leaves_the_viewed_array_alone():
    """A scatter whose operand is a reshape of an array read later (its only reader, and
    private) must not write into it: the view shares the array's memory."""
    def f(a, u):
        x = tnp.sin(a) * 2.0
        s = x.reshape(12).at[np.array([1, 2])].add(u)
        return tnp.sum(s), x + 1.0
    a, u = np.arange(12.0).reshape(3, 4), np.ones(2)
    x = np.sin(a) * 2.0
    s = x.reshape(12).copy()
    np.add.at(s, [1, 2], u)
    f_jit = tf.jit(f, tiered=False)
    (scatter,) = calls(f_jit, a, u, prim="scatter_add")
    assert not scatter.overwrites
    total, shifted = f_jit(a, u)
    np.testing.assert_allclose(total, s.sum(), rtol=1e-12)
    np.testing.assert_array_equal(shifted, x + 1.0)
