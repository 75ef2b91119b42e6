"""jit: compiled results equal the NumPy interpreter's, kernels are reused across lengths,
static arguments and pytrees dispatch, jit composes with AD, and calls read parameter trees."""

import numpy as np
import pytest
from jit_checks import assert_ulp_close, compiled
from schedule_checks import numpy_steps

import tf_numba as tf
import tf_numba.numpy as tnp

RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, (3, 4))
Y = RNG.uniform(0.2, 0.9, (3, 4))

# One kernel for many functions: compile time, not the number of functions, is the cost.
UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh",
         "sqrt", "cbrt", "abs", "sign", "floor", "ceil", "rint", "square", "reciprocal",
         "negative", "deg2rad", "rad2deg", "isfinite", "isnan", "signbit", "trunc"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
          "power", "maximum", "minimum", "arctan2", "hypot", "copysign", "logaddexp",
          "greater", "less_equal", "equal", "fmax", "fmin", "nextafter", "heaviside"]


def many(x, y):
    return ([getattr(tnp, n)(x) for n in UNARY] + [getattr(tnp, n)(x, y) for n in BINARY]
            + [tnp.where(x > y, x, y), tnp.clip(x, 0.3, 0.6), tnp.arccosh(x + 1.0)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_functions_jitted_equal_interpreted(dtype):
    x, y = X.astype(dtype), Y.astype(dtype)
    got, want = compiled(many)(x, y), many(x, y)
    for name, a, b in zip(UNARY + BINARY + ["where", "clip", "arccosh"], got, want):
        assert_ulp_close(a, b), name


def reductions_and_layout(x):
    return [tnp.sum(x), tnp.sum(x, axis=0), tnp.mean(x, axis=1), tnp.max(x, axis=1),
            tnp.min(x), tnp.prod(x, axis=0), tnp.var(x), tnp.std(x, axis=0),
            tnp.argmax(x, axis=1), tnp.argmin(x, axis=0), tnp.cumsum(x, axis=1),
            tnp.cumprod(x, axis=0), tnp.all(x > 0.1), tnp.any(x > 0.85, axis=0),
            x.T, tnp.reshape(x, (4, 3)), x[::-1, 1:3], x[:, ::2], tnp.flip(x, 1),
            tnp.concatenate([x, x], axis=0), tnp.stack([x, x]), tnp.pad(x, 1),
            tnp.tile(x, (2, 1)), tnp.roll(x, 1, axis=1), tnp.tril(x), tnp.sort(x, axis=1),
            tnp.argsort(x, axis=0), x[np.array([2, 0])], x[1], x[None, :, 1],
            tnp.take_along_axis(x, np.array([[0], [1], [2]]), 1), tnp.arange(5) * 2,
            tnp.eye(3), tnp.linspace(0.0, 1.0, 4), x @ x.T, tnp.outer(x[0], x[1]),
            tnp.tensordot(x, x, axes=([1], [1])), tnp.trace(x @ x.T), tnp.diagonal(x),
            tnp.at(x)[0, 1].set(5.0), tnp.at(x)[np.array([0, 0])].add(1.0)]


def test_reductions_layout_indexing_jitted_equal_interpreted():
    got, want = compiled(reductions_and_layout)(X), reductions_and_layout(X)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_ulp_close(a, b), k


def test_grad_jitted_equals_interpreted_and_composes_both_ways():
    def loss(w, x):
        return tnp.sum(tnp.tanh(x @ w) ** 2) + tnp.mean(tnp.exp(-w))
    w, x = RNG.normal(size=(4, 2)), RNG.normal(size=(3, 4))
    want = tf.grad(loss)(w, x)
    assert_ulp_close(compiled(tf.grad(loss))(w, x), want, ulps=64)
    assert_ulp_close(tf.grad(compiled(loss))(w, x), want, ulps=64)
    hvp = compiled(lambda w, v: tf.jvp(tf.grad(loss), (w, x), (v, np.zeros_like(x)))[1])
    v = RNG.normal(size=w.shape)
    assert_ulp_close(hvp(w, v), tf.jvp(tf.grad(loss), (w, x), (v, np.zeros_like(x)))[1],
                     ulps=256)


def test_new_length_reuses_the_kernel_without_compiling():
    f = compiled(lambda x: tnp.sum(tnp.exp(tnp.sin(x) * x + tnp.cos(x) ** 2)))
    f(np.linspace(0, 1, 5))
    before = tf.cache_info()
    for n in (7, 100, 1001):
        x = np.linspace(0, 1, n)
        assert_ulp_close(f(x), np.sum(np.exp(np.sin(x) * x + np.cos(x) ** 2)), ulps=64)
    after = tf.cache_info()
    assert after["compiles"] == before["compiles"]
    assert after["misses"] == before["misses"]
    assert after["hits"] == before["hits"] + 3


def test_matmul_of_new_shapes_reuses_the_kernel():
    f = compiled(lambda a, b: a @ b)
    f(np.ones((2, 3)), np.ones((3, 4)))
    before = tf.cache_info()["compiles"]
    a, b = RNG.normal(size=(5, 7)), RNG.normal(size=(7, 6))
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-13)
    assert tf.cache_info()["compiles"] == before


def test_static_argnums_pytrees_and_kwargs():
    @tf.jit(static_argnums=1, tiered=False)
    def f(params, power, *, scale):
        return {"y": tnp.sum(params["w"] ** power) * scale, "z": (params["b"], None)}
    p = {"w": np.arange(3.0), "b": np.ones(2)}
    out = f(p, 3, scale=2.0)
    assert out["y"] == 2.0 * np.sum(np.arange(3.0) ** 3)
    np.testing.assert_array_equal(out["z"][0], np.ones(2))
    assert out["z"][1] is None
    assert f(p, 2, scale=1.0)["y"] == 5.0


def test_jit_inside_a_trace_is_inlined():
    inner = tf.jit(lambda x: tnp.sin(x) * 2)
    program = tf.make_program(lambda x: inner(x) + 1)(np.ones(3))
    assert [e.prim.name for e in program.eqns] == ["sin", "mul", "add"]


def test_lower_shows_program_and_generated_source():
    text = compiled(lambda x: tnp.sum(tnp.exp(x))).lower(np.ones(4)).as_text()
    assert "exp" in text and "def kernel(" in text and "for i0 in range(" in text
    assert "\n== schedule: 1 segment, serial variant ==\n" in text and "nest (4,): exp" in text


def test_tiered_first_call_is_interpreted_then_compiled():
    f = tf.jit(lambda x: tnp.cumsum(tnp.tanh(x)) * 3, tiered=True)
    x = np.linspace(-1, 1, 9)
    first = f(x)
    assert_ulp_close(first, np.cumsum(np.tanh(x)) * 3)
    prepared = f.lower(x).compile()
    assert prepared.plan.ready
    assert_ulp_close(f(x), first)


def test_unlowerable_operands_run_as_numpy_steps():
    f = compiled(lambda z: tnp.sort(z) * 2)
    z = np.array([3 + 1j, 1 - 1j, 2 + 0j])
    np.testing.assert_array_equal(f(z), np.sort(z) * 2)
    assert numpy_steps(f, z) == ["sort"]


def test_outputs_that_are_inputs_are_not_copied():
    x = np.ones(3)
    y, z = compiled(lambda a: (a, a * 2))(x)
    assert y is x


def test_jit_rejects_an_engine_of_another_target():
    from tf_numba.runtime import EngineTarget

    class Other:
        threads = 1

        def target(self):
            return EngineTarget("gpu:0", "gpu")

    with pytest.raises(tf.errors.TfNumbaError, match="CPU engine"):
        tf.jit(lambda x: x, engine=Other())


def test_parallel_plans_run_from_many_threads_at_once():
    import threading

    from tf_numba.lowering.schedule import PARALLEL_MIN_ELEMENTS
    from tf_numba.runtime import CpuEngine
    f = tf.jit(lambda x: tnp.sum(tnp.exp(x)), tiered=False, engine=CpuEngine(threads=2))
    x = RNG.normal(size=PARALLEL_MIN_ELEMENTS)
    want = f(x)
    results = []

    def worker():
        results.extend(f(x) for _ in range(5))
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 20


def test_calls_with_parameter_lists_dispatch_on_every_leaf():
    """f(params, x) with params a list or tuple of arrays takes the fast path once
    compiled; a change of any leaf's shape or dtype, of the container (list, tuple, its
    length, nesting) or a non-array leaf still reaches the right specialization."""
    def f(params, x):
        w, b = params[0], params[1]
        return tnp.sum(x @ w + b) + sum(tnp.sum(p) for p in params[2:])

    def want(params, x):
        return np.sum(x @ params[0] + params[1]) + sum(np.sum(p) for p in params[2:])

    g = tf.jit(f, tiered=False)
    w, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))
    calls = [([w, b], x), ([w, b], x), ((w, b), x), ([w, b, b], x),
             ([w.astype(np.float32), b], x), ([w[:2], b], x[:, :2]),
             ([w, b, [b, b]], x), ([w, 2.0], x), ([w, b], x)]
    for params, xv in calls:
        np.testing.assert_allclose(g(params, xv), want(params, xv), rtol=1e-6)
    assert len(g.jitted._prepared) == 7     # list/tuple, 3 leaves, float32, shapes, nested, scalar
    # the same leaves split differently between two lists are different calls
    h = tf.jit(lambda p, q: tnp.sum(p[-1]) * 2.0 - tnp.sum(q[0]), tiered=False)
    u, v, z = (RNG.normal(size=3) for _ in range(3))
    for _ in range(2):                        # the second round runs on the fast path
        np.testing.assert_allclose(h([u, v], [z]), np.sum(v) * 2 - np.sum(z), rtol=1e-12)
        np.testing.assert_allclose(h([u], [v, z]), np.sum(u) * 2 - np.sum(v), rtol=1e-12)
    k = tf.jit(lambda p, x=None: tnp.sum(p[-1]) - (0.0 if x is None else tnp.sum(x)),
               tiered=False)
    for _ in range(2):                        # ([u], v) and ([u, v]) have the same leaves
        np.testing.assert_allclose(k([u], v), np.sum(u) - np.sum(v), rtol=1e-12)
        np.testing.assert_allclose(k([u, v]), np.sum(v), rtol=1e-12)


