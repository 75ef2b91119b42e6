"""``tf_numba.scipy``: SciPy-compatible functions on tf_numba primitives (``special``)."""
from . import special  # noqa: F401
from . import linalg  # noqa: F401
from . import integrate  # noqa: F401
from . import optimize  # noqa: F401
from . import signal  # noqa: F401
from . import stats  # noqa: F401
from . import sparse  # noqa: F401
from . import fft  # noqa: F401
from . import ndimage  # noqa: F401
from . import interpolate  # noqa: F401
from . import cluster  # noqa: F401
from . import spatial  # noqa: F401

import types as _types  # noqa: E402

__all__ = sorted(name for name, value in globals().items()
                 if isinstance(value, _types.ModuleType) and not name.startswith("_"))
