"""``Runtime``: an immutable configuration snapshot, an epoch, and the prepared-plan cache.

``prepare(program, inputs, targets)`` checks the inputs (count, dtype, rank, symbolic dims
and guards), and returns the cached ``Prepared`` plan for the key (program fingerprint,
runtime, epoch, targets, compiler options, input signature projection) or lowers a new
one. ``run(engines, prepared, inputs)`` binds engines and executes; it re-checks the input
signature only when it differs from the last one it accepted.
"""
import dataclasses
import itertools
import threading

import numpy as np

from ..core.symbolic import bind_dims
from ..errors import (ConcurrentReconfiguration, EmptyTargets, EngineMismatch, ForeignPrepared,
                      NoEngineForTarget, SpecializationMismatch, StalePrepared,
                      UnboundPlaceholder)
from ..lowering.plan import Plan


@dataclasses.dataclass(frozen=True)
class RuntimeConfig:
    """What a runtime prepares with. Changing it (``reconfigure``) starts a new epoch."""
    plan_cache_entries: int = 128
    plan_cache_bytes: int = 64 << 20
    fastmath: bool = False
    tiered: bool = False
    regions: object = None      # region kernels: True, False, or None (by program size)

    def compiler_options(self):
        return (("fastmath", self.fastmath), ("regions", self.regions))


class PlanEntry:
    """What the plan cache holds: the lowered plan and the input projection it serves."""
    __slots__ = ("plan", "projection", "nbytes", "last_signature")

    def __init__(self, plan, projection):
        self.plan = plan
        self.projection = projection
        self.nbytes = _plan_bytes(plan)
        self.last_signature = None


class Prepared:
    """A plan prepared by one runtime, in one epoch, for one list of engine targets,
    bound to the program it was asked for (whose input defaults ``run`` uses)."""
    __slots__ = ("entry", "program", "targets", "runtime_id", "epoch")

    def __init__(self, entry, program, targets, runtime_id, epoch):
        self.entry = entry
        self.program = program
        self.targets = targets
        self.runtime_id = runtime_id
        self.epoch = epoch

    @property
    def plan(self):
        return self.entry.plan

    def as_text(self):
        return self.entry.plan.as_text()

    def check(self, args):
        """SpecializationMismatch naming the first input and axis that differ."""
        for i, ((dtype, dims), x) in enumerate(zip(self.entry.projection, args)):
            x_dtype, shape = np.result_type(x), np.shape(x)
            if x_dtype != dtype:
                raise SpecializationMismatch(
                    f"input {i} was prepared as {dtype.name}, got {x_dtype.name}; prepare "
                    "again for these inputs")
            if len(shape) != len(dims):
                raise SpecializationMismatch(
                    f"input {i} was prepared with rank {len(dims)}, got rank {len(shape)} "
                    f"(shape {shape}); prepare again for these inputs")
            for axis, (d, n) in enumerate(zip(dims, shape)):
                if type(d) is int and d != n:
                    raise SpecializationMismatch(
                        f"input {i} axis {axis} was prepared as {d}, got {n}; prepare again "
                        "for these inputs")
        bind_dims(self.program, args)


def _plan_bytes(plan):
    size = 4096 + 256 * len(plan.program.eqns)
    for seg in plan.segments:
        size += len(getattr(seg, "source", ""))
    for _, c in plan.program.consts:
        size += np.asarray(c).nbytes
    return size


_runtime_ids = itertools.count(1)


