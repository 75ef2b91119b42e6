"""tf_numba's version (``jax.version``'s counterpart): ``tf.version.__version__``."""
from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("tf_numba")
except _metadata.PackageNotFoundError:     # run from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
