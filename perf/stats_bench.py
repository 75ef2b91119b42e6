"""tf_numba.scipy.stats: multivariate_normal.logpdf and the gradient of a Gaussian-process
marginal likelihood, float64.

Tools, timed interleaved in one process: tf_numba ``jit`` over ``tf_numba.scipy.stats``,
NumPy hand-written (Cholesky, triangular solves; the GP gradient written out as
``tr((alpha alpha^T - K^-1) dK)/2``), ``scipy.stats.multivariate_normal.logpdf`` (an
``eigh`` per call) and JAX ``jit`` over ``jax.scipy.stats`` in both dispatch configurations.
Per call, inputs already in place (JAX: device arrays, result blocked on).

    mvn_logpdf:   multivariate_normal.logpdf(x, mean, cov), x of 1000 points of dim 16
    gp_grad:      d/d(log lengthscale, log variance, log noise) of
                  -multivariate_normal.logpdf(y, 0, K), K = RBF(t, t) + noise I, 256 points

Target: tf_numba at least as fast as NumPy hand-written and the faster JAX configuration.

    python perf/stats_bench.py [--quick] [--rounds N] [--json PATH]
"""
import sys

import numpy as np
import scipy.linalg
import scipy.stats

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402
from tf_numba.scipy import stats  # noqa: E402

LOG_2PI = np.log(2 * np.pi)


# ---------------------------------------------------------------- multivariate normal

def tf_mvn(x, mean, cov):
    return stats.multivariate_normal.logpdf(x, mean, cov)


def numpy_mvn(x, mean, cov):
    low = np.linalg.cholesky(cov)
    z = scipy.linalg.solve_triangular(low, (x - mean).T, lower=True)
    log_det = 2 * np.log(np.diag(low)).sum()
    return -0.5 * (cov.shape[0] * LOG_2PI + log_det + (z * z).sum(axis=0))


# ---------------------------------------------------------------- GP marginal likelihood

def _rbf(t, log_ell, log_var, log_noise, xp):
    d = t[:, None] - t[None, :]
    return (xp.exp(log_var) * xp.exp(-0.5 * d * d * xp.exp(-2 * log_ell))
            + xp.exp(log_noise) * xp.eye(t.shape[0]))


def tf_gp_nll(theta, t, y):
    k = _rbf(t, theta[0], theta[1], theta[2], tnp)
    return -stats.multivariate_normal.logpdf(y, tnp.zeros(y.shape[0]), k)


def numpy_gp_grad(theta, t, y):
    log_ell, log_var, log_noise = theta
    d2 = (t[:, None] - t[None, :]) ** 2
    rbf = np.exp(log_var) * np.exp(-0.5 * d2 * np.exp(-2 * log_ell))
    k = rbf + np.exp(log_noise) * np.eye(t.shape[0])
    cho = scipy.linalg.cho_factor(k, lower=True)
    alpha = scipy.linalg.cho_solve(cho, y)
    w = np.outer(alpha, alpha) - scipy.linalg.cho_solve(cho, np.eye(t.shape[0]))
    dk = (rbf * d2 * np.exp(-2 * log_ell), rbf, np.exp(log_noise) * np.eye(t.shape[0]))
    # d nll = -tr(W dK) / 2, W = alpha alpha^T - K^-1 (Rasmussen & Williams eq. 5.9)
    return np.array([-0.5 * np.sum(w * g) for g in dk])


# ---------------------------------------------------------------- cases

def _jax_fns(jax):
    jnp, jstats = jax.numpy, jax.scipy.stats

    def gp_nll(theta, t, y):
        k = _rbf(t, theta[0], theta[1], theta[2], jnp)
        return -jstats.multivariate_normal.logpdf(y, jnp.zeros(y.shape[0]), k)
    return dict(mvn=jax.jit(jstats.multivariate_normal.logpdf), gp_grad=jax.jit(jax.grad(gp_nll)))


def _add_tools(bench, case, tf_fn, np_fn, jax_fn, args, want, tol, scipy_fn=None):
    check = lambda tool, got: _bench.assert_close(tool, got, want, tol, tol)  # noqa: E731
    _bench.add_tf(case, tf_fn, args, check)
    if case.wants("numpy"):
        check("numpy", np_fn(*args))
        case.add("numpy", lambda: np_fn(*args))
    if scipy_fn is not None and case.wants("scipy"):
        check("scipy", scipy_fn(*args))
        case.add("scipy", lambda: scipy_fn(*args))
    if case.wants(_bench.JAX):
        jargs = [bench.jax.numpy.asarray(a) for a in args]
        check("jax", jax_fn(*jargs))
        run_jax = lambda: bench.jax.block_until_ready(jax_fn(*jargs))  # noqa: E731
        case.add(_bench.JAX, run_jax)
        case.note(f"jax keeps {_bench.cores_used(run_jax):.2f} cores busy per call "
                  "(process CPU time / wall time)")


def build_cases(bench):
    rng = np.random.default_rng(0)
    jax_fns = _jax_fns(bench.jax) if bench.jax is not None else {}
    points, dim, n = (200, 8, 64) if bench.quick else (1000, 16, 256)

    a = rng.standard_normal((dim, dim))
    cov = a @ a.T + dim * np.eye(dim)
    mean, x = rng.standard_normal(dim), rng.standard_normal((points, dim))
    mvn = bench.case(f"mvn_logpdf {points}x{dim} float64", points=points, dim=dim)
    _add_tools(bench, mvn, tf_mvn, numpy_mvn, jax_fns.get("mvn"), (x, mean, cov),
               scipy.stats.multivariate_normal.logpdf(x, mean, cov), 1e-10,
               scipy_fn=scipy.stats.multivariate_normal.logpdf)

    t = np.sort(rng.uniform(0, 10, n))
    y = np.sin(t) + 0.1 * rng.standard_normal(n)
    theta = np.array([0.0, 0.3, np.log(0.05)])
    gp = bench.case(f"gp_grad n={n} float64", n=n)
    _add_tools(bench, gp, tf.grad(tf_gp_nll), numpy_gp_grad, jax_fns.get("gp_grad"),
               (theta, t, y), numpy_gp_grad(theta, t, y), 1e-7)
    return [mvn, gp]


def targets(bench):
    def check(case):
        judged = _bench.tf_judged(case)
        jax_vs = bench.jax_best_vs(case, judged)
        vs_numpy = bench.ratio_to_ref(case, _bench.TF)
        out = [(f"best JAX / tf_numba (one core) = {_bench.fmt_ratio(bench.jax_best(case))}",
                _bench.INFO),
               (f"best JAX / {judged} = {_bench.fmt_ratio(jax_vs)} (>= 1.00x)",
                None if jax_vs is None else jax_vs >= 1.0),
               (f"tf_numba / numpy = {_bench.fmt_ratio(vs_numpy)} (<= 1.00x)",
                None if vs_numpy is None else vs_numpy <= 1.0)]
        if "scipy" in case.results:
            out.append((f"scipy / tf_numba = {_bench.fmt_ratio(case.ratio('scipy', _bench.TF))}",
                        _bench.INFO))
        return out
    return check


def main():
    bench = _bench.Bench("stats_bench", __doc__, reference="numpy")
    bench.run(build_cases(bench), "multivariate_normal.logpdf and a GP marginal likelihood "
              "gradient", targets(bench))


if __name__ == "__main__":
    main()
