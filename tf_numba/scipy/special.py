"""``tf_numba.scipy.special``: SciPy's special functions on tf_numba primitives, with
derivatives (as ``jax.scipy.special``).

Real float arguments (ints and bools become float64; complex is rejected), NumPy
promotion and broadcasting, SciPy's values in float32 and float64. Every function here is
differentiable to every order, e.g. ``gammaln' = digamma``, ``digamma' = polygamma(1, .)``,
except ``polygamma`` with respect to its order ``n``: differentiating that raises
``MissingRuleError`` (primitive ``polygamma``, role ``jvp``).

>>> import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
>>> from tf_numba.scipy import special
>>> tf.grad(lambda x: tnp.sum(special.gammaln(x)))(np.array([1.0]))   # -euler_gamma
array([-0.57721566])

Under ``jit``, ``erf``, ``erfc``, ``expit``, ``logit``, ``ndtr``, ``gammaln``, ``xlogy``
and ``xlog1py`` compile into the kernel; ``erfinv``, ``erfcx``, ``digamma``,
``polygamma``, ``ndtri`` and ``log_ndtr`` run SciPy between compiled kernels.
"""
import math

import tf_numba.numpy as tnp

from .. import nn
from ..numpy import _promote as P
from ..ops import elementwise as ew
from ..ops import special as sp

__all__ = ["erf", "erfc", "erfcx", "erfinv", "expit", "logit", "xlogy", "xlog1py", "gammaln",
           "digamma", "psi", "polygamma", "logsumexp", "log_ndtr", "ndtr", "ndtri",
           "softmax", "log_softmax"]

SQRT1_2 = math.sqrt(0.5)


def _unary(prim, name, doc):
    def fn(x):
        return P.scalar_result(prim(nn.floats(name, x)[0]))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(prim, name, doc):
    def fn(x, y):
        return P.scalar_result(prim(*nn.floats(name, x, y)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _unary(ew.erf, "erf", """The error function ``2/sqrt(pi) * integral_0^x exp(-t**2) dt``.

    >>> special.erf(0.5)
    np.float64(0.5204998778130465)
    """)
erfc = _unary(ew.erfc, "erfc", """``1 - erf(x)``, accurate where it is small.

    >>> special.erfc(10.0)
    np.float64(2.0884875837625446e-45)
    """)
erfcx = _unary(sp.erfcx, "erfcx", """The scaled complementary error function
    ``exp(x**2) * erfc(x)``, finite for large ``x``.

    >>> special.erfcx(100.0)
    np.float64(0.005641613782989433)
    """)
erfinv = _unary(sp.erfinv, "erfinv", """The inverse of ``erf`` on ``(-1, 1)``; derivative
    ``sqrt(pi)/2 * exp(erfinv(x)**2)``.

    >>> special.erfinv(0.5)
    np.float64(0.4769362762044699)
    """)
expit = _unary(ew.logistic, "expit", """The logistic sigmoid ``1 / (1 + exp(-x))``.

    >>> special.expit(0.0)
    np.float64(0.5)
    """)
gammaln = _unary(sp.lgamma, "gammaln", """``log|gamma(x)|``; derivative ``digamma``.

    >>> special.gammaln(5.0)    # log(24)
    np.float64(3.1780538303479458)
    """)
digamma = _unary(sp.digamma, "digamma", """The digamma function ``gamma'(x) / gamma(x)``;
    derivative ``polygamma(1, x)``.

    >>> special.digamma(1.0)
    np.float64(-0.5772156649015329)
    """)
psi = digamma
ndtri = _unary(sp.ndtri, "ndtri", """The inverse of ``ndtr``: the standard normal quantile.

    >>> special.ndtri(0.975)
    np.float64(1.959963984540054)
    """)
log_ndtr = _unary(sp.log_ndtr, "log_ndtr", """``log(ndtr(x))``, accurate in both tails;
    its derivative is computed as ``sqrt(2/pi) / erfcx(-x/sqrt(2))``.

    >>> special.log_ndtr(-40.0)
    np.float64(-804.6084420137539)
    """)
xlogy = _binary(sp.xlogy, "xlogy", """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is
    NaN). Derivatives ``log(y)`` and ``x / y``.

    >>> special.xlogy(0.0, 0.0)
    np.float64(0.0)
    """)
xlog1py = _binary(sp.xlog1py, "xlog1py", """``x * log1p(y)``, 0 where ``x == 0`` (unless
    ``y`` is NaN).

    >>> special.xlog1py(0.0, -1.0)
    np.float64(0.0)
    """)


def polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` (``n`` integer-valued, broadcast with ``x``);
    derivative in ``x``: ``polygamma(n + 1, x)``. The derivative in ``n`` is not provided
    (it is an integer order): differentiating with respect to ``n`` raises
    ``MissingRuleError`` for primitive ``polygamma``, role ``jvp``.

    >>> special.polygamma(1, 1.0)    # pi**2 / 6
    np.float64(1.6449340668482266)
    """
    n, x = nn.floats("polygamma", n, x)
    return P.scalar_result(sp.polygamma(n, x))


def logit(p):
    """``log(p / (1 - p))``, the inverse of ``expit``; as SciPy, ``log1p(2(p - 1/2)/(1 - p))``
    on ``[0.3, 0.65]``, where the quotient form loses precision.

    >>> special.logit(0.5)
    np.float64(0.0)
    """
    p = nn.floats("logit", p)[0]
    mid = tnp.logical_and(p >= 0.3, p <= 0.65)
    # each branch sees only its own inputs (the "double where"): no 0 * inf in derivatives
    outer = tnp.where(mid, 0.25, p)
    inner = tnp.where(mid, p, 0.5)
    return P.scalar_result(tnp.where(
        mid, tnp.log1p((inner - 0.5) * 2 / (1 - inner)), tnp.log(outer / (1 - outer))))


def ndtr(x):
    """The standard normal CDF, as SciPy: ``1/2 + erf(x/sqrt 2)/2`` near 0, ``erfc`` in
    the tails.

    >>> special.ndtr(0.0)
    np.float64(0.5)
    """
    x = nn.floats("ndtr", x)[0]
    z = x * SQRT1_2
    a = tnp.abs(z)
    tail = ew.erfc(a) * 0.5
    return P.scalar_result(tnp.where(
        a < SQRT1_2, ew.erf(z) * 0.5 + 0.5, tnp.where(z > 0, 1 - tail, tail)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` along ``axis``, as ``scipy.special.logsumexp`` (see
    ``tf_numba.nn.logsumexp``).

    >>> special.logsumexp(np.array([0.0, 0.0]))
    np.float64(0.6931471805599453)
    """
    return nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign,
                        where=where)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (SciPy's default: all axes).

    >>> special.softmax(np.array([0.0, 0.0]))
    array([0.5, 0.5])
    """
    return nn.softmax(x, axis=axis)


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (SciPy's default: all axes).

    >>> special.log_softmax(np.array([0.0, 0.0]))
    array([-0.69314718, -0.69314718])
    """
    return nn.log_softmax(x, axis=axis)
