"""Extension families: einsum, svd/qr/eigh and FFT, forward and gradient, float64.

Forward: tf_numba ``jit(f)`` beside NumPy/SciPy (``np.einsum`` on its optimal path,
``np.linalg.*``, ``np.fft.*``) and JAX ``jit(f)``. Gradient: tf_numba ``jit(grad(loss))``
beside JAX ``jit(grad(loss))`` (default async and sync dispatch). Every tool's result is
checked against NumPy (or against tf_numba's eager gradient) before it is timed.

Cases: einsum batched matmul ``bij,bjk->bik``, bilinear ``bij,jk,bk->bi`` and a 6-tensor
network; svd/qr/eigh VJP (a loss reading every output) at 128x128 and 512x512; fft and rfft
of 2^16 points. Targets: forward within 1.1x of NumPy/SciPy; gradients at least as fast as
the faster JAX configuration. tf_numba is timed on jit's default engine (one thread, its
BLAS and LAPACK too) and on every core; where NumPy's BLAS and XLA take every core, the
faster of the two is judged (as the faster JAX configuration is).

    python perf/ext_bench.py [--quick] [--rounds N] [--only einsum|linalg|fft] [--json PATH]
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

REF = "numpy"


def compiled(bench, case, fn, *args):
    """``tf.jit(fn)``, timed in ``case`` on jit's default engine (one thread, its BLAS too)
    and on every core, as NumPy's BLAS and XLA run; returns the first."""
    return _bench.add_tf(case, fn, args)


def jax_args(bench, args):
    return [bench.jax.numpy.asarray(a) for a in args]


def add_jax(bench, case, fn, args, want, rtol, view=lambda out: out):
    """Time ``jax.jit(fn)``; ``view`` maps its result to what is compared with ``want``."""
    if not case.wants(_bench.JAX):
        return
    jfn = bench.jax.jit(fn)
    jargs = jax_args(bench, args)
    _bench.assert_close("jax", view(jfn(*jargs)), want, rtol)
    case.add(_bench.JAX, lambda: bench.jax.block_until_ready(jfn(*jargs)))


# ---------------------------------------------------------------- einsum

EINSUMS = {
    "batched_matmul": ("bij,bjk->bik",
                       lambda q: [(16 if q else 64, 64, 64), (16 if q else 64, 64, 64)]),
    "bilinear": ("bij,jk,bk->bi",
                 lambda q: [(64 if q else 256, 64, 96), (96, 80), (64 if q else 256, 80)]),
    "network6": ("abc,bde,cef,dgh,egi,fhi->a",
                 lambda q: [(8, 12, 12), (12, 12, 12), (12, 12, 12), (12, 12, 12),
                            (12, 12, 12), (12, 12, 12)] if q else
                 [(16, 24, 24), (24, 24, 24), (24, 24, 24), (24, 24, 24), (24, 24, 24),
                  (24, 24, 24)]),
}


def einsum_cases(bench):
    cases = []
    rng = np.random.default_rng(0)
    for name, (subscripts, shapes) in EINSUMS.items():
        args = [rng.standard_normal(s) / 4 for s in shapes(bench.quick)]
        cases.extend(einsum_case(bench, name, subscripts, args))
    return cases


