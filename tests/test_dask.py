"""tf_numba.dask: programs that travel, and map_blocks / vmap / value_and_grad over Dask
arrays, on the threaded scheduler and on a two-process LocalCluster."""
import os
import pickle
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import tf_numba as tf  # noqa: E402
import tf_numba.dask  # noqa: E402,F401
import tf_numba.lax as lax  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402
from tf_numba.core.serialize import DetachedRule  # noqa: E402
from tf_numba.dask.worker import ShippedProgram  # noqa: E402
from tf_numba.errors import ShapeError, UnsupportedError  # noqa: E402
from tf_numba.runtime import CpuEngine, Runtime  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loss(w, x, y):
    return tnp.mean((tnp.tanh(x @ w) - y) ** 2)


@tf.custom_jvp
def soft_clip(x):
    return tnp.tanh(x) * 2.0


@soft_clip.defjvp
def _soft_clip_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return soft_clip(x), 2.0 * (1.0 - tnp.tanh(x) ** 2) * t


def _data(rows=11, cols=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(rows, cols)), rng.normal(size=rows), rng.normal(size=cols)


@pytest.fixture
def threads():
    with dask.config.set(scheduler="threads"):
        yield


# ---------------------------------------------------------------- programs that travel

def _traveling_programs():
    x, y, w = _data()
    vg = tf.make_program(tf.value_and_grad(loss))(w, tf.symbolic(("n", 3)),
                                                   tf.symbolic(("n",)))

    def looped(c):
        return tnp.sum(lax.fori_loop(0, 3, lambda i, c: c * tnp.sin(c) + 1.0, c))
    loop = tf.make_program(tf.grad(looped))(np.ones(4))
    def until(c):       # reverse mode records the carries: a trip-count symbol
        return tnp.sum(lax.while_loop(lambda s: s[1] < 3,
                                      lambda s: (s[0] * tnp.sin(s[0]), s[1] + 1), (c, 0))[0])
    while_grad = tf.make_program(tf.grad(until))(np.ones(3))
    custom = tf.make_program(lambda v: tf.vmap(soft_clip)(v) + v[1:2])(tf.symbolic(("m", 3)))
    solve = tf.make_program(tf.grad(lambda a, b: tnp.sum(tnp.linalg.solve(a, b))))(
        np.eye(3) * 2, np.ones(3))
    return [(vg, [w, x, y]), (loop, [np.linspace(0.1, 0.9, 4)]),
            (while_grad, [np.linspace(0.1, 0.9, 3)]), (custom, [x]),
            (solve, [np.eye(3) * 2 + 0.1, np.arange(3.0)])]


def _interpret(program, args):
    from tf_numba.core.interpreter import eval_program
    from tf_numba.core.symbolic import bind_dims, specialize
    return eval_program(specialize(program, bind_dims(program, args)), args)


def test_program_unpickles_to_the_same_fingerprint_and_values():
    for program, args in _traveling_programs():
        blob = pickle.dumps(program)
        back = pickle.loads(blob)
        assert back.fingerprint() == program.fingerprint()
        rules = re.compile(r"rule=[^,]*")       # custom rules stay behind (detached)
        assert rules.sub("", str(back)) == rules.sub("", str(program))
        # compact: well under what pickling the objects as they are would take
        assert len(blob) < 200 * len(program.eqns) + 1000, (len(blob), len(program.eqns))
        for got, want in zip(_interpret(back, args), _interpret(program, args)):
            np.testing.assert_array_equal(got, want)


def test_unpickled_custom_rule_runs_but_refuses_to_differentiate():
    x, _, _ = _data()
    program = tf.make_program(lambda v: soft_clip(v))(x)
    back = pickle.loads(pickle.dumps(program))
    eqn = back.eqns[0]
    assert isinstance(eqn.params["rule"], DetachedRule)
    assert "soft_clip" in repr(eqn.params["rule"])
    from tf_numba.core.interpreter import eval_program
    np.testing.assert_array_equal(eval_program(back, [x])[0], np.tanh(x) * 2.0)
    with pytest.raises(UnsupportedError, match="soft_clip.*stayed in the process"):
        tf.grad(lambda v: tnp.sum(eval_program(back, [v])[0]))(x)


