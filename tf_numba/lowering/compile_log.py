"""What tf_numba says about compiles, as log records of the standard ``logging`` module's
``tf_numba`` logger (silence, filter or redirect them as any library's).

By default: one warning for each of the user's functions whose kernels took longer than
``SLOW_COMPILE_SECONDS`` to compile, naming the function and how many kernels it needed
(with the library's own helpers that compiled in the user's process meanwhile, which the
user waited for too but numba's cache keeps for every later run), and no line for a
helper itself. With ``TF_NUMBA_LOG_COMPILES=1`` (or
``tf.config.update("tf_numba_log_compiles", True)``) every compile, kernel or helper, is a
warning too, with its key, its seconds and the process that compiled it; otherwise those
records are at DEBUG level.

Kernels compile in worker processes (``compile_service``): a worker's reply says how long
its compile took, and the request says which of the user's calls asked for it (a
``CompileGroup``: the kernels one ``jit`` call sent for compiling).
"""
import itertools
import logging
import threading
import time

from .. import config

LOGGER = logging.getLogger("tf_numba")
KERNEL_MODULE_PREFIX = "tf_numba_kernel_"   # the module name of every generated kernel
# a function whose kernels take longer than this to compile is worth a line: below it,
# a first call's compile is the usual cost (a small kernel takes ~1-2 s)
SLOW_COMPILE_SECONDS = 5.0

_state = threading.local()
_lock = threading.Lock()
_ids = itertools.count()
_groups = {}                    # group id -> CompileGroup with kernels still compiling


def _compile_level():
    return logging.WARNING if config.tf_numba_log_compiles else logging.DEBUG


class CompileGroup:
    """The kernels compiled for one of the user's calls (``jit(f)``'s first call with a
    signature): how many, how many came from the disk cache, when the first was asked
    for and the last arrived."""

    def __init__(self, what):
        self.what = what
        self.id = next(_ids)
        self.started = None
        self.finished = None
        self.pending = 0
        self.kernels = 0
        self.from_disk = 0
        self.helpers = 0
        self.open = True            # the call is still running: more may come

    def _done_if_finished(self):
        if self.open or self.pending or self.started is None:
            return
        _groups.pop(self.id, None)
        seconds = self.finished - self.started
        if self.kernels > self.from_disk and seconds > SLOW_COMPILE_SECONDS:
            compiled = self.kernels - self.from_disk
            LOGGER.warning("compiling %s took %.1f s (%d kernel%s%s%s; compiles over %.0f s "
                           "are logged, TF_NUMBA_LOG_COMPILES=1 logs every one)", self.what,
                           seconds, compiled, "" if compiled == 1 else "s",
                           f", {self.from_disk} more from the disk cache" if self.from_disk
                           else "",
                           f", and {self.helpers} of tf_numba's helpers, compiled once for "
                           "later runs" if self.helpers else "", SLOW_COMPILE_SECONDS)


class compiling_for:
    """Attribute the compiles that this thread causes inside the ``with`` to ``what`` (a
    name the user knows: ``jit(loss)``)."""

    def __init__(self, what):
        self.what = what

    def __enter__(self):
        self.outer = getattr(_state, "group", None)
        if self.outer is None:
            _state.group = CompileGroup(self.what)
        return self

    def __exit__(self, *exc):
        if self.outer is not None:
            return
        group, _state.group = _state.group, None
        with _lock:
            group.open = False
            group._done_if_finished()


def requested(request):
    """Mark a compile ``request`` (about to go to a worker) with the user's call that asked
    for it (the worker ignores the mark)."""
    group = getattr(_state, "group", None)
    if group is None:
        return request
    with _lock:
        if group.started is None:
            group.started = time.perf_counter()
        group.pending += 1
        _groups[group.id] = group
    return dict(request, group=group.id)


def job_done(request, ok, cached, seconds, worker, joined=()):
    """A worker's reply has arrived for ``request``, and for the ``joined`` requests of
    other calls that asked for the same kernel meanwhile (the compile service sends one
    job for them all): logged once, counted in each call's group."""
    if ok:
        what = "found in the disk cache" if cached else f"compiled in {seconds:.2f} s"
        LOGGER.log(_compile_level(), "kernel %s %s by compile worker %s",
                   _key(request["module"], request["function"]), what, worker)
    with _lock:
        for asked in (request, *joined):
            group = _groups.get(asked.get("group"))
            if group is None:
                continue
            group.pending -= 1
            group.finished = time.perf_counter()
            if ok:
                group.kernels += 1
                group.from_disk += bool(cached)
            group._done_if_finished()


def compiled_here(module, function, is_kernel, seconds):
    """numba compiled ``module.function`` (a kernel, or a helper kernels call) in this
    process: in the time of the user's call that caused it, if any."""
    LOGGER.log(_compile_level(), "%s %s compiled in %.2f s in this process",
               "kernel" if is_kernel else "helper", _key(module, function), seconds)
    group = getattr(_state, "group", None)
    if group is None:
        return
    with _lock:
        now = time.perf_counter()
        group.started = now - seconds if group.started is None else group.started
        group.finished = now if group.finished is None else max(group.finished, now)
        if is_kernel:
            group.kernels += 1
        else:
            group.helpers += 1


def _key(module, function):
    """A kernel's key (its module's name less the prefix every kernel module has, as
    ``Plan.as_text`` prints it), or a helper's qualified name."""
    if module.startswith(KERNEL_MODULE_PREFIX):
        return module[len(KERNEL_MODULE_PREFIX):] + ("" if function == "kernel"
                                                      else f".{function}")
    return f"{module}.{function}"