def einsum_case(bench, name, subscripts, args):
    """The forward and gradient cases of one expression (a function of its own, so that the
    timed lambdas close over this expression's operands, not the last loop iteration's)."""
    want = np.einsum(subscripts, *args, optimize=("greedy", 1e12))
    case = bench.case(f"einsum {name} forward", subscripts=subscripts,
                      shapes=[a.shape for a in args])
    f = compiled(bench, case, lambda *xs: tnp.einsum(subscripts, *xs), *args)
    _bench.assert_close("tf_numba", f(*args), want, 1e-10)
    # NumPy on its own optimal path, found once. NumPy caps intermediates at the largest
    # input unless told otherwise; under that cap network6 gets no pairwise path at all
    # and runs as one nested loop of 1e13 flops (hours), so the cap is lifted.
    np_path = np.einsum_path(subscripts, *args, optimize=("optimal", 1e12))[0]
    case.add(REF, lambda: np.einsum(subscripts, *args, optimize=np_path))
    if case.wants("numpy optimize=False") and name != "network6":
        case.add("numpy optimize=False", lambda: np.einsum(subscripts, *args))
    if case.wants(_bench.JAX):
        jnp = bench.jax.numpy
        add_jax(bench, case, lambda *xs: jnp.einsum(subscripts, *xs), args, want, 1e-10)

    grad_case = bench.case(f"einsum {name} gradient", subscripts=subscripts)
    argnums = tuple(range(len(args)))

    def loss(*xs):
        out = tnp.einsum(subscripts, *xs)
        return tnp.sum(out * out)
    try:
        g = compiled(bench, grad_case, tf.grad(loss, argnums=argnums), *args)
    except ValueError as err:   # a lowering bug outside ext/: say so, measure the rest
        print(f"   {grad_case.label}: tf_numba jit failed ({err}); case skipped")
        return [case]
    want_g = tf.grad(loss, argnums=argnums)(*args)
    _bench.assert_close("tf_numba", g(*args)[0], want_g[0], 1e-9)
    if grad_case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy

        def jloss(*xs):
            out = jnp.einsum(subscripts, *xs)
            return jnp.sum(out * out)
        add_jax(bench, grad_case, jax.grad(jloss, argnums=argnums), args, want_g[0], 1e-9,
                view=lambda out: out[0])
    return [case, grad_case]


# ---------------------------------------------------------------- linalg

def _weights(rng, shapes):
    return [rng.standard_normal(s) for s in shapes]


def linalg_cases(bench):
    cases = []
    sizes = (64, 128) if bench.quick else (128, 512)
    for n in sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n))
        sym = a + a.T
        wu, ws, wv = _weights(rng, [(n, n), (n,), (n, n)])
        specs = {
            "svd": (a, lambda x: tnp.linalg.svd(x, full_matrices=False),
                    lambda x: np.linalg.svd(x, full_matrices=False),
                    lambda jnp: (lambda x: jnp.linalg.svd(x, full_matrices=False)),
                    lambda m, u, s, vh: m.sum(wu * m.abs(u)) + m.sum(ws * s)
                    + m.sum(wv * m.abs(vh))),
            "qr": (a, lambda x: tnp.linalg.qr(x), lambda x: np.linalg.qr(x),
                   lambda jnp: jnp.linalg.qr,
                   lambda m, q, r: m.sum(wu * q) + m.sum(wv * r)),
            "eigh": (sym, lambda x: tnp.linalg.eigh(x), lambda x: np.linalg.eigh(x),
                     lambda jnp: jnp.linalg.eigh,
                     lambda m, w, v: m.sum(ws * w) + m.sum(wu * m.abs(v))),
        }
        for name, (x, tf_fn, np_fn, jax_fn, loss_of) in specs.items():
            rounds = 15 if n >= 512 else None     # ~50-300 ms a call: 15 still cost < 1 min
            fwd = bench.case(f"{name} {n}x{n} forward", n=n)
            fwd.rounds = rounds
            f = compiled(bench, fwd, tf_fn, x)
            want = np_fn(x)
            _bench.assert_close("tf_numba", np.abs(f(x)[0]), np.abs(want[0]), 1e-8)
            fwd.add(REF, lambda np_fn=np_fn, x=x: np_fn(x))
            if fwd.wants("scipy"):      # what tf_numba's host step calls
                import scipy.linalg
                sp_fn = {"svd": lambda x: scipy.linalg.svd(x, full_matrices=False),
                         "qr": lambda x: scipy.linalg.qr(x, mode="economic"),
                         "eigh": lambda x: scipy.linalg.eigh(x, driver="evd")}[name]
                fwd.add("scipy", lambda sp_fn=sp_fn, x=x: sp_fn(x))
            if fwd.wants(_bench.JAX):
                add_jax(bench, fwd, jax_fn(bench.jax.numpy), [x], np.abs(want[0]), 1e-6,
                        view=lambda out: np.abs(out[0]))
            cases.append(fwd)

            grad_case = bench.case(f"{name} {n}x{n} VJP (grad of a loss on every output)", n=n)
            grad_case.rounds = rounds

            def loss(x, tf_fn=tf_fn, loss_of=loss_of):
                return loss_of(tnp, *tf_fn(x))
            g = compiled(bench, grad_case, tf.grad(loss), x)
            want_g = tf.grad(loss)(x)
            _bench.assert_close("tf_numba", g(x), want_g, 1e-7, 1e-9)
            if grad_case.wants(_bench.JAX):
                jax, jnp = bench.jax, bench.jax.numpy

                def jloss(x, jax_fn=jax_fn, loss_of=loss_of):
                    return loss_of(jnp, *jax_fn(jnp)(x))
                # eigh reads one triangle, JAX symmetrizes: compare G + G^T with 2 G_jax
                view = lambda out: 2 * np.asarray(out)  # noqa: E731
                want_view = 2 * want_g if name != "eigh" else want_g + want_g.T
                add_jax(bench, grad_case, jax.grad(jloss), [x], want_view, 1e-6, view=view)
            cases.append(grad_case)
    return cases


