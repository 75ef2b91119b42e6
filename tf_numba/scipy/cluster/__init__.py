"""``tf_numba.scipy.cluster``: vector quantization (``vq``), as ``jax.scipy.cluster``."""
from . import vq  # noqa: F401

__all__ = ["vq"]