def _run_child(code, env_extra=None, timeout=120):
    env = dict(os.environ, PYTHONPATH=REPO)
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd="/",
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_program_runs_in_a_fresh_process_that_never_imported_the_users_module(tmp_path):
    """The program (with a custom_jvp call defined here) is traced in this process and
    run through a Runtime in a new one, whose sys.modules never sees this test module."""
    x, y, w = _data()
    program = tf.make_program(
        lambda w, x, y: tf.value_and_grad(lambda w: loss(w, soft_clip(x), y))(w))(
        w, tf.symbolic(("n", 3)), tf.symbolic(("n",)))
    (tmp_path / "program.pkl").write_bytes(pickle.dumps(program))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    np.save(tmp_path / "w.npy", w)
    out = _run_child(f"""
        import pickle, sys
        import numpy as np
        from tf_numba.runtime import CpuEngine, Runtime
        d = {str(tmp_path)!r}
        program = pickle.loads(open(d + "/program.pkl", "rb").read())
        args = [np.load(d + "/" + n + ".npy") for n in ("w", "x", "y")]
        rt, cpu = Runtime(tiered=True), CpuEngine()    # answers before numba compiles
        value, grad = rt.run([cpu], rt.prepare(program, args, [cpu.target()]), args)
        np.save(d + "/grad.npy", grad)
        print(program.fingerprint(), repr(float(value)),
              sorted(m for m in sys.modules if "test_dask" in m))
        """)
    fingerprint, value, modules = out.split(" ", 2)
    assert fingerprint == program.fingerprint()
    assert modules.strip() == "[]"
    want_value, want_grad = tf.value_and_grad(lambda w: loss(w, soft_clip(x), y))(w)
    np.testing.assert_allclose(float(value), want_value, rtol=1e-13)
    np.testing.assert_allclose(np.load(tmp_path / "grad.npy"), want_grad, rtol=1e-12)


def test_worker_with_an_unusable_cache_dir_falls_back_to_memory(tmp_path):
    x, _, w = _data()
    program = tf.make_program(lambda b, w: tnp.sqrt(tnp.abs(b)) * w)(
        tf.symbolic(("n", 3)), w)
    (tmp_path / "shipped.pkl").write_bytes(pickle.dumps(ShippedProgram(program)))
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    _run_child(f"""
        import pickle
        import numpy as np
        import tf_numba as tf
        from tf_numba.dask.worker import run_block_single
        d = {str(tmp_path)!r}
        shipped = pickle.loads(open(d + "/shipped.pkl", "rb").read())
        x, w = np.load(d + "/x.npy"), np.load(d + "/w.npy")
        np.save(d + "/out.npy", run_block_single(shipped, "block (0,)", x, w))
        assert tf.cache_info()["compiles"] >= 1, tf.cache_info()
        """, {"TF_NUMBA_CACHE_DIR": str(blocker / "cache"), "TF_NUMBA_TIERED": "0"})
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), np.sqrt(np.abs(x)) * w)


# ---------------------------------------------------------------- threaded scheduler

def _counting(fn):
    def counted(*args):
        counted.traces += 1
        return fn(*args)
    counted.traces = 0
    return counted


def test_map_blocks_elementwise_is_bitwise_numpy_over_uneven_chunks(threads):
    x, _, w = _data(rows=11)
    f = _counting(lambda b, w: tnp.sqrt(tnp.abs(b)) * w + b)
    out = tf.dask.map_blocks(f, da.from_array(x, chunks=((4, 4, 3), 3)), w)
    assert out.chunks == ((4, 4, 3), (3,))
    assert f.traces == 1                    # one symbolic trace for lengths 4 and 3
    np.testing.assert_array_equal(out.compute(), np.sqrt(np.abs(x)) * w + x)