class Runtime:
    """See the module docstring. Thread-safe; holds no engine."""

    def __init__(self, config=None, **overrides):
        from .plan_cache import PlanCache
        self.id = next(_runtime_ids)
        self._config = dataclasses.replace(config or RuntimeConfig(), **overrides)
        self._epoch = 0
        self._lock = threading.Lock()
        self.plans = PlanCache(self._config.plan_cache_entries, self._config.plan_cache_bytes)

    @property
    def config(self):
        return self._config

    @property
    def epoch(self):
        return self._epoch

    def reconfigure(self, base=None, **changes):
        """Publish a new configuration snapshot and start a new epoch.

        ``base``: the snapshot the caller read; if another thread reconfigured since,
        ``ConcurrentReconfiguration`` is raised and nothing changes.
        """
        with self._lock:
            if base is not None and base is not self._config:
                raise ConcurrentReconfiguration(
                    "the runtime was reconfigured since this snapshot was read; read "
                    "runtime.config again and retry")
            self._config = dataclasses.replace(self._config, **changes)
            self._epoch += 1
            # plans of older epochs can never hit again: free them now
            self.plans.clear()
            self.plans.resize(self._config.plan_cache_entries, self._config.plan_cache_bytes)
            return self._config

    # ---------------------------------------------------------------- inputs

    def bind_inputs(self, program, inputs):
        """Inputs in program order: [] uses every default; a full list replaces all; a
        shorter list fills, in order, only the inputs that have no default."""
        n = len(program.invars)
        defaults = program.input_defaults or (None,) * n
        inputs = list(inputs)
        if len(inputs) == n:
            return [_as_input(x) for x in inputs]
        missing = [i for i, d in enumerate(defaults) if d is None]
        if inputs and len(inputs) != len(missing):
            raise UnboundPlaceholder(
                f"got {len(inputs)} inputs; the program takes {n} (or {len(missing)} for the "
                f"inputs without defaults: {[_input_name(program, i) for i in missing]})")
        if not inputs and missing:
            raise UnboundPlaceholder(
                f"input {_input_name(program, missing[0])} has no value: it was not made "
                "from data, so pass it to prepare/run")
        filled = list(defaults)
        for i, x in zip(missing, inputs):
            filled[i] = x
        return [_as_input(x) for x in filled]

    # ---------------------------------------------------------------- prepare / run

    def prepare(self, program, inputs=(), targets=()):
        """The Prepared plan of ``program`` for these inputs and engine targets."""
        targets = tuple(targets)
        if not targets:
            raise EmptyTargets("needs at least one engine target, e.g. [CpuEngine().target()]",
                               op="Runtime.prepare")
        args = self.bind_inputs(program, inputs)
        bind_dims(program, args)            # shapes and guards, before anything runs
        config, epoch = self._config, self._epoch
        projection = tuple((v.aval.dtype, v.aval.shape) for v in program.invars)
        key = (program.fingerprint(), program.source_key(), self.id, epoch, targets,
               config.compiler_options(), _projection_key(projection))

        entry = self.plans.get_or_prepare(key, lambda: PlanEntry(
            Plan(program, tiered=config.tiered, regions=config.regions), projection))
        return Prepared(entry, program, targets, self.id, epoch)

    def _check_run(self, engines, prepared):
        if prepared.runtime_id != self.id:
            raise ForeignPrepared("this Prepared plan comes from another Runtime; prepare "
                                  "it with this runtime")
        if prepared.epoch != self._epoch:
            raise StalePrepared(f"this Prepared plan is from epoch {prepared.epoch}; the "
                                f"runtime was reconfigured (epoch {self._epoch}): prepare again")
        if len(engines) != len(prepared.targets):
            raise EngineMismatch(f"got {len(engines)} engines for {len(prepared.targets)} "
                                 "prepared targets; pass one engine per target, in order")
        for k, (engine, target) in enumerate(zip(engines, prepared.targets)):
            got = engine.target()
            if got != target:
                if target not in [e.target() for e in engines]:
                    raise NoEngineForTarget(f"no engine for prepared target {target!r}")
                raise EngineMismatch(f"engine {k} has target {got!r}, the plan was prepared "
                                     f"for {target!r} there; pass engines in target order")

    def run(self, engines, prepared, inputs=()):
        """Execute a Prepared plan; outputs are NumPy arrays (inputs passed through as-is)."""
        targets = prepared.targets
        if (prepared.runtime_id != self.id or prepared.epoch != self._epoch
                or len(engines) != len(targets)):
            self._check_run(engines, prepared)
        for engine, target in zip(engines, targets):
            if engine.target() != target:
                self._check_run(engines, prepared)
        program = prepared.program
        args = inputs
        signature = []
        for a in inputs:        # the common call: every input given as an ndarray
            if type(a) is not np.ndarray:
                signature = None
                break
            signature.append((a.dtype, a.shape))
        if signature is None or len(inputs) != len(program.invars):
            args = self.bind_inputs(program, inputs)
            signature = [(a.dtype, a.shape) for a in args]
        entry = prepared.entry
        if signature != entry.last_signature:
            prepared.check(args)
            entry.last_signature = signature
        return entry.plan.run(args, engines[0].threads)

    def warm_up(self, engines, prepared, inputs=()):
        """Run once and discard the outputs, paying first-run costs (compilation) now."""
        self.run(engines, prepared, inputs)
        prepared.plan.compile()

    def stats(self):
        return self.plans.stats()


def _as_input(x):
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x)


def _input_name(program, i):
    names = program.input_names
    return repr(names[i]) if names and names[i] else f"#{i}"


def _projection_key(projection):
    return tuple((dtype.str, tuple(d if type(d) is int else ("sym", repr(d)) for d in dims))
                 for dtype, dims in projection)


_DEFAULTS = {}
_DEFAULTS_LOCK = threading.Lock()


def default_runtime(tiered=None, regions=None):
    """The runtime ``jit`` prepares through (tiered unless ``TF_NUMBA_TIERED=0``; region
    kernels as ``regions`` says, by program size if None)."""
    from ..lowering.plan import tiered_default
    tiered = tiered_default() if tiered is None else bool(tiered)
    key = (tiered, regions)
    with _DEFAULTS_LOCK:
        if key not in _DEFAULTS:
            _DEFAULTS[key] = Runtime(tiered=tiered, regions=regions, plan_cache_entries=1024,
                                     plan_cache_bytes=256 << 20)
        return _DEFAULTS[key]
