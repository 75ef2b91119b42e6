"""A compile worker: a Python process running ``main`` (started by
``compile_service``). Reads ``(tag, request)`` messages from stdin until it closes,
compiles each kernel, writes ``(tag, status, payload or message, cached, seconds)``.

A request says where the kernel's module is (its file in the kernel cache, else its text),
the function's name, the ``numba.njit`` options and the argument types. The reply's payload
is numba's own serialized compile result (what its disk cache stores), which the user's
process rebuilds (``Kernel.install``).
"""
import contextlib
import functools
import os
import sys
import threading
import time

from .compile_service import read_message, write_message


@functools.cache
def _module(name, path, text):
    """The kernel's module, imported once per worker (``kernel_cache.load_module``)."""
    from .kernel_cache import load_module
    return load_module(name, path, text)


# (module, function, njit options) -> the dispatcher compiling it in this worker
_DISPATCHERS = {}


def compile_request(request):
    """(payload, cached): compile the request's kernel for its signature."""
    import numba
    from numba.core import serialize
    module = _module(request["module"], request["path"], request["text"])
    signature = tuple(request["signature"])
    options = dict(request["options"])
    key = (request["module"], request["function"], tuple(sorted(options.items())))
    dispatcher = _DISPATCHERS.get(key)
    if dispatcher is None:
        dispatcher = _DISPATCHERS[key] = numba.njit(**options)(
            getattr(module, request["function"]))
    try:
        with _compiling_alone(request["path"], signature):
            dispatcher.compile(signature)
    except OSError:
        # the cache directory cannot take the entry (full, read-only): compile in memory;
        # the result still reaches the user's process through the pipe
        options["cache"] = False
        dispatcher = _DISPATCHERS[key] = numba.njit(**options)(
            getattr(module, request["function"]))
        dispatcher.compile(signature)
    if options.get("cache") and dispatcher.stats.cache_hits.get(signature):
        # numba's disk cache had it (another process compiled it): the user's process
        # loads it from there too (a result loaded from disk has no object code to send)
        return None, True
    cres = dispatcher.overloads[signature]
    return serialize.dumps(cres._reduce()), False


@contextlib.contextmanager
def _compiling_alone(path, signature):
    """Hold the kernel's compile lock (``kernel_cache.compile_lock``) while compiling. When
    another process's worker holds it, wait for it: its result is then in numba's disk cache,
    from which ``dispatcher.compile`` loads it, so two scripts that need the same kernel (a
    rerun while the first run's compile is in flight) compile it once. The lock is the
    operating system's, so a worker that is killed releases it. Without a disk cache there
    is nothing to share."""
    if path is None:
        yield
        return
    from .kernel_cache import compile_lock, holding_lock
    with holding_lock(compile_lock(path, signature)):
        yield


def _die_with_parent():
    """End this worker when the user's process ends, even when that process is killed
    and runs no exit handler: on Linux the kernel sends SIGKILL when the thread that started
    this process ends (armed before this process ran any Python,
    ``compile_service._armed_at_start``); elsewhere a thread watches the parent's id. Not
    when the user has asked for compiles to finish after exit
    (``compile_service.compiles_after_exit``)."""
    from .compile_service import PARENT_ENV, compiles_after_exit, parent_death_signal
    if compiles_after_exit():
        return
    parent = int(os.environ.get(PARENT_ENV, os.getppid()))
    arm = parent_death_signal()
    if arm is None or not arm():
        def watch():
            while os.getppid() == parent:
                time.sleep(0.25)
            os._exit(0)
        threading.Thread(target=watch, daemon=True, name="tf_numba-parent-watch").start()
    if os.getppid() != parent:       # it ended before the signal was armed
        os._exit(0)


def _without_f2py():
    """Stand an empty module in for ``numpy.f2py`` in this worker. numba's first compile
    imports SciPy's BLAS bindings, whose ``scipy._lib.array_api_compat`` copies every
    attribute of NumPy, importing its lazy ``f2py`` (Fortran wrapping, and through it
    ``charset_normalizer``): ~0.08 s of a worker's start, before its first kernel, for a
    module no kernel uses. Set as NumPy's attribute too, so NumPy's lazy ``__getattr__``
    is not asked for it."""
    import types

    import numpy
    if "numpy.f2py" not in sys.modules:
        sys.modules["numpy.f2py"] = numpy.f2py = types.ModuleType("numpy.f2py")


def main():
    _die_with_parent()
    try:
        os.nice(10)         # the user's interpreted steps come first on a busy machine
    except (AttributeError, OSError):
        pass
    stdin, stdout = open(sys.stdin.fileno(), "rb", buffering=0), sys.stdout.buffer
    sys.stdout = sys.stderr          # nothing printed may reach the reply pipe
    _without_f2py()
    import numba
    from . import kernel_cache  # noqa: F401  (its compile listener sets SLP per kernel)
    numba.njit(lambda x: x + 1)(1)   # numba's one-time start, before the first job
    while True:
        # one job at a time: the service sends the next only after this reply; its end of
        # stdin closes when the worker is to leave (idle) or the user's process has ended
        message = read_message(stdin)
        if message is None:
            break
        job_id, request = message
        started = time.perf_counter()
        try:
            payload, cached = compile_request(request)
            reply = (job_id, "ok", payload, cached)
        except Exception as err:     # reported to the caller, which keeps interpreting
            reply = (job_id, "error", f"{type(err).__name__}: {err}", False)
        try:
            write_message(stdout, reply + (time.perf_counter() - started,))
        except (BrokenPipeError, OSError):
            # the user's process has ended (with TF_NUMBA_COMPILE_AFTER_EXIT): the kernel
            # is in the disk cache all the same
            break


