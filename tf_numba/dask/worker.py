"""What runs on a Dask worker: shipped programs, the worker's own Runtime, one block's run.

A task carries a ``ShippedProgram`` (a fingerprint and the program's pickled bytes,
``core/serialize.py``), which a worker process decodes once and keeps by fingerprint, and
prepares through its own ``Runtime`` on one ``CpuEngine`` thread (Dask runs one task per
worker thread; the kernel cache is the worker's, on its disk, shared by workers that
share ``TF_NUMBA_CACHE_DIR``, and in memory if that directory is unusable).
"""
import collections
import pickle
import threading

import numpy as np

from ..errors import ShapeError, TfIndexError, UnsupportedError
from ..runtime import CpuEngine, Runtime

ENGINE = CpuEngine(threads=1)
RECEIVED_MAX = 256          # decoded programs a process keeps (a training run has a few)


class ShippedProgram:
    """A program as tasks carry it: pickled once where it was traced, decoded once per
    worker process (by fingerprint), checked to hash the same where it lands.

    >>> shipped = ShippedProgram(tf.make_program(f)(tf.symbolic(("n",))))
    >>> run_block(shipped, "block (0,)", np.ones(5))
    """
    __slots__ = ("fingerprint", "blob", "_program")

    def __init__(self, program):
        self._program = program
        self.fingerprint = program.fingerprint()
        self.blob = pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL)

    @property
    def program(self):
        return self._program

    def __reduce__(self):
        return receive, (self.fingerprint, self.blob)

    def __repr__(self):
        return f"ShippedProgram({self.fingerprint[:12]}, {len(self.blob)} bytes)"


_received = collections.OrderedDict()
_received_lock = threading.Lock()


def receive(fingerprint, blob):
    """The ShippedProgram for ``fingerprint``, decoding ``blob`` only the first time.

    Kept by the blob too: equal programs from different lines of the user's code share a
    fingerprint, and each names its own lines in errors."""
    key = (fingerprint, blob)
    with _received_lock:
        found = _received.get(key)
        if found is not None:
            _received.move_to_end(key)
            return found
    program = pickle.loads(blob)
    if program.fingerprint() != fingerprint:
        raise UnsupportedError(
            f"a shipped program unpickled into fingerprint {program.fingerprint()[:12]}, "
            f"not {fingerprint[:12]}: the sending and receiving processes run different "
            "tf_numba versions; install the same one on the workers")
    shipped = object.__new__(ShippedProgram)
    shipped.fingerprint, shipped.blob, shipped._program = fingerprint, blob, program
    with _received_lock:
        _received[key] = shipped
        while len(_received) > RECEIVED_MAX:
            _received.popitem(last=False)
    return shipped


_runtime = None
_runtime_lock = threading.Lock()


def worker_runtime():
    """This process's Runtime for shipped programs (tiered like ``jit``: the first blocks
    of a new program run on the NumPy interpreter while numba compiles, unless
    ``TF_NUMBA_TIERED=0``)."""
    global _runtime
    if _runtime is None:
        from ..lowering.plan import tiered_default
        with _runtime_lock:
            if _runtime is None:
                _runtime = Runtime(tiered=tiered_default(), plan_cache_entries=1024,
                                   plan_cache_bytes=256 << 20)
    return _runtime


_prepared = {}      # (fingerprint, source key) -> Prepared, for this process's runtime


def run_block(shipped, block, *inputs):
    """Run ``shipped`` on one block's inputs; ``block`` names the block in errors.

    A program is prepared once per process; ``Runtime.run`` checks each new block
    signature against it (shapes and guards), so later blocks skip ``prepare``."""
    rt, inputs = worker_runtime(), list(inputs)
    key = (shipped.fingerprint, shipped.program.source_key())   # as Runtime.prepare's
    try:
        prepared = _prepared.get(key)
        if prepared is None:
            prepared = rt.prepare(shipped.program, inputs, [ENGINE.target()])
            if len(_prepared) >= RECEIVED_MAX:
                _prepared.clear()
            _prepared[key] = prepared
        return rt.run([ENGINE], prepared, inputs)
    except (ShapeError, TfIndexError) as err:     # a guard, or an index found as it runs
        raise block_error(err, block) from None


def run_block_single(shipped, block, *inputs):
    """``run_block`` of a one-output program: the output itself, not a list."""
    return run_block(shipped, block, *inputs)[0]


def run_block_weighted(shipped, block, weight, *inputs):
    """``run_block`` with every output scaled by ``weight`` (a block's share of a mean);
    a weight of 1 (a sum) leaves the bits as they are."""
    outs = run_block(shipped, block, *inputs)
    if weight == 1:
        return outs
    return [np.multiply(o, np.asarray(weight, o.dtype)) for o in outs]


def add_parts(*parts):
    """The leaf-wise sum of several lists of arrays (one step of a tree reduction)."""
    total = list(parts[0])
    for part in parts[1:]:
        total = [np.add(a, b) for a, b in zip(total, part)]
    return total


def block_error(err, block):
    """``err`` (a ShapeError from preparing, a TfIndexError from running) as the same
    error, naming the block."""
    return type(err)(f"{block}: {err.detail}", op=err.op, source=err.source)
