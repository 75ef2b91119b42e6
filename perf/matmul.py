"""Matrix product: a @ b for 1024x1024 float32 and float64.

Tools, timed interleaved in one process: tf_numba ``jit(lambda a, b: a @ b)``, NumPy ``a @ b``
(the reference), numba ``a @ b`` (SciPy's OpenBLAS, which tf_numba's kernels call too: NumPy
ships its own OpenBLAS build), and JAX ``jit`` in both dispatch configurations (XLA's own
GEMM). The BLAS builds and the OPENBLAS_* variables in force are printed with the results
(see PERF_FACTS.md: OPENBLAS_CORETYPE=Haswell roughly halves GEMM speed on this machine).
Target: tf_numba within 1.05x of NumPy, each as wide as the other (jit's default engine
runs its BLAS on one thread; where NumPy's takes every core, the faster of that and the
all-cores row is judged).

    python perf/matmul.py [--quick] [--rounds N] [--json PATH]
"""
import sys

import numba
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba.numpy  # noqa: E402,F401  (gives traced arrays their operators)

N = 1024
TOLERANCE = {np.float32: 1e-4, np.float64: 1e-11}


def matmul(a, b):
    return a @ b


@numba.njit(nogil=True)
def numba_matmul(a, b):
    return a @ b


def build_case(bench, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N)).astype(dtype)
    b = rng.standard_normal((N, N)).astype(dtype)
    name = np.dtype(dtype).name
    case = bench.case(f"{N}x{N} {name}", n=N, dtype=name)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol, atol = TOLERANCE[dtype], TOLERANCE[dtype] * np.sqrt(N)

    def check(tool, got):
        assert got.dtype == dtype, f"{tool} returned {got.dtype} for {name}"
        _bench.assert_close(tool, got, want, tol, atol)
    _bench.add_tf(case, matmul, (a, b), check)
    if case.wants("numpy"):
        case.add("numpy", lambda: a @ b)
    if case.wants("numba"):
        _bench.assert_close("numba", numba_matmul(a, b), want, tol, atol)
        case.add("numba", lambda: numba_matmul(a, b))
    if case.wants(_bench.JAX):
        jax = bench.jax
        jj = jax.jit(matmul)
        aj, bj = jax.numpy.asarray(a), jax.numpy.asarray(b)
        _bench.assert_close("jax", jj(aj, bj), want, tol, atol)
        case.add(_bench.JAX, lambda: jj(aj, bj).block_until_ready())
    return case


def targets(bench):
    def check(case):
        judged = _bench.tf_judged(case)
        r = bench.ratio_to_ref(case, judged)
        gflops = {tool: 2 * N ** 3 / res["median"] / 1e9 for tool, res in case.results.items()}
        return [(f"{judged} / numpy = {_bench.fmt_ratio(r)} (<= 1.05x; NumPy's BLAS on "
                 f"{_bench.numpy_blas_threads()} threads)",
                 None if r is None else r <= 1.05),
                ("GFLOP/s: " + ", ".join(f"{t} {g:.0f}" for t, g in gflops.items()),
                 _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("matmul", __doc__, reference="numpy", default_rounds=15,
                         quick_rounds=7, batch_seconds=0.05)
    info = _bench.machine_info()
    if not bench.sync_child:
        print(f"   numpy BLAS: {info['numpy_blas']}\n   scipy BLAS (numba, tf_numba): "
              f"{info['scipy_blas']}\n   OPENBLAS_CORETYPE={info['OPENBLAS_CORETYPE']} "
              f"OPENBLAS_L2_SIZE={info['OPENBLAS_L2_SIZE']} "
              f"OPENBLAS_NUM_THREADS={info['OPENBLAS_NUM_THREADS']}")
    cases = [build_case(bench, dt) for dt in (np.float32, np.float64)]
    bench.run(cases, f"{N}x{N} @ {N}x{N}", targets(bench))


if __name__ == "__main__":
    main()
