"""tf_numba's switches, set as JAX's are: ``tf.config.update(name, value)``, read as
``tf.config.<name>``; each starts from its environment variable.

- ``tf_numba_traceback_filtering`` (``TF_NUMBA_TRACEBACK_FILTERING``): ``"on"`` (default):
  a tf_numba error's traceback ends at your code; ``"off"``: it shows tf_numba's own
  frames too.
- ``tf_numba_log_compiles`` (``TF_NUMBA_LOG_COMPILES``): ``False`` (default): the
  ``tf_numba`` logger warns of slow compiles only; ``True``: it logs every kernel compile
  (key, seconds, worker).

JAX's switches that mean something on one CPU are taken by their JAX names, so a JAX
program's ``jax.config.update(...)`` runs unchanged:

- ``jax_enable_x64``: always ``True``: float64 by default, as NumPy (pass float32 arrays
  to compute in float32); ``False`` is an error
- ``jax_disable_jit``: ``True`` makes ``jit`` run the Python function op by op
  (``tf.disable_jit()``)
- ``jax_log_compiles``, ``jax_traceback_filtering``: ``tf_numba_log_compiles`` and
  ``tf_numba_traceback_filtering`` under JAX's names
- ``jax_platforms``, ``jax_platform_name``: ``"cpu"`` (or empty), the one platform
- ``jax_default_device``: ``None`` or the CPU device
- ``jax_default_matmul_precision``: accepted; products are computed in their dtype's full
  precision whatever it says
- ``jax_transfer_guard`` (and ``_host_to_device``, ``_device_to_host``,
  ``_device_to_device``): accepted; arrays never move, so nothing is guarded
- ``jax_check_tracer_leaks``: accepted; a leaked traced value is always an error
  (``TracerLeakError``)
- ``jax_threefry_partitionable``: always ``True``: ``tf.random`` gives the bits of JAX's
  default

>>> tf.config.update("tf_numba_traceback_filtering", "off")
>>> tf.config.tf_numba_traceback_filtering
'off'
"""
import contextlib
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


def _only(*allowed, why):
    """A parser that takes the values ``allowed`` and says ``why`` of any other."""
    def parse(value):
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
            value = _flag(value)
        if value not in allowed:
            raise ValueError(f"{value!r}: {why}")
        return value
    return parse


def _platforms(value):
    text = "" if value is None else str(value).strip().lower()
    if text not in ("", "cpu"):
        raise ValueError(f"{value!r}: tf_numba computes on the CPU only ('cpu')")
    return text or None


def _device(value):
    if value is not None and getattr(value, "platform", value) != "cpu":
        raise ValueError(f"{value!r}: the one device is tf.devices()[0], the CPU")
    return value


def _precision(value):
    return None if value is None else str(value)


def _transfer_guard(value):
    if value not in ("allow", "log", "disallow", "log_explicit", "disallow_explicit"):
        raise ValueError(f"{value!r}: one of 'allow', 'log', 'disallow', 'log_explicit', "
                         "'disallow_explicit'")
    return value


def _jax_traceback_filtering(value):
    # JAX's modes all hide internal frames but "off"
    return "off" if str(value).strip().lower() == "off" else "on"


