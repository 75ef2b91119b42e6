"""Segments: a program cut into compiled kernels and NumPy steps, and how a kernel's
errors reach the user."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import TfIndexError
from tf_numba.kernel_vocab.rules import lowerable
from tf_numba.lowering.segments import split


def _take_twice(x, i):
    return tnp.take(x, i) * 2.0          # the line the error must name


@pytest.mark.parametrize("tiered", [False, True])
def test_an_out_of_range_index_in_compiled_code_raises_the_interpreters_error(tiered):
    f = tf.jit(_take_twice, tiered=tiered)
    x, good, bad = np.arange(5.0), np.array([1, 2]), np.array([1, 7])
    f.lower(x, good).compile(x, good)
    np.testing.assert_array_equal(f(x, good), [2.0, 4.0])     # compiled, on the fast path
    for _ in range(2):
        with pytest.raises(TfIndexError) as info:
            f(x, bad)
        message = str(info.value)
        assert "index 7" in message and "size 5" in message, message
        assert info.value.source is not None and info.value.source[0] == __file__
        assert info.value.__cause__ is None and info.value.__suppress_context__


def _take_twice_again(x, i):
    return tnp.take(x, i) * 2.0          # the same program as _take_twice's, another line


@pytest.mark.parametrize("tiered", [False, True])
def test_equal_programs_of_two_functions_each_name_their_own_line(tiered):
    """Equal programs share kernels, not the plan whose errors name the user's line."""
    x, good, bad = np.arange(5.0), np.array([1, 2]), np.array([1, 7])
    for fn in (_take_twice, _take_twice_again, _take_twice):
        f = tf.jit(fn, tiered=tiered)
        f.lower(x, good).compile(x, good)
        with pytest.raises(TfIndexError) as info:
            f(x, bad)
        assert info.value.source[2] == fn.__name__, str(info.value)
        assert info.value.source[1] == fn.__code__.co_firstlineno + 1


def test_split_keeps_lowerable_runs_together_and_host_steps_apart():
    program = tf.make_program(lambda a: tnp.sum(tnp.linalg.inv(a * 2.0) + 1.0))(np.eye(3))
    groups = split(program)
    kinds = ["kernel" if isinstance(g, list) else g.prim.name for g in groups]
    assert "kernel" in kinds and any(k != "kernel" for k in kinds)
    for g in groups:
        if isinstance(g, list):
            assert all(lowerable(e) for e in g)
        else:
            assert not lowerable(g)
    assert sum(len(g) if isinstance(g, list) else 1 for g in groups) == len(program.eqns)


def test_a_program_of_many_loop_nests_is_cut_into_kernels_that_compute_the_same_bits(
        monkeypatch):
    from tf_numba.lowering import segments
    from tf_numba.lowering.plan import Plan

    def f(x):
        for k in range(10):      # each step a loop nest: a sum feeds the next one (abs, not
            # sin: vmath.sin inlined costs every kernel a quarter second of compile)
            x = tnp.abs(x) - tnp.sum(x, axis=1, keepdims=True) * (0.01 * k)
        return x
    x = np.random.default_rng(0).standard_normal((6, 5))
    program = tf.make_program(f)(x)
    whole = Plan(program, tiered=False)
    assert len(whole.segments) == 1
    monkeypatch.setattr(segments, "MAX_KERNEL_NESTS", 4)
    cut = Plan(program, tiered=False)
    assert len(cut.segments) >= 3
    assert all(type(s).__name__ == "CompiledSegment" for s in cut.segments)
    got = cut.run([x])[0]
    np.testing.assert_array_equal(got, whole.run([x])[0])
    np.testing.assert_allclose(got, f(x), rtol=1e-12, atol=1e-12)

