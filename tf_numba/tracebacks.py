"""A tf_numba error raised to the user has a traceback that ends at the user's code, as
JAX's do (``JAX_TRACEBACK_FILTERING``): the frames inside the tf_numba package are removed
where the error leaves tf_numba's outermost public entry point.

Only ``TfNumbaError`` is filtered, and only of tf_numba's own frames: the user's frames (the
function ``jit`` traced, the line that called tf_numba), the frames of any other library, and
every frame of an exception that is not a ``TfNumbaError`` (a bug in tf_numba, an error of
the user's own) stay. ``TF_NUMBA_TRACEBACK_FILTERING=off`` or
``tf.config.update("tf_numba_traceback_filtering", "off")`` keeps every frame.
"""
import functools
import os
import sys
import types

from . import config
from .errors import TfNumbaError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# the code objects of the wrappers that mark a public entry point: an error is filtered at
# the outermost one on the stack, once, after it has passed every tf_numba frame
_ENTRY_POINTS = set()

NOTE = ("(tf_numba removed its own frames from this traceback; "
        "TF_NUMBA_TRACEBACK_FILTERING=off shows them)")


def entry_point(wrapper):
    """Register ``wrapper`` (a function that calls ``drop_internal_frames`` on the errors it
    passes on) as a public entry point."""
    _ENTRY_POINTS.add(wrapper.__code__)
    return wrapper


def api_boundary(fn):
    """``fn`` as a public entry point: a ``TfNumbaError`` leaving it loses tf_numba's frames.

    >>> grad = api_boundary(grad)
    """
    @functools.wraps(fn)
    def public(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TfNumbaError as err:
            drop_internal_frames(err, sys._getframe())
            raise
    return entry_point(public)


def drop_internal_frames(err, frame):
    """Remove tf_numba's frames from ``err``'s traceback, caught in ``frame`` (an entry
    point's), unless filtering is off or an outer entry point will do it."""
    if config.tf_numba_traceback_filtering == "off" or _inside_another_entry_point(frame):
        return
    err.with_traceback(_without_internal_frames(err.__traceback__))
    if NOTE not in getattr(err, "__notes__", ()) and hasattr(err, "add_note"):
        err.add_note(NOTE)


def _inside_another_entry_point(frame):
    caller = frame.f_back
    while caller is not None:
        if caller.f_code in _ENTRY_POINTS:
            return True
        caller = caller.f_back
    return False


def _without_internal_frames(tb):
    kept = [(t.tb_frame, t.tb_lasti, t.tb_lineno) for t in _walk(tb)
            if not t.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)]
    out = None
    for frame, lasti, lineno in reversed(kept):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def mark_entry_points(module_globals):
    """Make each function a public module defines and lists in ``__all__`` an entry point.

    >>> mark_entry_points(globals())     # at the end of tf_numba/lax/control.py
    """
    for name in module_globals["__all__"]:
        fn = module_globals[name]
        if isinstance(fn, types.FunctionType) and fn.__module__ == module_globals["__name__"]:
            module_globals[name] = api_boundary(fn)
