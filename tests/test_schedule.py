"""The compiler's decisions, read off schedules (``lowering/schedule.py``) of traced
programs: no kernel is compiled here, and nothing reads generated text.

Each case states the decision and why, from the rules in ``schedule`` and ``products``:
chunks and threads for large regions, row blocks, reduction splits and their buffers,
the workspace, product helpers and BLAS, loop bodies, and programs cut into segments."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.ext import NUMPY_BLAS, SCIPY_BLAS
from tf_numba.lowering.plan import Plan
from tf_numba.lowering.schedule import (CHUNK_ELEMENTS, PARALLEL_MIN_ELEMENTS,
                                        PARALLEL_MIN_ELEMENTS_MATH, PASSES, Call, Nest,
                                        RowBlock, Target, schedule)

RNG = np.random.default_rng(0)


def scheduled(f, *args, parallel=False, products_on_numpy=True):
    """The schedule of ``f``'s one kernel, as ``jit`` prepares it (simplified, rewritten
    for lowering), for the given target."""
    plan = Plan(tf.jit(f).lower(*args).program, tiered=False, parallel=parallel,
                regions=False)
    (segment,) = plan.segments
    return schedule(segment.program, Target(parallel, products_on_numpy))


def only(records, kind):
    return [r for r in records if type(r) is kind]


def test_the_passes_run_in_one_stated_order():
    names = [name for name, _ in PASSES]
    assert names.index("chunk large regions and row blocks") < names.index(
        "split carried reductions") < names.index("place private arrays in the workspace")


@pytest.mark.parametrize("parallel", [False, True])
def test_an_elementwise_chain_is_one_nest_chunked_only_when_it_pays(parallel):
    small = scheduled(lambda x: tnp.tanh(x) * 2.0 + 1.0, np.ones((8, 8)), parallel=parallel)
    (nest,) = small.steps
    assert type(nest) is Nest and len(nest.region.eqns) == 3 and nest.chunks is None
    assert not small.threaded and not small.workspace
    # plain arithmetic pays for threads from PARALLEL_MIN_ELEMENTS, math calls sooner
    rows = PARALLEL_MIN_ELEMENTS_MATH // 64
    for f, chunked in ((lambda x: x * 2.0 + 1.0, False), (lambda x: tnp.exp(x) * 2.0, True)):
        (nest,) = scheduled(f, np.ones((rows, 64)), parallel=parallel).steps
        assert (nest.chunks is not None) == chunked
        if chunked:
            assert nest.chunks.step == CHUNK_ELEMENTS // 64
            assert nest.chunks.threaded == parallel
    big = scheduled(lambda x: x * 2.0 + 1.0, np.ones(PARALLEL_MIN_ELEMENTS), parallel=parallel)
    assert big.threaded == parallel


def test_reductions_split_the_innermost_loop_and_use_row_helpers():
    sched = scheduled(lambda x: (tnp.sum(tnp.exp(x), axis=1), tnp.max(x, axis=1)),
                      np.ones((16, 100)))
    (nest,) = sched.nests()
    assert nest.split and len(nest.carried) == 2
    assert {e.prim.name for e in nest.by_row} == {"reduce_sum", "reduce_max"}
    assert nest.row_buffers                 # exp's row, computed before it is summed
    # integers have no max row helper: the max accumulates with four accumulators
    (nest,) = scheduled(lambda x: tnp.max(x * 2, axis=1), np.ones((4, 50), np.int64)).nests()
    assert nest.split and not nest.by_row and nest.four_accumulators


def test_a_sum_across_the_chunked_axis_adds_chunk_partials_and_is_not_carried():
    x = np.ones((PARALLEL_MIN_ELEMENTS // 8, 8))
    (nest,) = scheduled(lambda x: tnp.sum(tnp.exp(x), axis=0), x, parallel=True).nests()
    assert nest.chunks.threaded and not nest.carried and not nest.split


def test_row_aligned_regions_form_a_block_threaded_only_in_the_parallel_variant():
    def layer_norm(x, scale, bias):
        xc = x - tnp.mean(x, axis=1, keepdims=True)
        return tnp.sum(xc / tnp.sqrt(tnp.mean(xc * xc, axis=1, keepdims=True) + 1e-5)
                       * scale + bias)
    args = (np.ones((128, 768)), np.ones(768), np.ones(768))
    for parallel in (False, True):
        (block,) = only(scheduled(layer_norm, *args, parallel=parallel).steps, RowBlock)
        assert block.group.rows == 128 and len(only(block.members, Nest)) >= 2
        assert (block.chunks is not None) == parallel
        if parallel:
            assert all(n.in_block and n.chunks is block.chunks
                       for n in only(block.members, Nest))


def test_the_workspace_holds_intermediates_no_output_reaches():
    sched = scheduled(lambda x, w: tnp.tanh(x @ w) @ w.T, np.ones((8, 6)), np.ones((6, 6)))
    first, nest, second = sched.steps
    assert first.eqn.outvars[0] in sched.workspace          # x @ w: read only inside
    assert nest.region.eqns[0].outvars[0] in sched.workspace
    assert second.eqn.outvars[0] not in sched.workspace     # the output
    assert sched.uses_workspace


@pytest.mark.parametrize("parallel", [False, True])
def test_products_choose_their_helper_and_blas_in_one_place(parallel):
    def choice(f, *args, on_numpy=True):
        sched = scheduled(f, *args, parallel=parallel, products_on_numpy=on_numpy)
        (call,) = [c for c in sched.calls() if c.product is not None]
        return call.product, sched

    small, sched = choice(lambda a, x: a @ x, np.ones((8, 8)), np.ones(8))
    assert (small.form, small.helper, small.blas) == ("matvec", "matvec", None)
    assert not sched.blas
    gemm, sched = choice(lambda a, b: a @ b, np.ones((30, 40)), np.ones((40, 20)))
    assert (gemm.helper, gemm.blas, sched.blas) == ("gemm_into", NUMPY_BLAS, {NUMPY_BLAS})
    on_scipy, _ = choice(lambda a, b: a @ b, np.ones((30, 40)), np.ones((40, 20)),
                         on_numpy=False)
    assert (on_scipy.helper, on_scipy.blas) == ("dot_into", SCIPY_BLAS)
    transposed, _ = choice(lambda a, b: a.T @ b, np.ones((40, 30)), np.ones((40, 20)))
    assert transposed.transposed == (True, False) and transposed.copied == (False, False)
    # large: split across threads in the parallel variant, by rows or by the contraction
    rows, _ = choice(lambda a, b: a @ b, np.ones((512, 512)), np.ones((512, 512)))
    depth, _ = choice(lambda a, b: a.T @ b, np.ones((4096, 64)), np.ones((4096, 64)))
    stuck, sched = choice(lambda a, b: a.T @ b, np.ones((256, 300)), np.ones((256, 300)))
    if parallel:
        assert (rows.helper, depth.helper) == ("product_by_rows", "product_by_depth")
        assert stuck.serial and sched.serial_products
    else:
        assert rows.helper == depth.helper == "gemm_into" and not stuck.serial


def test_a_scan_body_is_scheduled_inside_its_loop():
    def rotate(m, v, xs):
        def step(carry, x):
            m, v, acc = carry
            v2 = m @ v * tnp.cos(x)
            return (m, v2, acc + v2 * v2), tnp.sum(v2)
        return lax.scan(step, (m, v, v * 0.0), xs)
    sched = scheduled(rotate, np.eye(3), np.ones(3), np.ones(5))
    (scan,) = [c for c in sched.steps if type(c) is Call and c.bodies]
    (body,) = scan.bodies.values()
    assert body.context.in_loop and not body.context.top
    # tiny elementwise work is scalar code; a reduction keeps its loop, its row buffer
    # allocated once before the loop
    elementwise, reducing = body.nests()
    assert elementwise.form == "unrolled" and reducing.form == "loops"
    assert reducing.split and reducing.scratch_at == "hoisted"
    assert scan.carries == ("stays", "buffers", "in place")
    # the tiny carries are read into scalars at the top of each step, and later steps
    # read the scalars of those and of the unrolled region's outputs, not the arrays
    carries = [v for v in body.program.invars if v.aval.shape]
    assert list(body.loaded) == carries
    assert set(carries) | {v for v in elementwise.region.materialize if v.aval.shape} \
        <= body.scalars
    # the body's arrays are allocated once, before the loop
    assert {v for e in body.program.eqns for v in e.outvars if v.aval.shape} == body.hoisted
    wide = scheduled(rotate, np.eye(40), np.ones(40), np.ones(5))
    (scan,) = [c for c in wide.steps if type(c) is Call and c.bodies]
    (body,) = scan.bodies.values()
    wide_nests = [n for n in body.nests() if n.region.space == (40,)]
    assert wide_nests and all(n.form == "loops" and n.chunks is None for n in wide_nests)
    assert not body.loaded and not body.scalars and body.hoisted


def test_a_program_cut_into_segments_has_a_schedule_per_kernel():
    """A complex sort has no compiled lowering: it runs on NumPy between two kernels,
    each with its own schedule."""
    def f(z):
        return tnp.sort(z * 2.0) + 1.0
    z = (RNG.normal(size=6) + 1j * RNG.normal(size=6))
    plan = Plan(tf.make_program(f)(z), tiered=False)
    kinds = [type(s).__name__ for s in plan.segments]
    assert kinds == ["CompiledSegment", "InterpretedStep", "CompiledSegment"]
    assert [len(s.nests()) for s in plan.schedules] == [1, 1]
    text = plan.as_text()
    assert text.index("== program") < text.index("== schedule") < text.index("== source")
    assert "segment 1: NumPy step for sort" in text


def test_docs_schedule_example_prints_what_the_doc_quotes(capsys):
    """docs/schedule.md's example runs as pasted and prints the schedule it quotes
    (but the kernel's key, a hash of the source)."""
    import pathlib
    import re
    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "schedule.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", doc, re.S)
    quoted = re.findall(r"```text\n(== schedule.*?)```", doc, re.S)[0]
    exec(compile(code, "docs/schedule.md", "exec"), {"__name__": "doc"})
    printed = capsys.readouterr().out

    def unkeyed(text):
        return re.sub(r"kernel [0-9a-f]{32}", "kernel <key>", text).strip()
    assert unkeyed(printed) == unkeyed(quoted)
