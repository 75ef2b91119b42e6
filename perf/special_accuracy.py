"""Accuracy of the parameter derivatives of ``gammainc``/``gammaincc`` and ``betainc``
(``tf_numba.ops.incomplete``) against mpmath at 40 digits, over log-uniform grids; the
figures the docstrings of ``tf_numba.scipy.special`` state.

    python perf/special_accuracy.py          # needs mpmath (pip install mpmath)

Prints, per derivative and range, the largest relative error (absolute below 1e-300).
"""
import numpy as np

from tf_numba.ops import incomplete


def _grid(lo, hi, n, rng):
    return 10 ** rng.uniform(np.log10(lo), np.log10(hi), n)


def _worst(got, want):
    want = np.asarray(want, float)
    err = np.abs(got - want) / np.maximum(np.abs(want), 1e-300)
    return float(np.max(err))


def _gamma_reference(mp, a, x, order):
    """mpmath's derivative of the smaller of P and Q (dP = -dQ): differences of a value
    near 1 would cancel even at 40 digits."""
    x = mp.mpf(x)
    if x < a:      # below the mean, P is the smaller
        return mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), mp.mpf(a), order)
    return -mp.diff(lambda s: mp.gammainc(s, x, mp.inf, regularized=True), mp.mpf(a), order)


def _beta_reference(mp, a, b, x, i, j):
    x, ab = mp.mpf(x), (mp.mpf(a), mp.mpf(b))
    if x < a / (a + b):
        return mp.diff(lambda s, t: mp.betainc(s, t, 0, x, regularized=True), ab, (i, j))
    # 1 - I_x(a, b) = I_{1-x}(b, a): mpmath's upper integral cancels against 1
    return -mp.diff(lambda s, t: mp.betainc(t, s, 0, 1 - x, regularized=True), ab, (i, j))


def gamma_rows(mp, rng, n):
    for a_range, x_range in (((1e-3, 1e3), (1e-5, 1e3)), ((1e3, 1e4), (5e2, 2e4))):
        a, x = _grid(*a_range, n, rng), _grid(*x_range, n, rng)
        for order in (1, 2):
            want = [_gamma_reference(mp, a_, x_, order) for a_, x_ in zip(a, x)]
            yield (f"d^{order}/da^{order} gammainc", a_range, x_range,
                   _worst(incomplete.gammainc_da(a, x, order), want))


def beta_rows(mp, rng, n):
    for ab_range in ((0.1, 10.0), (10.0, 1e3)):
        a, b = _grid(*ab_range, n, rng), _grid(*ab_range, n, rng)
        x = rng.uniform(0.001, 0.999, n)
        for i, j in ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2)):
            want = [_beta_reference(mp, a_, b_, x_, i, j) for a_, b_, x_ in zip(a, b, x)]
            yield (f"d/da^{i} db^{j} betainc", ab_range, (0.001, 0.999),
                   _worst(incomplete.betainc_dab(a, b, x, i, j), want))


def main(n=40):
    import mpmath as mp
    mp.mp.dps = 40
    rng = np.random.default_rng(0)
    print(f"{'derivative':28s} {'a (and b) range':22s} {'x range':20s} max rel error")
    with np.errstate(all="ignore"):
        for name, ar, xr, worst in [*gamma_rows(mp, rng, n), *beta_rows(mp, rng, n)]:
            print(f"{name:28s} {str(ar):22s} {str(xr):20s} {worst:.1e}")


if __name__ == "__main__":
    main()