# ---------------------------------------------------------------- fft

def fft_cases(bench):
    n = 1 << (12 if bench.quick else 16)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n)
    z = x + 1j * rng.standard_normal(n)
    w = rng.standard_normal(n // 2 + 1)
    cases = []
    for name, arg, tf_fn, np_fn in (("fft", z, tnp.fft.fft, np.fft.fft),
                                    ("rfft", x, tnp.fft.rfft, np.fft.rfft)):
        case = bench.case(f"{name} 2^{n.bit_length() - 1} forward", n=n)
        f = compiled(bench, case, tf_fn, arg)
        want = np_fn(arg)
        _bench.assert_close("tf_numba", np.abs(f(arg)), np.abs(want), 1e-10)
        case.add(REF, lambda np_fn=np_fn, arg=arg: np_fn(arg))
        add_jax(bench, case, getattr(bench.jax.numpy.fft, name) if bench.jax else None, [arg],
                np.abs(want), 1e-8, view=np.abs)
        cases.append(case)

    def loss(x):
        return tnp.sum(w * tnp.abs(tnp.fft.rfft(tnp.sin(x))))
    case = bench.case(f"rfft 2^{n.bit_length() - 1} gradient of sum(w * |rfft(sin x)|)", n=n)
    g = compiled(bench, case, tf.grad(loss), x)
    want_g = tf.grad(loss)(x)
    _bench.assert_close("tf_numba", g(x), want_g, 1e-9)
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy
        add_jax(bench, case, jax.grad(lambda x: jnp.sum(w * jnp.abs(jnp.fft.rfft(jnp.sin(x))))),
                [x], want_g, 1e-9)
    cases.append(case)
    return cases


def targets(bench):
    """Forward cases against NumPy, gradients against JAX, tf_numba as wide as they run:
    its default engine when NumPy's BLAS has one thread, else every core."""
    def check(case):
        judged = _bench.tf_judged(case)
        if "forward" in case.label:
            r = bench.ratio_to_ref(case, judged)
            out = [(f"{judged} / NumPy = {_bench.fmt_ratio(r)} (<= 1.10x)",
                    None if r is None else r <= 1.1)]
            jax_ratio = bench.jax_best_vs(case, judged)
            if jax_ratio is not None:
                out.append((f"best JAX / {judged} = {_bench.fmt_ratio(jax_ratio)}", _bench.INFO))
            return out
        r = bench.jax_best_vs(case, judged)
        return [(f"best JAX / {judged} = {_bench.fmt_ratio(r)} (>= 1.00x)",
                 None if r is None else r >= 1.0),
                (f"best JAX / tf_numba (one core) = {_bench.fmt_ratio(bench.jax_best(case))}",
                 _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("ext_bench", __doc__, reference=REF,
                         extra_args=[(("--only",), dict(default=None,
                                                        choices=["einsum", "linalg", "fft"]))])
    builders = {"einsum": einsum_cases, "linalg": linalg_cases, "fft": fft_cases}
    cases = []
    for name, build in builders.items():
        if bench.args.only in (None, name):
            cases.extend(build(bench))
    bench.run(cases, "einsum / linalg / fft, float64, forward and gradient", targets(bench))


if __name__ == "__main__":
    main()
