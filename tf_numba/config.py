"""tf_numba's switches, set as JAX's are: ``tf.config.update(name, value)``, read as
``tf.config.<name>``; each starts from its environment variable.

- ``tf_numba_traceback_filtering`` (``TF_NUMBA_TRACEBACK_FILTERING``): ``"on"`` (default):
  a tf_numba error's traceback ends at your code; ``"off"``: it shows tf_numba's own
  frames too.
- ``tf_numba_log_compiles`` (``TF_NUMBA_LOG_COMPILES``): ``False`` (default): the
  ``tf_numba`` logger warns of slow compiles only; ``True``: it logs every kernel compile
  (key, seconds, worker).

>>> tf.config.update("tf_numba_traceback_filtering", "off")
>>> tf.config.tf_numba_traceback_filtering
'off'
"""
import os

from .core.public import public_dir
from .errors import ArgumentError


def _on_or_off(value):
    text = str(value).strip().lower()
    if text in ("on", "1", "true", "yes"):
        return "on"
    if text in ("off", "0", "false", "no"):
        return "off"
    raise ValueError(f"expected 'on' or 'off', got {value!r}")


def _flag(value):
    return _on_or_off(value) == "on"


# switch: (environment variable, default, parser)
SWITCHES = {
    "tf_numba_traceback_filtering": ("TF_NUMBA_TRACEBACK_FILTERING", "on", _on_or_off),
    "tf_numba_log_compiles": ("TF_NUMBA_LOG_COMPILES", False, _flag),
}


def _initial(name):
    variable, default, parse = SWITCHES[name]
    text = os.environ.get(variable)
    if not text:
        return default
    try:
        return parse(text)
    except ValueError as err:
        raise ArgumentError(f"{variable}={text!r}: {err}", op="tf.config") from None


_values = {name: _initial(name) for name in SWITCHES}


def update(name, value):
    """Set one of tf_numba's switches for this process: ``"tf_numba_traceback_filtering"``
    (``"on"`` or ``"off"``) or ``"tf_numba_log_compiles"`` (``True`` or ``False``).

    >>> tf.config.update("tf_numba_log_compiles", True)
    """
    if name not in SWITCHES:
        raise ArgumentError(f"no switch named {name!r}; the switches are {sorted(SWITCHES)}",
                            op="tf.config.update")
    try:
        _values[name] = SWITCHES[name][2](value)
    except ValueError as err:
        raise ArgumentError(f"{name}: {err}", op="tf.config.update") from None


def __getattr__(name):
    if name in _values:
        return _values[name]
    raise AttributeError(f"tf.config has no switch {name!r}; the switches are "
                         f"{sorted(SWITCHES)}")


__all__ = ["update"]
__dir__ = public_dir(globals())