def _parameter_trees():
    from hypothesis import strategies as st
    leaf = st.sampled_from([np.zeros(2), np.zeros((2, 3)), np.zeros(2, np.float32),
                            np.zeros(()), np.float64(1.0)])
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("abc"), inner, max_size=3)), max_leaves=8)


def test_a_reader_written_for_one_structure_reads_it_as_the_walk_and_no_other():
    """jit's fast path reads arguments with code written for the first call's structure
    (``_reader_for``): on arguments of that structure it gives ``_fast_signature``'s key
    and leaves, on any other None (never another structure's key)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tf_numba.jit import _fast_signature, _reader_for

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_parameter_trees(), min_size=1, max_size=3).map(tuple),
           st.lists(_parameter_trees(), min_size=1, max_size=3).map(tuple))
    def check(first, other):
        reader = _reader_for(first)
        if reader is None:      # a leaf that is not an ndarray: the walk reads it
            assert any(type(x) is not np.ndarray for x in tf.tree_util.tree_leaves(first))
            return
        want = _fast_signature(first)
        key, leaves = reader(first)
        assert key == want[0] and len(leaves) == len(want[1])
        assert all(a is b for a, b in zip(leaves, want[1]))
        got, walked = reader(other), _fast_signature(other)
        same = tf.tree_util.tree_structure(other) == tf.tree_util.tree_structure(first)
        if got is not None:
            assert same and got[0] == walked[0]
            assert all(a is b for a, b in zip(got[1], walked[1]))
        else:       # another structure, or a leaf that is not an ndarray
            assert not same or any(type(x) is not np.ndarray
                                   for x in tf.tree_util.tree_leaves(other))
    check()


def test_calls_with_parameter_dicts_dispatch_on_names_and_leaves():
    """A dict of arrays takes the fast path too, its leaves in sorted-key order as the
    pytree flattening; other names, shapes or a non-array value reach their own
    specialization."""
    g = tf.jit(lambda p, x: tnp.sum(x @ p["w"]) * 2.0 - tnp.sum(p["b"]), tiered=False)
    w, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))
    for _ in range(2):                        # the second round runs on the fast path
        for params, xv in [({"w": w, "b": b}, x), ({"b": b, "w": w}, x),
                           ({"w": w[:2], "b": b}, x[:, :2]), ({"w": w, "b": 1.5}, x)]:
            want = np.sum(xv @ params["w"]) * 2.0 - np.sum(params["b"])
            np.testing.assert_allclose(g(params, xv), want, rtol=1e-12)
    swapped = tf.jit(lambda p: tnp.sum(p["a"]) - 2.0 * tnp.sum(p["z"]), tiered=False)
    u, v = RNG.normal(size=3), RNG.normal(size=3)
    for _ in range(2):                        # same leaves under other names
        np.testing.assert_allclose(swapped({"a": u, "z": v}), u.sum() - 2 * v.sum(), rtol=1e-12)
        np.testing.assert_allclose(swapped({"z": u, "a": v}), v.sum() - 2 * u.sum(), rtol=1e-12)
    named = tf.jit(lambda p: sum(tnp.sum(v) * len(k) for k, v in p.items()), tiered=False)
    for _ in range(2):                        # same leaves, other names: other results
        np.testing.assert_allclose(named({"a": u, "zz": v}), u.sum() + 2 * v.sum(), rtol=1e-12)
        np.testing.assert_allclose(named({"a": u, "z": v}), u.sum() + v.sum(), rtol=1e-12)


def test_an_output_that_is_a_closed_over_array_beside_computed_ones():
    # found by the fuzzer: jit(grad) of a loss linear in one argument, whose gradient is
    # the array the loss closed over, raised KeyError in code generation
    u = RNG.standard_normal(3)
    got = compiled(lambda x: (x * 2.0, u))(X[0, :3])
    np.testing.assert_array_equal(got[1], u)
    np.testing.assert_array_equal(got[0], X[0, :3] * 2.0)
    loss = lambda x, y: tnp.sum(x * u) + tnp.sum(tnp.sin(y))   # noqa: E731
    gx, gy = compiled(tf.grad(loss, (0, 1)))(X[0, :3], X[1, :3])
    np.testing.assert_array_equal(gx, u)
    assert_ulp_close(gy, np.cos(X[1, :3]))
