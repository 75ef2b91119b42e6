"""Engines: values the caller owns that say where and how wide a plan runs.

A plan is prepared for an engine's ``target()`` (id and kind only), so engines of the same
kind and different thread counts share prepared plans; the width is bound at ``run``.
"""


class EngineTarget(tuple):
    """(id, kind) of an engine: what a prepared plan is specialized for."""
    __slots__ = ()

    def __new__(cls, id, kind):
        return super().__new__(cls, (id, kind))

    id = property(lambda self: self[0])
    kind = property(lambda self: self[1])

    def __repr__(self):
        return f"EngineTarget(id={self[0]!r}, kind={self[1]!r})"


class CpuEngine:
    """The CPU engine. ``threads`` is the width the caller allows (default: 1).

    Generated kernels run on the calling thread. With ``threads`` > 1 a plan runs its
    parallel variant, whose loops over large iteration spaces are ``numba.prange`` loops
    using that many threads for the duration of the run (capped at numba's
    ``NUMBA_NUM_THREADS``), and the BLAS the kernels and the linalg family call runs
    that wide too (``lowering/blas_threads``: two BLAS thread pools spinning on the same
    cores slowed a NumPy-plus-jit loop 3-30x).
    """

    TARGET = EngineTarget("cpu:0", "cpu")

    def __init__(self, threads=1):
        if int(threads) < 1:
            raise ValueError(f"CpuEngine needs threads >= 1, got {threads}")
        self.threads = int(threads)

    def target(self):
        return self.TARGET

    def __repr__(self):
        return f"CpuEngine(threads={self.threads})"