def test_map_blocks_passes_small_values_inside_tasks_and_large_ones_as_one_key(threads,
                                                                             monkeypatch):
    x, _, w = _data(rows=11)
    xd = da.from_array(x, chunks=(4, 3))
    for limit, keys in ((tf_numba.dask.api.INLINE_BYTES, 0), (w.nbytes - 1, 1)):
        monkeypatch.setattr(tf_numba.dask.api, "INLINE_BYTES", limit)
        out = tf.dask.map_blocks(lambda b, w: b * w, xd, w)
        graph = dict(out.__dask_graph__())
        assert sum(str(k).startswith("('tfn-input-") for k in graph) == keys
        np.testing.assert_array_equal(out.compute(), x * w)


def test_map_blocks_aligns_trailing_axes_unifies_chunks_and_broadcasts(threads):
    rng = np.random.default_rng(1)
    x, v, row = rng.normal(size=(10, 6)), rng.normal(size=6), rng.normal(size=(1, 6))
    xd, vd = da.from_array(x, chunks=(4, 3)), da.from_array(v, chunks=2)
    out = tf.dask.map_blocks(lambda a, b, c: a * b + c, xd, vd,
                             da.from_array(row, chunks=(1, 6)))
    assert out.chunks == ((4, 4, 2), (2, 1, 1, 2))       # Dask's common refinement
    np.testing.assert_array_equal(out.compute(), x * v + row)


def test_map_blocks_infers_output_chunks_of_each_output(threads):
    x, _, _ = _data(rows=10, cols=4)
    xd = da.from_array(x, chunks=((3, 3, 4), (2, 2)))
    wide, summed = tf.dask.map_blocks(
        lambda b: (tnp.concatenate([b, b * 2.0], axis=1), tnp.sum(b, axis=1, keepdims=True)),
        xd)
    assert wide.chunks == ((3, 3, 4), (4, 4))
    assert summed.chunks == ((3, 3, 4), (1, 1))
    blocks = [np.concatenate([x[:, :2], 2 * x[:, :2]], 1),
              np.concatenate([x[:, 2:], 2 * x[:, 2:]], 1)]
    np.testing.assert_array_equal(wide.compute(), np.concatenate(blocks, axis=1))
    np.testing.assert_allclose(summed.compute(), np.stack([x[:, :2].sum(1), x[:, 2:].sum(1)],
                                                          axis=1), rtol=1e-15)


def test_map_blocks_traces_once_per_shape_class_when_lengths_must_be_concrete(threads):
    v = np.arange(12.0)
    f = _counting(lambda b: b.reshape(-1, 2)[:, ::-1].reshape(-1))   # n // 2 is not symbolic
    out = tf.dask.map_blocks(f, da.from_array(v, chunks=((4, 4, 2, 2),)))
    assert f.traces == 1 + 2                # the refused symbolic trace, then lengths 4, 2
    np.testing.assert_array_equal(out.compute(), v.reshape(-1, 2)[:, ::-1].reshape(-1))


def test_block_breaking_the_guards_gives_the_single_machine_shape_error_naming_it():
    f = lambda b: b + b.T       # noqa: E731  (needs rows == 3)
    x = da.from_array(np.ones((10, 3)), chunks=((3, 3, 4), 3))
    program = tf.make_program(f)(tf.symbolic(("rows", 3)))
    with pytest.raises(ShapeError) as single:
        Runtime().prepare(program, [np.ones((4, 3))], [CpuEngine().target()])
    with pytest.raises(ShapeError) as blocked:
        tf.dask.map_blocks(f, x)
    assert "block (2, 0)" in str(blocked.value)
    assert single.value.detail in blocked.value.detail
    assert blocked.value.op == single.value.op and blocked.value.source == single.value.source


def test_block_whose_trace_indexes_out_of_range_names_the_block():
    with pytest.raises(tf.errors.TfIndexError, match=r"block \(1,\) \(index ranges 4:5\)"):
        tf.dask.map_blocks(lambda b: b[3:4] + b[3], da.from_array(np.arange(5.0), chunks=4))