# switch: (environment variable, default, parser)
SWITCHES = {
    "tf_numba_traceback_filtering": ("TF_NUMBA_TRACEBACK_FILTERING", "on", _on_or_off),
    "tf_numba_log_compiles": ("TF_NUMBA_LOG_COMPILES", False, _flag),
    "jax_enable_x64": ("JAX_ENABLE_X64", True, _only(True, why=(
        "tf_numba computes in float64 by default, as NumPy, and that cannot be turned off; "
        "pass float32 arrays to compute in float32"))),
    "jax_disable_jit": ("JAX_DISABLE_JIT", False, _flag),
    "jax_platforms": ("JAX_PLATFORMS", None, _platforms),
    "jax_platform_name": ("JAX_PLATFORM_NAME", None, _platforms),
    "jax_default_device": ("JAX_DEFAULT_DEVICE", None, _device),
    "jax_default_matmul_precision": ("JAX_DEFAULT_MATMUL_PRECISION", None, _precision),
    "jax_transfer_guard": ("JAX_TRANSFER_GUARD", "allow", _transfer_guard),
    "jax_transfer_guard_host_to_device": ("JAX_TRANSFER_GUARD_HOST_TO_DEVICE", "allow",
                                          _transfer_guard),
    "jax_transfer_guard_device_to_host": ("JAX_TRANSFER_GUARD_DEVICE_TO_HOST", "allow",
                                          _transfer_guard),
    "jax_transfer_guard_device_to_device": ("JAX_TRANSFER_GUARD_DEVICE_TO_DEVICE", "allow",
                                            _transfer_guard),
    "jax_check_tracer_leaks": ("JAX_CHECK_TRACER_LEAKS", False, _flag),
    "jax_threefry_partitionable": ("JAX_THREEFRY_PARTITIONABLE", True, _only(True, why=(
        "tf.random gives the bits of JAX's default generator, the partitionable one"))),
}
# JAX's names of tf_numba's own switches: one value under two names
ALIASES = {"jax_log_compiles": ("tf_numba_log_compiles", _flag),
           "jax_traceback_filtering": ("tf_numba_traceback_filtering",
                                       _jax_traceback_filtering)}


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
    (``"on"`` or ``"off"``), ``"tf_numba_log_compiles"`` (``True`` or ``False``) or one of
    JAX's (the table above).

    >>> tf.config.update("tf_numba_log_compiles", True)
    """
    if name in ALIASES:
        name, parse = ALIASES[name]
        value = parse(value)
    if name not in SWITCHES:
        raise ArgumentError(f"no switch named {name!r}; the switches are "
                            f"{sorted(SWITCHES) + sorted(ALIASES)}", op="tf.config.update")
    try:
        _values[name] = SWITCHES[name][2](value)
    except ValueError as err:
        raise ArgumentError(f"{name}: {err}", op="tf.config.update") from None


def read(name):
    """The value of switch ``name`` (``tf.config.<name>`` reads it too)."""
    return _values[ALIASES[name][0] if name in ALIASES else name]


def _scoped(name, default):
    """A context manager factory that sets switch ``name`` for the duration of a block,
    as JAX's ``with jax.enable_x64(True):``: ``_scoped(name, default)(value)``."""
    @contextlib.contextmanager
    def setting(value=default):
        target = ALIASES[name][0] if name in ALIASES else name
        old = _values[target]
        update(name, value)
        try:
            yield
        finally:
            _values[target] = old
    setting.__name__ = setting.__qualname__ = name.removeprefix("jax_")
    setting.__doc__ = (f"Set the switch ``{name}`` within a ``with`` block (default "
                       f"{default!r}), as ``jax.{setting.__name__}``.")
    return setting


# JAX's top-level context managers over its switches (``tf.disable_jit()``, ...)
disable_jit = _scoped("jax_disable_jit", True)
enable_x64 = _scoped("jax_enable_x64", True)
default_device = _scoped("jax_default_device", None)
default_matmul_precision = _scoped("jax_default_matmul_precision", None)
log_compiles = _scoped("jax_log_compiles", True)
transfer_guard = _scoped("jax_transfer_guard", "allow")
transfer_guard_host_to_device = _scoped("jax_transfer_guard_host_to_device", "allow")
transfer_guard_device_to_host = _scoped("jax_transfer_guard_device_to_host", "allow")
transfer_guard_device_to_device = _scoped("jax_transfer_guard_device_to_device", "allow")
check_tracer_leaks = checking_leaks = _scoped("jax_check_tracer_leaks", True)


def config_with_absl():
    """Make each switch a command-line flag of an ``absl`` program, as JAX's
    ``jax.config.config_with_absl()``: ``--jax_disable_jit=true`` on the command line of
    a program run by ``absl.app.run`` sets the switch once the flags are parsed."""
    from absl import app, flags
    for name in (*SWITCHES, *ALIASES):
        if name not in flags.FLAGS:
            flags.DEFINE_string(name, None, f"tf.config.update({name!r}, ...)")
    app.call_after_init(lambda: _take_absl_flags(flags))


def parse_flags_with_absl():
    """Set the switches from the ``--jax...``/``--tf_numba...`` flags of ``sys.argv`` (before
    any ``--``) now, as JAX's ``jax.config.parse_flags_with_absl()``."""
    import itertools
    import sys

    from absl import flags
    config_with_absl()
    given = itertools.takewhile(lambda a: a != "--", sys.argv)
    flags.FLAGS(["", *(a for a in given if a.startswith(("--jax", "--tf_numba")))],
                known_only=True)
    _take_absl_flags(flags)


def _take_absl_flags(flags):
    for name in (*SWITCHES, *ALIASES):
        if flags.FLAGS[name].present:
            update(name, flags.FLAGS[name].value)


def __getattr__(name):
    if name in _values or name in ALIASES:
        return read(name)
    raise AttributeError(f"tf.config has no switch {name!r}; the switches are "
                         f"{sorted(SWITCHES) + sorted(ALIASES)}")


__all__ = ["check_tracer_leaks", "checking_leaks", "config_with_absl", "default_device",
           "default_matmul_precision", "disable_jit", "enable_x64", "log_compiles",
           "parse_flags_with_absl", "read", "transfer_guard",
           "transfer_guard_device_to_device", "transfer_guard_device_to_host",
           "transfer_guard_host_to_device", "update"]
__dir__ = public_dir(globals())
