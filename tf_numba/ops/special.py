"""Special-function primitives (SciPy's erfinv, erfcx, gammaln, psi, polygamma, ndtri,
log_ndtr, xlogy, xlog1py): one table row each, as in ``elementwise.py``, and their JVPs.

They are elementwise primitives of real float operands (equal shapes or rank 0, one dtype),
computed by ``scipy.special`` and differentiable to every order: each JVP is written with
primitives that have JVPs themselves (``gammaln' = psi``, ``psi' = polygamma(1, .)``,
``polygamma(n, .)' = polygamma(n + 1, .)``). The one derivative not provided is that of
``polygamma`` with respect to its integer order ``n``: asking for it raises
``MissingRuleError`` naming ``polygamma`` and the ``jvp`` role.
"""
import math

import numpy as np

from ..core.linear import defjvp
from ..core.primitive import Primitive
from ..errors import MissingRuleError
from . import elementwise as ew
from .elementwise import FLOAT, SAME, _abstract_eval, _op, _special, batch_elementwise

SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
SQRT_2PI = math.sqrt(2 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _special2(name):
    """A binary scipy.special ufunc, imported on first use (as ``elementwise._special``)."""
    def impl(x, y):
        import scipy.special
        return getattr(scipy.special, name)(x, y)
    impl.__name__ = name
    return impl


def _polygamma(n, x):
    import scipy.special
    with np.errstate(invalid="ignore"):   # scipy evaluates (-1)**(n+1) for NaN orders too
        return np.asarray(scipy.special.polygamma(n, x), np.result_type(x))


# name: (SciPy impl, accepted dtypes, output dtype rule)
TABLE = {
    "erfinv": (_special("erfinv"), FLOAT, SAME),
    "erfcx": (_special("erfcx"), FLOAT, SAME),       # exp(x**2) * erfc(x)
    "lgamma": (_special("gammaln"), FLOAT, SAME),    # log|gamma(x)|
    "digamma": (_special("psi"), FLOAT, SAME),
    "polygamma": (_polygamma, FLOAT, SAME),          # (n, x); n integer-valued
    "ndtri": (_special("ndtri"), FLOAT, SAME),
    "log_ndtr": (_special("log_ndtr"), FLOAT, SAME),
    "xlogy": (_special2("xlogy"), FLOAT, SAME),       # x * log(y), 0 where x == 0
    "xlog1py": (_special2("xlog1py"), FLOAT, SAME),   # x * log1p(y), 0 where x == 0
}

PRIMS = {}
for _name, (_impl, _accepts, _out) in TABLE.items():
    # Not added to elementwise.PRIMS: that table is the core elementwise vocabulary.
    _prim = Primitive(_name, _abstract_eval(_name, _accepts, _out), _impl)
    PRIMS[_name] = _prim
    globals()[_name] = _op(_prim)
    globals()[_name + "_p"] = _prim


def _no_order_derivative(g, ans, n, x):
    raise MissingRuleError("polygamma", "jvp")


# JVP partials, ``partial(g, ans, *primals)``; every one is itself differentiable.
UNARY_JVP = {
    # erfinv'(x) = sqrt(pi)/2 exp(erfinv(x)**2)
    "erfinv": lambda g, ans, x: ew.mul(g, ew.mul(ew.exp(ew.mul(ans, ans)), SQRT_PI_OVER_2)),
    "erfcx": lambda g, ans, x: ew.mul(g, ew.sub(ew.mul(ew.mul(x, ans), 2), TWO_OVER_SQRT_PI)),
    "lgamma": lambda g, ans, x: ew.mul(g, digamma(x)),                   # noqa: F821
    "digamma": lambda g, ans, x: ew.mul(g, polygamma(1, x)),             # noqa: F821
    # ndtri'(p) = 1 / pdf(ndtri(p))
    "ndtri": lambda g, ans, x: ew.mul(g, ew.mul(ew.exp(ew.mul(ew.mul(ans, ans), 0.5)),
                                                SQRT_2PI)),
    # pdf(x) / cdf(x) = sqrt(2/pi) / erfcx(-x/sqrt 2): no cancellation in the far left tail
    "log_ndtr": lambda g, ans, x: ew.div(
        ew.mul(g, SQRT_2_OVER_PI), erfcx(ew.mul(x, -math.sqrt(0.5)))),  # noqa: F821
}
BINARY_JVP = {
    "polygamma": (_no_order_derivative,
                  lambda g, ans, n, x: ew.mul(g, polygamma(ew.add(n, 1), x))),  # noqa: F821
    "xlogy": (lambda g, ans, x, y: ew.mul(g, ew.log(y)),
              lambda g, ans, x, y: ew.mul(g, ew.div(x, y))),
    "xlog1py": (lambda g, ans, x, y: ew.mul(g, ew.log1p(y)),
                lambda g, ans, x, y: ew.mul(g, ew.div(x, ew.add(y, 1)))),
}

for _name, _partial in UNARY_JVP.items():
    defjvp(PRIMS[_name], _partial)
for _name, _partials in BINARY_JVP.items():
    defjvp(PRIMS[_name], *_partials)

for _prim in PRIMS.values():
    batch_elementwise(_prim)
