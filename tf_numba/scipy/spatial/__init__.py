"""``tf_numba.scipy.spatial``: rotations in 3 dimensions (``transform``), as
``jax.scipy.spatial``."""
from . import transform  # noqa: F401

__all__ = ["transform"]
