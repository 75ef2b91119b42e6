"""Where a tf_numba error leaves tf_numba: its message names the user's line, and its
traceback ends at the user's code, as JAX's do (``JAX_TRACEBACK_FILTERING``).

Every public function is an *entry point*: the public modules end with
``mark_entry_points(globals())``, and what an entry point hands back (``grad``'s function,
an optimizer's ``update``, a stax layer's ``apply_fun``) is one too. A ``TfNumbaError``
passing an entry point gets the user's source line (and, where the user called it, the
entry point's name as its op) if its raiser did not know them; where it leaves the
outermost entry point, the frames inside the tf_numba package are removed from its
traceback. The user's frames (the function ``jit`` traced, the line that called tf_numba),
the frames of any other library, and every frame of an exception that is not a
``TfNumbaError`` (a bug in tf_numba, an error of the user's own) stay.
``TF_NUMBA_TRACEBACK_FILTERING=off`` or
``tf.config.update("tf_numba_traceback_filtering", "off")`` keeps every frame.
"""
import functools
import inspect
import os
import sys
import types

from . import config
from .core.trace import user_source
from .errors import TfNumbaError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# each public function's entry point, so that two names of one function (an alias, a
# re-export) stay one object
_MARKED = {}

# the code objects of the entry points' wrappers: an error is filtered at the outermost
# one on the stack, once, after it has passed every tf_numba frame
_ENTRY_POINTS = set()

NOTE = ("(tf_numba removed its own frames from this traceback; "
        "TF_NUMBA_TRACEBACK_FILTERING=off shows them)")

# Python 3.10's bare ``raise`` re-raises the traceback its handler caught, not the one
# ``with_traceback`` set, and it has no exception notes: there the outermost entry point
# raises the error again (``raise err``), which leaves that one frame of its own in front of
# the filtered ones; the line it shows says what happened, in place of the note.
RAISE_AGAIN = sys.version_info < (3, 11)


def entry_point(wrapper):
    """Register ``wrapper`` (a function whose handler calls ``leave`` on the errors it
    passes on) as an entry point."""
    _ENTRY_POINTS.add(wrapper.__code__)
    return wrapper


def api_boundary(fn, op=None):
    """``fn`` as an entry point: a ``TfNumbaError`` leaving it names the user's line (and
    ``op``, where the user called it and the raiser named none) and loses tf_numba's frames.

    >>> grad_fn = api_boundary(grad_fn)
    """
    if getattr(fn, "__code__", None) in _ENTRY_POINTS:
        return fn

    @functools.wraps(fn)
    def public(*args, **kwargs):
        try:
            out = fn(*args, **kwargs)
        except TfNumbaError as err:
            if leave(err, sys._getframe(), op) and RAISE_AGAIN:
                raise err  # (frames removed; TF_NUMBA_TRACEBACK_FILTERING=off shows them)
            raise
        return _hand_back(out) if type(out) is _FUNCTION or isinstance(out, tuple) else out
    return entry_point(public)


_FUNCTION = types.FunctionType


def _is_own_function(value):
    """A function whose code is tf_numba's (``functools.wraps`` may have given it the
    user's name and module)."""
    return type(value) is types.FunctionType \
        and value.__code__.co_filename.startswith(_PACKAGE_DIR)


def _hand_back(out):
    """What an entry point returns (a function or a tuple), with the tf_numba functions in
    it (a function, or a tuple of them: an optimizer's triple, a stax layer's pair) made
    entry points."""
    if type(out) is _FUNCTION:
        return api_boundary(out) if _is_own_function(out) else out
    if out and type(out[0]) is _FUNCTION and all(_is_own_function(f) for f in out):
        made = [api_boundary(f) for f in out]
        return type(out)(*made) if hasattr(out, "_fields") else tuple(made)
    return out


def leave(err, frame, op=None):
    """Say where ``err`` leaves the entry point running in ``frame``; at the outermost entry
    point, remove tf_numba's frames from its traceback. Whether it removed them."""
    called_by_user = not _in_package(frame.f_back)
    if err.source is None or (err.op is None and op is not None and called_by_user):
        err.locate(op if called_by_user else None, user_source())
    if config.tf_numba_traceback_filtering == "off" or _inside_another_entry_point(frame):
        return False
    err.with_traceback(_without_internal_frames(err.__traceback__))
    context = err.__context__
    if context is not None and context.__traceback__ is not None \
            and _in_package(context.__traceback__.tb_frame):
        err.__suppress_context__ = True     # an exception tf_numba handled, not the user's
    if hasattr(err, "add_note") and NOTE not in getattr(err, "__notes__", ()):
        err.add_note(NOTE)
    return True


def _in_package(frame):
    return frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def _inside_another_entry_point(frame):
    caller = frame.f_back
    while caller is not None:
        if caller.f_code in _ENTRY_POINTS:
            return True
        caller = caller.f_back
    return False


def _without_internal_frames(tb):
    kept = [(t.tb_frame, t.tb_lasti, t.tb_lineno) for t in _walk(tb)
            if not _in_package(t.tb_frame)]
    out = None
    for frame, lasti, lineno in reversed(kept):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def _takes_arguments(method):
    code = method.__code__
    return code.co_argcount + code.co_kwonlyargcount > 1 or bool(
        code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


def mark_entry_points(module_globals):
    """Make what a public module lists in ``__all__`` entry points: its tf_numba functions,
    the public methods (and calls) of its tf_numba classes, and its pairs of functions
    (stax's ``Relu``).

    >>> mark_entry_points(globals())     # at the end of tf_numba/lax/control.py
    """
    for name in module_globals["__all__"]:
        value = module_globals[name]
        if _is_own_function(value):
            if value not in _MARKED:
                _MARKED[value] = api_boundary(value, name)
            module_globals[name] = _MARKED[value]
        elif isinstance(value, tuple):
            module_globals[name] = _hand_back(value)
        elif isinstance(value, type):
            if not issubclass(value, BaseException):
                _mark_methods(value, name)
        elif type(value).__module__.startswith("tf_numba"):   # (stats.multivariate_normal)
            _mark_methods(type(value), name)


def _mark_methods(cls, name):
    """A class's construction, its calls and its public methods, each named as the user
    writes it (``custom_vjp``, ``Runtime.prepare``, ``multivariate_normal.pdf``). A method
    that takes nothing but ``self`` (``CpuEngine.target``) is left as it is: it cannot be
    handed a bad input, and ``Runtime.run`` calls it on every run."""
    for attr, method in list(vars(cls).items()):
        if _is_own_function(method) and _takes_arguments(method) and (
                not attr.startswith("_") or attr in ("__init__", "__call__")):
            op = name if attr.startswith("_") else f"{name}.{attr}"
            setattr(cls, attr, api_boundary(method, op))
