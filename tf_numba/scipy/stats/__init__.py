"""``tf_numba.scipy.stats``: SciPy's distributions, differentiable, as ``jax.scipy.stats``.

Each distribution is an object with SciPy's methods and arguments (shape parameters, then
``loc`` and ``scale``; broadcast together, float32 or float64). Invalid parameters give
NaN, as SciPy; every method is differentiable to any order in its real arguments (the
discrete ones not in ``k``) and traces and compiles like any tf_numba function.

>>> import numpy as np, tf_numba as tf
>>> from tf_numba.scipy.stats import norm
>>> norm.logpdf(np.array([0.0, 1.0]), loc=0.5, scale=2.0)
array([-1.64333571, -1.64333571])
>>> tf.grad(lambda s: norm.logpdf(1.0, 0.0, s))(2.0)     # (x**2 / s**2 - 1) / s
array(-0.375)

``docs/scipy.md`` lists every distribution and method with its accuracy and derivatives.
"""
import sys as _sys

from .continuous import (beta, cauchy, chi2, expon, gamma, gennorm, gumbel_l,  # noqa: F401
                         gumbel_r, laplace, logistic, lognorm, norm, pareto, t, truncnorm,
                         uniform, vonmises, wrapcauchy)
from .discrete import bernoulli, betabinom, binom, geom, nbinom, poisson  # noqa: F401
from .multivariate import dirichlet, multinomial, multivariate_normal  # noqa: F401
from .descriptive import ModeResult, entropy, mode, rankdata, sem  # noqa: F401
from .kde import gaussian_kde  # noqa: F401

CONTINUOUS = ("norm", "expon", "laplace", "logistic", "cauchy", "uniform", "pareto",
              "gumbel_r", "gumbel_l", "lognorm", "truncnorm", "t", "chi2", "gamma", "beta",
              "gennorm", "vonmises", "wrapcauchy")
DISCRETE = ("bernoulli", "poisson", "geom", "binom", "nbinom", "betabinom")
MULTIVARIATE = ("multivariate_normal", "dirichlet", "multinomial")
DISTRIBUTIONS = CONTINUOUS + DISCRETE + MULTIVARIATE
__all__ = list(DISTRIBUTIONS) + ["entropy", "rankdata", "gaussian_kde", "mode", "sem",
                                 "ModeResult"]

# JAX's distributions are modules (``import jax.scipy.stats.norm as norm``); each of these
# objects is importable under the same path
for _name in DISTRIBUTIONS:
    _sys.modules[f"{__name__}.{_name}"] = globals()[_name]


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