def test_block_failing_its_trace_names_the_block():
    f = lambda b: b.reshape(-1, 2)     # noqa: E731
    with pytest.raises(ShapeError, match=r"block \(2,\) \(index ranges 8:11\)"):
        tf.dask.map_blocks(f, da.from_array(np.arange(11.0), chunks=4))


def test_an_index_out_of_range_in_a_running_block_names_the_block(threads):
    x = np.arange(14.0)
    index = np.array([0, 3])            # in range for blocks of 4 rows, not for 2
    f = lambda b, i: tnp.take(b, i)     # noqa: E731
    with pytest.raises(tf.errors.TfIndexError) as info:
        tf.dask.map_blocks(f, da.from_array(x, chunks=((4, 4, 2, 4),)), index).compute()
    assert "block (2,) (index ranges 8:10)" in str(info.value)
    assert "index 3" in str(info.value) and info.value.source[0] == __file__
    assert info.value.source[1] == f.__code__.co_firstlineno
    g = lambda b, i: tnp.take(b, i)     # noqa: E731  (the same program, another line)
    with pytest.raises(tf.errors.TfIndexError) as again:
        tf.dask.map_blocks(g, da.from_array(x, chunks=((4, 4, 2, 4),)), index).compute()
    assert again.value.source[1] == g.__code__.co_firstlineno


def test_vmap_per_example_gradients_match_tf_vmap(threads):
    x, y, w = _data(rows=13)
    per_row = tf.dask.vmap(tf.grad(loss), in_axes=(None, 0, 0))(
        w, da.from_array(x, chunks=(5, 3)), da.from_array(y, chunks=4))
    assert per_row.chunks == ((5, 5, 3), (3,))      # the first Dask array's row chunks
    want = tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))(w, x, y)
    np.testing.assert_allclose(per_row.compute(), want, rtol=1e-12, atol=1e-15)


def test_value_and_grad_of_a_mean_weights_uneven_chunks_exactly(threads):
    x, y, w = _data(rows=23)
    vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    value, grad = vg(w, da.from_array(x, chunks=((10, 10, 2, 1), 3)), da.from_array(y))
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    np.testing.assert_allclose(value, np.mean((np.tanh(x @ w) - y) ** 2), rtol=1e-13)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_value_and_grad_skips_blocks_with_no_rows(threads, reduction):
    """A filtered array's computed chunks may hold empty blocks: weight 0, and their own
    mean 0/0 must not turn the value into NaN."""
    x, y, w = _data(rows=40)
    keep = x[:, 0] > -0.3
    keep[10:20] = False                                     # the second block: no rows
    kd = da.from_array(keep, chunks=10)
    xd, yd = da.from_array(x, chunks=(10, 3))[kd], da.from_array(y, chunks=10)[kd]
    xd.compute_chunk_sizes()
    yd.compute_chunk_sizes()
    assert 0 in xd.chunks[0]
    sum_loss = lambda w, x, y: tnp.sum((tnp.tanh(x @ w) - y) ** 2)      # noqa: E731
    fn = loss if reduction == "mean" else sum_loss
    with np.errstate(all="raise"):
        value, grad = tf.dask.value_and_grad(fn, data_argnums=(1, 2), reduction=reduction)(
            w, xd, yd)
    r = np.tanh(x[keep] @ w) - y[keep]
    np.testing.assert_allclose(value, np.mean(r ** 2) if reduction == "mean" else
                               np.sum(r ** 2), rtol=1e-13)
    np.testing.assert_allclose(grad, tf.grad(fn)(w, x[keep], y[keep]), rtol=1e-12)


def test_value_and_grad_does_not_trace_blocks_with_no_rows(threads):
    """A loss that cannot trace on no rows (a max, a first row) still runs on the others."""
    x, y, w = _data(rows=30)
    xd = da.from_array(x, chunks=((10, 0, 10, 10), 3))
    yd = da.from_array(y, chunks=((10, 0, 10, 10),))

    def first_row_loss(w, x, y):
        return loss(w, x, y) + 0.0 * tnp.max(y) + 0.0 * x[0, 0]
    value, grad = tf.dask.value_and_grad(first_row_loss, data_argnums=(1, 2))(w, xd, yd)
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    assert isinstance(value, np.float64)            # a NumPy scalar, as tf.value_and_grad
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_value_and_grad_of_no_rows_says_so(threads):
    x, y, w = _data(rows=4)
    with pytest.raises(ShapeError, match="no rows"):
        tf.dask.value_and_grad(loss, data_argnums=(1, 2))(
            w, da.from_array(x[:0], chunks=(2, 3)), da.from_array(y[:0], chunks=2))


