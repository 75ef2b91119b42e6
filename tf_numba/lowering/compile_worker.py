"""A compile worker: a Python process running ``main`` (started by
``compile_service``). Reads ``(job id, request)`` messages from stdin until it closes,
compiles each kernel, writes ``(job id, status, payload or message, cached, seconds)``.

A request says where the kernel's module is (its file in the kernel cache, else its text),
the function's name, the ``numba.njit`` options and the argument types. The reply's payload
is numba's own serialized compile result (what its disk cache stores), which the user's
process rebuilds (``Kernel.install``).
"""
import contextlib
import functools
import os
import select
import sys
import time

from .compile_service import read_message, write_message

IDLE_SECONDS = float(os.environ.get("TF_NUMBA_WORKER_IDLE_SECONDS", "60"))
_CAN_SELECT_PIPES = os.name != "nt"    # Windows selects only sockets: no idle exit there


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
        with _compiling_alone(request["path"], signature, dispatcher):
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
def _compiling_alone(path, signature, dispatcher):
    """Hold the kernel's compile lock (a file beside it, per signature) while compiling,
    or, when another process's worker holds it, wait for that compile to land in numba's
    disk cache and let ``dispatcher.compile`` load it from there: two scripts that need
    the same kernel (a rerun while the first run's compile is in flight) compile it once.
    Without a disk cache there is nothing to share."""
    if path is None:
        yield
        return
    from .kernel_cache import compile_lock
    lock = compile_lock(path, signature)
    while True:
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            if not _wait_for_other_compile(lock, signature, dispatcher):
                continue                # the other compile ended without a result: ours
            yield                       # it is in the disk cache now: compile() loads it
            return
        except OSError:                 # a directory that takes no lock file
            yield
            return
    try:
        yield
    finally:
        try:
            os.unlink(lock)
        except OSError:
            pass


def _wait_for_other_compile(lock, signature, dispatcher):
    """True once numba's disk cache holds the kernel another worker was compiling; False
    when that worker's lock went away (or went stale) without it."""
    from . import kernel_cache
    while True:
        try:
            age = time.time() - os.stat(lock).st_mtime
        except FileNotFoundError:
            age = None
        if dispatcher._cache.load_overload(signature, dispatcher.targetctx) is not None:
            return True
        if age is None:
            return False
        if age > kernel_cache.STALE_LOCK_SECONDS:
            try:
                os.unlink(lock)
            except OSError:
                pass
            return False
        time.sleep(0.05)


def main():
    try:
        os.nice(10)         # the user's interpreted steps come first on a busy machine
    except (AttributeError, OSError):
        pass
    # unbuffered, so that select() sees every byte not yet read
    stdin, stdout = open(sys.stdin.fileno(), "rb", buffering=0), sys.stdout.buffer
    sys.stdout = sys.stderr          # nothing printed may reach the reply pipe
    import numba
    from . import kernel_cache  # noqa: F401  (its compile listener sets SLP per kernel)
    numba.njit(lambda x: x + 1)(1)   # numba's one-time start, before the first job
    while True:
        # an idle worker leaves (its memory is ~200 MB); the service starts another when
        # a job comes
        if _CAN_SELECT_PIPES:
            ready, _, _ = select.select([stdin], [], [], IDLE_SECONDS)
            if not ready:
                break
        message = read_message(stdin)
        if message is None:
            break
        job_id, request = message
        started = time.perf_counter()
        try:
            payload, cached = compile_request(request)
            reply = (job_id, "ok", payload, cached, time.perf_counter() - started)
        except Exception as err:     # reported to the caller, which keeps interpreting
            reply = (job_id, "error", f"{type(err).__name__}: {err}", False,
                     time.perf_counter() - started)
        try:
            write_message(stdout, reply)
        except (BrokenPipeError, OSError):
            # the user's process has ended: the kernel is in the disk cache all the same,
            # and the jobs it sent before it ended still are to be compiled
            pass


