"""Region kernels (issue 38): a large program runs as one kernel per fused region or
library step, identical regions share one kernel, an edit recompiles only what it
changed, and a plan runs some regions compiled and the rest interpreted while its
kernels arrive, with the values of either alone."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.lowering.segments import CompiledSegment


def _mlp(layers, activations=None):
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((16, 16)) / 4, rng.standard_normal(16) / 4)
              for _ in range(layers)]
    x, y = rng.standard_normal((8, 16)), rng.standard_normal((8, 16))
    acts = activations or [tnp.tanh] * layers

    def loss(params, x, y):
        h = x
        for (w, b), act in zip(params, acts):
            h = act(h @ w + b)
        return tnp.mean((h - y) ** 2)
    return loss, (params, x, y)


def _reference(layers, params, x, y, acts):
    """Loss and gradients by NumPy (backpropagation written out)."""
    hs, h = [x], x
    for (w, b), act in zip(params, acts):
        h = act(h @ w + b)
        hs.append(h)
    loss = np.mean((h - y) ** 2)
    g = 2 * (h - y) / h.size
    grads = [None] * layers
    for k in range(layers - 1, -1, -1):
        w, _ = params[k]
        out = hs[k + 1]
        dz = g * (1 - out ** 2) if acts[k] is np.tanh else g * (out > 0)
        grads[k] = (hs[k].T @ dz, dz.sum(0))
        g = dz @ w.T
    return loss, grads


def _plan(fn, args, regions=True):
    return tf.jit(tf.value_and_grad(fn), regions=regions).lower(*args).plan


def _kernel_keys(plan):
    return [seg.kernel.key for seg in plan.segments if type(seg) is CompiledSegment]


def test_the_layers_of_a_deep_mlp_share_their_kernels():
    few = _kernel_keys(_plan(*_mlp(4)))
    many = _kernel_keys(_plan(*_mlp(32)))
    assert len(many) > 7 * len(few) / 2         # one kernel call per region, per layer
    assert set(many) == set(few)                # ... of the same few kernels


def test_an_edited_layer_recompiles_only_its_regions():
    acts = [tnp.tanh] * 16
    before = set(_kernel_keys(_plan(*_mlp(16, acts))))
    acts[7] = tf.nn.relu
    after = set(_kernel_keys(_plan(*_mlp(16, acts))))
    new = after - before
    assert new and len(new) <= 2       # the relu layer's forward and backward regions


@pytest.mark.parametrize("layers", [1, 3])
def test_region_kernels_agree_with_numpy(layers):
    fn, (params, x, y) = _mlp(layers)
    f = tf.jit(tf.value_and_grad(fn), regions=True, tiered=False)
    loss, grads = f(params, x, y)
    want_loss, want_grads = _reference(layers, params, x, y, [np.tanh] * layers)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    for (gw, gb), (ww, wb) in zip(grads, want_grads):
        np.testing.assert_allclose(gw, ww, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(gb, wb, rtol=1e-10, atol=1e-13)


def test_inputs_laid_out_otherwise_than_the_typed_call_give_numpy_values():
    """The driver calls kernels' machine code without numba's type dispatch, typed for C
    arrays by its first call: a later call with a strided, Fortran-ordered or read-only
    input must not be read as a C array (wrong elements) but give NumPy's values, and a
    C-ordered call after it still runs through the entry points."""
    layers = 3
    fn, (params, x, y) = _mlp(layers)
    f = tf.jit(tf.value_and_grad(fn), regions=True, tiered=False)
    plan = f.lower(params, x, y).plan
    acts = [np.tanh] * layers

    def check(params, x, y):
        loss, grads = f(params, x, y)
        want_loss, want_grads = _reference(layers, params, x, y, acts)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
        for (gw, gb), (ww, wb) in zip(grads, want_grads):
            np.testing.assert_allclose(gw, ww, rtol=1e-10, atol=1e-13)
            np.testing.assert_allclose(gb, wb, rtol=1e-10, atol=1e-13)
    check(params, x, y)
    check(params, x, y)         # the driver, typed by a call of C arrays
    assert plan._driver.entries > 2 * layers
    rng = np.random.default_rng(1)
    strided_x = rng.standard_normal((8, 32))[:, ::2]
    fortran_w = np.asfortranarray(rng.standard_normal((16, 16)) / 4)
    read_only_b = rng.standard_normal(16) / 4
    read_only_b.flags.writeable = False
    for changed in ([params, strided_x, y],
                    [[(fortran_w, params[0][1])] + params[1:], x, y],
                    [params[:2] + [(params[2][0], read_only_b)], x, y]):
        check(*changed)
    check(params, x, y)
    assert plan._driver.entries > 2 * layers


def test_some_regions_compiled_the_rest_interpreted():
    """While some kernels are in, a call runs those and interprets the others
    (``Tiers.run_mixed``): its values are those of the interpreter and of the kernels."""
    layers = 3
    fn, (params, x, y) = _mlp(layers)
    f = tf.jit(tf.value_and_grad(fn), regions=True, tiered=True)
    plan = f.lower(params, x, y).plan
    args = tf.tree_util.tree_leaves((params, x, y))
    interpreted = plan.interpret(list(args))
    compiled = [seg for seg in plan.segments if type(seg) is CompiledSegment]
    assert len(compiled) > 4
    half = set(map(id, compiled[::2]))

    def compile_half(seg, seg_args):        # in this process, for every other kernel
        if id(seg) in half:
            return seg(list(seg_args))
        return seg.evaluate(seg_args)
    plan._run_segments(list(args), compile_half)
    mixed = plan.tiers.run_mixed(list(args), 0.0)
    assert not plan.ready
    want_loss, want_grads = _reference(layers, params, x, y, [np.tanh] * layers)
    want = [want_loss] + [g for pair in want_grads for g in pair]
    for got_mixed, got_interpreted, expected in zip(mixed, interpreted, want):
        np.testing.assert_allclose(got_mixed, expected, rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(got_interpreted, expected, rtol=1e-10, atol=1e-13)


def test_a_small_program_runs_its_region_kernels_then_hands_over_to_one_kernel(tmp_path,
                                                                            monkeypatch):
    """A tiered program one kernel holds gets region kernels first (few, shared: they
    compile sooner) and its one kernel after them (its step is the fastest), all from the
    compile workers: each call on the way gives the values NumPy's backpropagation does,
    and once the one kernel is in, calls run it alone."""
    import tf_numba.lowering.kernel_cache as kc
    from tf_numba.lowering.plan import Plan
    monkeypatch.delenv("TF_NUMBA_REGIONS", raising=False)
    layers = 8          # (17 loop nests, 7 region kernels: the region kernels go first)
    fn, (params, x, y) = _mlp(layers, [tnp.tanh] * 7 + [tnp.sin])       # kernels of its own
    program = tf.make_program(tf.value_and_grad(fn))(params, x, y)
    args = tf.tree_util.tree_leaves((params, x, y))
    hs = [x]
    for w, b in params:
        hs.append(np.tanh(hs[-1] @ w + b))
    plan = Plan(program, kernel_cache=kc.KernelCache(directory=str(tmp_path)), tiered=True)
    assert plan.successor is not None and len(_kernel_keys(plan)) > 1
    want = plan.interpret(list(args))

    def check(got):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)

    check(plan.run(list(args)))         # interpreted; both sets sent to the workers
    plan.tiers.compile(list(args))
    assert plan.ready
    check(plan.run(list(args)))         # the region kernels (or the one kernel, if in)
    plan.compile(list(args))            # waits for the one kernel as well
    assert plan.settled and plan.final is plan.successor.plan and plan.final.single
    assert plan.final.segments[0].kernel.compiled_for(
        plan.final.segments[0].signature(list(args)))
    driven = []
    monkeypatch.setattr(Plan, "_drive", lambda self, a: driven.append(self))
    check(plan.run(list(args)))         # the one kernel alone: no region driver
    assert driven == []
    # and the interpreter agrees with NumPy's forward pass on the loss
    np.testing.assert_allclose(want[0], np.mean((np.sin(hs[-2] @ params[7][0] + params[7][1])
                                                 - y) ** 2), rtol=1e-12)


def test_explicit_choices_get_no_successor():
    fn, args = _mlp(8)
    assert _plan(fn, args, regions=True).successor is None
    one = _plan(fn, args, regions=False)
    assert one.successor is None and one.single
    assert tf.jit(tf.value_and_grad(fn), tiered=False).lower(*args).plan.successor is None
    assert _plan(fn, args, regions=None).successor is not None
    # a program of few nests, or whose region kernels share little, gets its one kernel
    assert _plan(*_mlp(2), regions=None).successor is None
    assert _plan(*_mlp(4), regions=None).successor is None


def test_a_program_past_the_successors_size_keeps_its_region_kernels(monkeypatch):
    """Past ``SUCCESSOR_MOST_NESTS`` loop nests (and at most ``MAX_KERNEL_NESTS``), a
    tiered program whose regions split runs region kernels and no one kernel after them,
    whether or not its regions share kernels: that kernel would compile for seconds to
    run the step a few percent faster. Its values are NumPy's backpropagation's."""
    from tf_numba.lowering import plan as plan_module
    from tf_numba.lowering.segments import MAX_KERNEL_NESTS
    monkeypatch.delenv("TF_NUMBA_REGIONS", raising=False)
    layers = 10                 # 21 loop nests
    assert 2 * layers + 1 > plan_module.SUCCESSOR_MOST_NESTS
    assert 2 * layers + 1 <= MAX_KERNEL_NESTS
    # a different activation per layer: kernels shared only by forward and backward
    acts = [tnp.tanh, tnp.sin, tnp.cos, tnp.exp, tnp.arctan] * 2
    fn, (params, x, y) = _mlp(layers, acts)
    plan = _plan(fn, (params, x, y), regions=None)
    assert plan.successor is None and len(_kernel_keys(plan)) > 1
    assert 2 * len(set(_kernel_keys(plan))) > 2 * layers + 1     # they share little
    got = plan.interpret(tf.tree_util.tree_leaves((params, x, y)))
    # the forward pass by NumPy
    h = x
    for (w, b), act in zip(params, [np.tanh, np.sin, np.cos, np.exp, np.arctan] * 2):
        h = act(h @ w + b)
    np.testing.assert_allclose(got[0], np.mean((h - y) ** 2), rtol=1e-12)
    # below the size, a program that shares as little gets its one kernel
    few = _plan(*_mlp(5, acts[:5]), regions=None)
    assert few.successor is None and few.single
