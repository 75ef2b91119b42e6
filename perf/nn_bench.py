"""tf_numba.nn: softmax cross-entropy (128 x 1000 classes, integer labels) and layer_norm
(128 x 768), forward and gradient, float32 and float64.

Tools, timed interleaved in one process: tf_numba ``jit(f)`` / ``jit(grad(f))`` over
``tf_numba.nn``, NumPy hand-written (the backward pass written out) and JAX ``jit`` over
``jax.nn`` in both dispatch configurations. Per call, inputs already in place (JAX: device
arrays, result blocked on).

    softmax_ce:  mean(logsumexp(z) - z[label]) over the batch; gradient w.r.t. z
    layer_norm:  sum(layer_norm(x, scale, bias) * dy); gradient w.r.t. (x, scale, bias)

Target: tf_numba at least as fast as the faster JAX configuration, and faster than NumPy.
XLA runs these fusions on every core, so the JAX target is judged against the faster of
tf_numba's default ``jit`` (one core, as NumPy) and ``jit(...,
engine=CpuEngine(threads=os.cpu_count()))``; the one-core ratio is printed beside it.

    python perf/nn_bench.py [--quick] [--rounds N] [--json PATH] [--dtype float32]
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.nn as nn  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

BATCH, CLASSES, FEATURES = 128, 1000, 768
EPS = 1e-5
TOLERANCE = {np.float32: 2e-5, np.float64: 1e-12}


# ---------------------------------------------------------------- softmax cross-entropy

def tf_ce(z, labels):
    return tnp.mean(nn.softmax_cross_entropy(z, labels))


def numpy_ce(z, labels):
    m = z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z - m).sum(axis=1)) + m[:, 0]
    return np.mean(lse - z[np.arange(z.shape[0]), labels])


def numpy_ce_grad(z, labels):
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    e /= e.sum(axis=1, keepdims=True)
    e[np.arange(z.shape[0]), labels] -= 1
    e /= z.shape[0]
    return e


# ---------------------------------------------------------------- layer norm

def tf_ln(x, scale, bias, dy):
    return tnp.sum(nn.layer_norm(x, scale, bias, epsilon=EPS) * dy)


def numpy_ln(x, scale, bias, dy):
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    r = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + EPS)
    return np.sum((xc * r * scale + bias) * dy)


def numpy_ln_grad(x, scale, bias, dy):
    mu = x.mean(axis=1, keepdims=True)
    xc = x - mu
    r = 1 / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + EPS)
    xhat = xc * r
    g = dy * scale
    dx = r * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


# ---------------------------------------------------------------- cases

def _jax_fns(jax):
    jnp = jax.numpy

    def ce(z, labels):
        logp = jax.nn.log_softmax(z)
        return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

    def ln(x, scale, bias, dy):
        return jnp.sum((jax.nn.standardize(x, epsilon=EPS) * scale + bias) * dy)
    return dict(ce=jax.jit(ce), ce_grad=jax.jit(jax.grad(ce)), ln=jax.jit(ln),
                ln_grad=jax.jit(jax.grad(ln, argnums=(0, 1, 2))))


def _add_tools(bench, case, tf_fn, np_fn, jax_fn, args, want, tol):
    """``tf_fn``: the function tf_numba jits, once on one thread and once on every core."""
    _bench.add_tf(case, tf_fn, args, lambda tool, got: _check(tool, got, want, tol))
    if case.wants("numpy"):
        _check("numpy", np_fn(*args), want, tol)
        case.add("numpy", lambda: np_fn(*args))
    if case.wants(_bench.JAX):
        jargs = [bench.jax.numpy.asarray(a) for a in args]
        _check("jax", jax_fn(*jargs), want, tol)
        run_jax = lambda: bench.jax.block_until_ready(jax_fn(*jargs))  # noqa: E731
        case.add(_bench.JAX, run_jax)
        case.note(f"jax keeps {_bench.cores_used(run_jax):.2f} cores busy per call "
                  "(process CPU time / wall time)")


def _check(name, got, want, tol):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        _bench.assert_close(name, g, w, tol, tol)


def build_cases(bench, dtype):
    rng = np.random.default_rng(0)
    name = np.dtype(dtype).name
    jax_fns = _jax_fns(bench.jax) if bench.jax is not None else {}
    tol = TOLERANCE[dtype]

    z = (rng.standard_normal((BATCH, CLASSES)) * 3).astype(dtype)
    labels = rng.integers(0, CLASSES, BATCH)
    z64 = z.astype(np.float64)
    ce_fwd = bench.case(f"softmax_ce forward {name}", dtype=name, shape=(BATCH, CLASSES))
    _add_tools(bench, ce_fwd, tf_ce, numpy_ce, jax_fns.get("ce"), (z, labels),
               numpy_ce(z64, labels), tol)
    ce_grad = bench.case(f"softmax_ce gradient {name}", dtype=name, shape=(BATCH, CLASSES))
    _add_tools(bench, ce_grad, tf.grad(tf_ce), numpy_ce_grad, jax_fns.get("ce_grad"),
               (z, labels), numpy_ce_grad(z64, labels), tol)

    x = (rng.standard_normal((BATCH, FEATURES)) * 2 + 0.5).astype(dtype)
    scale = rng.uniform(0.5, 1.5, FEATURES).astype(dtype)
    bias = rng.standard_normal(FEATURES).astype(dtype)
    dy = rng.standard_normal((BATCH, FEATURES)).astype(dtype)
    args = (x, scale, bias, dy)
    args64 = tuple(a.astype(np.float64) for a in args)
    ln_fwd = bench.case(f"layer_norm forward {name}", dtype=name, shape=(BATCH, FEATURES))
    _add_tools(bench, ln_fwd, tf_ln, numpy_ln, jax_fns.get("ln"), args,
               numpy_ln(*args64), tol * 100)    # a sum of 1e5 terms
    ln_grad = bench.case(f"layer_norm gradient {name}", dtype=name, shape=(BATCH, FEATURES))
    _add_tools(bench, ln_grad, tf.grad(tf_ln, argnums=(0, 1, 2)), numpy_ln_grad,
               jax_fns.get("ln_grad"), args, numpy_ln_grad(*args64), tol * 10)
    return [ce_fwd, ce_grad, ln_fwd, ln_grad]


def targets(bench):
    """JAX runs these on every core (its note says how many it keeps busy), so the JAX
    target is judged against tf_numba at its best too (``tf_judged``)."""
    def check(case):
        jax_one = bench.jax_best(case)
        judged = _bench.tf_judged(case)
        jax_vs = bench.jax_best_vs(case, judged)
        vs_numpy = bench.ratio_to_ref(case, _bench.TF)
        return [(f"best JAX / tf_numba (one core) = {_bench.fmt_ratio(jax_one)}", _bench.INFO),
                (f"best JAX / {judged} = {_bench.fmt_ratio(jax_vs)} "
                 "(>= 1.00x)", None if jax_vs is None else jax_vs >= 1.0),
                (f"tf_numba / numpy = {_bench.fmt_ratio(vs_numpy)} (< 1.00x)",
                 None if vs_numpy is None else vs_numpy < 1.0)]
    return check


def main():
    bench = _bench.Bench("nn_bench", __doc__, reference="numpy", extra_args=[
        (("--dtype",), dict(choices=["float32", "float64"], default=None,
                            help="only this dtype (default: both; --quick: float32)"))])
    names = [bench.args.dtype] if bench.args.dtype else (
        ["float32"] if bench.quick else ["float32", "float64"])
    cases = [c for n in names for c in build_cases(bench, np.dtype(n).type)]
    bench.run(cases, "softmax cross-entropy 128x1000 and layer_norm 128x768, "
              "forward and gradient", targets(bench))


if __name__ == "__main__":
    main()
