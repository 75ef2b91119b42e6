"""The kernel cache (``lowering/kernel_cache.py``): numba's disk cache serves a fresh
process, survives damage and concurrent writers; compiles are counted; cache_info."""
import subprocess
import sys
import textwrap

import numpy as np
from jit_checks import child_env, run_child

import tf_numba as tf
from tf_numba.lowering.kernel_cache import KERNELS

RNG = np.random.default_rng(0)


CHILD = """
    import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
    f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * {k}), tiered=False)
    assert abs(f(np.arange(4.0)) - {k} * np.sin(np.arange(4.0)).sum()) < 1e-12
    print(tf.cache_info()["compiles"], tf.cache_info()["disk_hits"])
"""


def test_disk_cache_serves_a_fresh_process_and_rebuilds_corrupt_entries(tmp_path):
    env = child_env(tmp_path)
    first = run_child(CHILD.format(k=3), env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["1", "0"]
    warm = run_child(CHILD.format(k=3), env)
    assert warm.returncode == 0 and warm.stdout.split() == ["0", "1"], warm.stderr
    kernels = list(tmp_path.rglob("k_*.py"))
    numba_files = list(tmp_path.rglob("k_*.nb*"))
    assert kernels and numba_files
    for path in kernels:                       # truncated source: rewritten
        path.write_text(path.read_text()[:40])
    for path in numba_files:                   # garbage machine-code cache: dropped
        path.write_bytes(b"\x00garbage")
    damaged = run_child(CHILD.format(k=3), env)
    assert damaged.returncode == 0, damaged.stderr


def test_compiles_are_counted_with_the_disk_cache_off(tmp_path):
    env = dict(child_env(tmp_path), TF_NUMBA_CACHE_DIR="off")
    run = run_child(CHILD.format(k=3), env)
    assert run.returncode == 0 and run.stdout.split() == ["1", "0"], run.stderr
    assert not list(tmp_path.iterdir())


def test_two_processes_writing_the_same_entry_both_succeed(tmp_path):
    env = child_env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD.format(k=5))],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def test_cache_info_reports_entries_and_bytes():
    info = tf.cache_info()
    for key in ("entries", "hits", "misses", "compiles", "disk_hits", "bytes"):
        assert key in info
    assert info["entries"] == len(KERNELS._entries)


def test_a_helper_first_compiled_inside_a_kernel_that_wants_slp_still_vectorizes(tmp_path):
    """A kernel with row sums compiles with LLVM's SLP vectorizer on; vmath's exp, compiled
    for the first time as its callee, must not be: SLP pairs exp's scalar operations into
    <2 x ...> vectors, a loop inlining that exp stays scalar, and numba's disk cache keeps
    it for every later kernel. A fresh numba cache makes the kernel exp's first compile."""
    code = """
        import re, numba, numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering import vmath
        f = tf.jit(lambda x: tnp.sum(tnp.exp(x), axis=1), tiered=False)
        f(np.ones((4, 64)))
        @numba.njit(error_model="numpy")
        def loop(x, out):
            for i in range(x.size):
                out[i] = vmath.exp(x[i])
        x = np.linspace(0.5, 2.0, 64)
        loop(x, np.empty_like(x))
        ir = loop.inspect_llvm(loop.signatures[0])
        print(bool(re.search(r"(fmul|fma)[^\\n]*<(4|8|16) x double>", ir)))
    """
    env = child_env(tmp_path / "kernels")
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    done = run_child(code, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "True", done.stdout
