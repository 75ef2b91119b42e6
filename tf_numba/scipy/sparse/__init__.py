"""``tf_numba.scipy.sparse``: the iterative solvers of ``scipy.sparse.linalg`` (``linalg``),
on linear operators given as functions or matrices, as ``jax.scipy.sparse``."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
