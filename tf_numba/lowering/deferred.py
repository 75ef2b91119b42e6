"""numba dispatchers of a helper module made when the module's attribute is first read,
not at import.

numba makes a dispatcher in ~0.4 ms, and the first one of a process ~9 ms more (its CPU
target): the 23 helpers of ``loops``, ``vreduce`` and ``workspace`` cost ``import
tf_numba`` ~15 ms, while a tiered first call runs the NumPy interpreter and needs none of
them. A module defines its helpers under ``@jit(...)`` and calls ``finish(globals())`` at
its end: the helpers' names then leave the module's namespace and its ``__getattr__``
makes all of them at the first read of any (so a helper calling another finds it when
numba compiles it). Generated kernels read them as module attributes, ``loops.matvec``.
"""
import threading

import numba


class DeferredJit:
    """``@deferred(**numba.njit options)`` marks a helper; ``deferred.finish(globals())``
    at the module's end defers them all. ``made()``, when given, runs once the helpers
    exist, before anything can call them."""

    def __init__(self, made=None):
        self.pending = {}
        self.made = made
        self.lock = threading.Lock()

    def __call__(self, **options):
        def mark(fn):
            self.pending[fn.__name__] = (fn, options)
            return fn
        return mark

    def finish(self, namespace):
        for name in self.pending:
            del namespace[name]

        def __getattr__(name):
            with self.lock:
                if name in self.pending:    # (the import system asks for __path__ & co.)
                    for helper, (fn, options) in self.pending.items():
                        namespace[helper] = numba.njit(**options)(fn)
                    self.pending.clear()
                    if self.made is not None:
                        self.made()
            if name in namespace:
                return namespace[name]
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        namespace["__getattr__"] = __getattr__