def test_value_and_grad_names_data_argnums_for_a_dask_array_left_out(threads):
    x, y, w = _data(rows=8)
    with pytest.raises(UnsupportedError, match="argument 2 .* add it to data_argnums"):
        tf.dask.value_and_grad(loss)(w, da.from_array(x, chunks=(4, 3)),
                                     da.from_array(y, chunks=4))


def test_arguments_given_by_keyword_go_in_their_places(threads):
    x, y, w = _data(rows=12)
    xd, yd = da.from_array(x, chunks=(5, 3)), da.from_array(y, chunks=5)
    value, grad = tf.dask.value_and_grad(loss, data_argnums=(1, 2))(w, xd, y=yd)
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
    per_row = tf.dask.vmap(lambda w, x: x @ w, in_axes=(None, 0))(w, x=xd)
    np.testing.assert_allclose(per_row.compute(), x @ w, rtol=1e-13)
    out = tf.dask.map_blocks(lambda b, w: b * w, xd, w=w)
    np.testing.assert_array_equal(out.compute(), x * w)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        tf.dask.value_and_grad(loss, data_argnums=(1, 2))(w, xd, yd, x=xd)

    def scaled(w, x, scale=2.0, y=None):
        return scale * loss(w, x, y)
    value, _ = tf.dask.value_and_grad(scaled, data_argnums=(1, 3))(w, xd, y=yd)
    np.testing.assert_allclose(value, 2.0 * want_value, rtol=1e-13)
    with pytest.raises(UnsupportedError, match=r"\['k'\] are keyword-only"):
        tf.dask.vmap(lambda w, x, *, k=1.0: x @ w * k, in_axes=(None, 0))(w, xd, k=3.0)


def test_map_blocks_of_arrays_that_do_not_broadcast_says_how_blocks_line_up(threads):
    x, y, _ = _data(rows=12)
    with pytest.raises(ShapeError, match=r"\(12, 3\), \(12,\) do not broadcast.*y\[:, None\]"):
        tf.dask.map_blocks(lambda b, y: b * y[:, None], da.from_array(x, chunks=(5, 3)),
                           da.from_array(y, chunks=5))


def test_value_and_grad_of_a_sum_over_a_params_dict(threads):
    x, y, w = _data(rows=17)

    def sum_loss(p, x, y):
        return tnp.sum((x @ p["w"] + p["b"] - y) ** 2)
    params = {"w": w, "b": np.array(0.5)}
    with dask.config.set(split_every=2):            # a deeper tree: 5 blocks, 3 levels
        value, grads = tf.dask.value_and_grad(sum_loss, data_argnums=(1, 2),
                                              reduction="sum")(
            params, da.from_array(x, chunks=4), da.from_array(y, chunks=4))
    r = x @ w + 0.5 - y
    np.testing.assert_allclose(value, np.sum(r ** 2), rtol=1e-13)
    np.testing.assert_allclose(grads["w"], 2 * x.T @ r, rtol=1e-12)
    np.testing.assert_allclose(grads["b"], 2 * np.sum(r), rtol=1e-12)


def test_value_and_grad_sums_small_parts_at_the_client_in_the_tree_order(threads,
                                                                       monkeypatch):
    """Parts up to CLIENT_SUM_BYTES skip the combine tasks; the client sums them in the
    order the tasks would have: the same bits, and still one machine's answer."""
    from dask.callbacks import Callback
    x, y, w = _data(rows=61)
    xd, yd = da.from_array(x, chunks=(7, 3)), da.from_array(y, chunks=7)
    vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    ran = {}
    for limit in (tf_numba.dask.api.CLIENT_SUM_BYTES, 0):    # 0: every level a task
        monkeypatch.setattr(tf_numba.dask.api, "CLIENT_SUM_BYTES", limit)
        keys = []
        with Callback(pretask=lambda key, dsk, state: keys.append(str(key))):
            ran[limit] = vg(w, xd, yd)
        ran[limit] += (sum("tfn-combine" in k for k in keys),)
    (value, grad, combines), (tree_value, tree_grad, tree_combines) = ran.values()
    assert (combines, tree_combines) == (0, 3 + 1)          # 9 blocks: 3 + 1 combines
    assert value == tree_value and np.array_equal(grad, tree_grad)
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_value_and_grad_in_float32_stays_float32(threads):
    x, y, w = (a.astype(np.float32) for a in _data(rows=9))
    value, grad = tf.dask.value_and_grad(loss, data_argnums=(1, 2))(
        w, da.from_array(x, chunks=(4, 3)), da.from_array(y, chunks=4))
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    assert np.asarray(value).dtype == np.float32 and grad.dtype == np.float32
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-5, atol=1e-7)


def test_value_and_grad_refuses_data_among_argnums():
    x, y, w = _data()
    with pytest.raises(tf.TfNumbaError, match="both argnums and data_argnums"):
        tf.dask.value_and_grad(loss, argnums=(0, 1), data_argnums=(1, 2))(
            w, da.from_array(x), da.from_array(y))


# ---------------------------------------------------------------- a two-process cluster

@pytest.fixture(scope="module")
def cluster_client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture
def client(cluster_client):
    """The two-process cluster, as Dask's scheduler for this test only."""
    with dask.config.set(scheduler=cluster_client.get):
        yield cluster_client


def test_cluster_map_blocks_is_bitwise_single_process(client):
    x, _, w = _data(rows=101)
    out = tf.dask.map_blocks(lambda b, w: tnp.maximum(b * w, 0.25) / (1.0 + b * b),
                             da.from_array(x, chunks=(17, 3)), w)
    want = tf.jit(lambda b, w: tnp.maximum(b * w, 0.25) / (1.0 + b * b))(x, w)
    np.testing.assert_array_equal(out.compute(), want)
    np.testing.assert_array_equal(want, np.maximum(x * w, 0.25) / (1.0 + x * x))


def test_cluster_vmap_and_value_and_grad_equal_single_process(client, monkeypatch):
    x, y, w = _data(rows=61)
    xd, yd = da.from_array(x, chunks=(16, 3)), da.from_array(y, chunks=16)
    per_row = tf.dask.vmap(tf.grad(loss), in_axes=(None, 0, 0))(w, xd, yd).compute()
    np.testing.assert_allclose(per_row, tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))(w, x, y),
                               rtol=1e-12, atol=1e-15)
    scatters = []
    scatter = client.scatter
    monkeypatch.setattr(client, "scatter",
                        lambda data, **kw: scatters.append(kw) or scatter(data, **kw))
    vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    for limit, broadcasts in ((tf_numba.dask.api.INLINE_BYTES, []), (w.nbytes - 1, [True])):
        # small parameters ride inside the tasks; larger ones: one scatter to every worker
        monkeypatch.setattr(tf_numba.dask.api, "INLINE_BYTES", limit)
        scatters.clear()
        value, grad = vg(w, xd, yd)
        assert [kw["broadcast"] for kw in scatters] == broadcasts
        np.testing.assert_allclose(value, want_value, rtol=1e-13)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def test_cluster_value_and_grad_computes_every_call_afresh(client):
    """Two equal calls back to back: each runs every block (an equal call's keys may
    still be held or being released when the next graph arrives)."""
    x, y, w = _data(rows=40)
    xd, yd = da.from_array(x, chunks=(10, 3)), da.from_array(y, chunks=10)
    vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    want_value, _ = tf.value_and_grad(loss)(w, x, y)
    with distributed.get_task_stream(client=client) as stream:
        for _ in range(2):
            np.testing.assert_allclose(vg(w, xd, yd)[0], want_value, rtol=1e-13)
    blocks = [r for r in stream.data if str(r["key"]).startswith("('tfn-block")]
    assert len(blocks) == 2 * xd.numblocks[0]       # not held by workers: a task a block


class _StubClient:
    """What _runs_by_holder asks a distributed client: futures, who holds them, threads."""

    def __init__(self, held, threads):
        self.held, self.threads = held, threads

    def futures_of(self, arrays):
        return list(self.held)

    def who_has(self, futures):
        return self.held

    def nthreads(self):
        return self.threads


def test_runs_by_holder_deals_each_workers_blocks_among_its_threads():
    from tf_numba.dask.api import _runs_by_holder
    from tf_numba.dask.blocks import Grid
    xd = da.zeros((12, 2), chunks=(2, 2))            # 6 blocks
    yd = da.zeros(12, chunks=2)
    grid = Grid([xd, yd], rows_only=True)
    cells = grid.cells()
    x_key, y_key = (lambda c: grid.block_key(0, c)), (lambda c: grid.block_key(1, c))
    held = {}
    for c, (xs, ys) in zip(cells, [("a", "a"), ("a", "a"), ("a", "a"), ("b", "b"),
                                   ("a", "b"), ("ab", "ab")]):
        held[x_key(c)], held[y_key(c)] = list(xs), list(ys)
    del held[y_key(cells[3])]                         # not in memory yet
    runs = _runs_by_holder(_StubClient(held, {"a": 2, "b": 1}), grid, cells)
    by_cell = {c: tuple(run) for run in runs for c in run}
    assert sorted(map(len, runs)) == [1, 1, 1, 1, 2]
    assert by_cell[cells[0]] == (cells[0],) and by_cell[cells[1]] == by_cell[cells[2]]
    assert by_cell[cells[3]] == (cells[3],) and by_cell[cells[4]] == (cells[4],)
    assert by_cell[cells[5]] == (cells[5],)           # the replica goes to idle b


def test_cluster_value_and_grad_runs_each_workers_blocks_as_one_task(client, monkeypatch):
    """Blocks already in a worker's memory run as one task per thread of that worker,
    summed at the client in block order: the bits of one task per block."""
    x, y, w = _data(rows=90)
    holder = sorted(client.nthreads())[0]                   # one thread
    xd, yd = client.persist([da.from_array(x, chunks=(10, 3)), da.from_array(y, chunks=10)],
                            workers=[holder])
    client.gather(distributed.futures_of([xd, yd]))         # in memory before the calls
    vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    runs = {}
    for grouped in (True, False):
        if not grouped:
            monkeypatch.setattr(tf_numba.dask.api, "_runs_by_holder",
                                lambda client, grid, cells: [[c] for c in cells])
        with distributed.get_task_stream(client=client) as stream:
            runs[grouped] = vg(w, xd, yd)
        tasks = [r for r in stream.data if str(r["key"]).startswith("('tfn-blocks-")]
        assert len(tasks) == (1 if grouped else xd.numblocks[0])
        assert {r["worker"] for r in tasks} == {holder}
    (value, grad), (one_value, one_grad) = runs[True], runs[False]
    assert value == one_value and np.array_equal(grad, one_grad)
    want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-13)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def _slow_copy(block):
    time.sleep(0.25)
    return block.copy()


def test_cluster_killed_worker_is_retried_and_the_result_is_unchanged(client):
    x, _, w = _data(rows=80)
    slow = da.from_array(x, chunks=(10, 3)).map_blocks(_slow_copy)    # 8 blocks, 1 s a worker
    future = client.compute(tf.dask.map_blocks(lambda b, w: b * w - 1.0, slow, w))
    deadline = time.time() + 30
    while not any(client.processing().values()) and time.time() < deadline:
        time.sleep(0.02)
    victim = next(addr for addr, tasks in client.processing().items() if tasks)
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    np.testing.assert_array_equal(future.result(timeout=60), x * w - 1.0)
    assert pid not in client.run(os.getpid).values()        # it did die mid-computation
