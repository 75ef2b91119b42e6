"""A program prepared for execution: compiled segments and, between them, NumPy steps.

Consecutive equations that can be lowered form one segment, compiled into one numba kernel
(one crossing from Python into compiled code). An equation with no lowering for its
dtypes runs its NumPy impl between segments. In the common case the whole program is one
kernel and ``run`` is a single call.
"""
import contextlib
import os
import sys
import threading

import numba
from numba.np.ufunc.parallel import _launch_threads as launch_threads

from ..core.interpreter import eval_program
from ..core.ir import Literal, Program, Var
from ..core.symbolic import bind_dims, is_symbolic, specialize, substitute
from ..core.primitive import RULES
from ..ext import HOST_BLAS, NUMPY_BLAS, SCIPY_BLAS
from . import library  # (registers the lowering rules; folds transposed operands)
from . import control  # (and those of the loops and branches)
from . import blas_threads, numpy_blas
from .codegen import generate
from .native import calling
from .kernel_cache import KERNELS
from .workspace import Workspaces
from .partition import REDUCTIONS
from .scalar_exprs import is_elementwise, supports_dtype


def lowerable(eqn):
    if is_elementwise(eqn) or eqn.prim.name in REDUCTIONS or eqn.prim.name == "broadcast_in_dim":
        return supports_dtype(eqn)
    return eqn.prim in RULES["lower"] and library.supported(eqn)


class CompiledSegment:
    """One kernel: converts rank-0 inputs to scalars and rank-0 outputs back to NumPy."""

    def __init__(self, program, kernel_cache, parallel=False, products_on_numpy=True):
        self.program = program
        self.source, self.steps = generate(program, parallel=parallel,
                                           products_on_numpy=products_on_numpy)
        self.kernel = kernel_cache.get(self.source)
        self.cache = kernel_cache
        self.const_values = [c for _, c in program.consts]
        self.scalar_in = [(i, v.aval.dtype.type) for i, v in enumerate(program.invars)
                          if not v.aval.shape]
        self.scalar_out = [(i, v.aval.dtype.type) for i, v in enumerate(program.outvars)
                           if not v.aval.shape]
        # nothing to convert on the way in or out: call the kernel directly
        self.plain = not (self.scalar_in or self.const_values or self.scalar_out)
        self.bare = len(program.outvars) == 1      # the kernel returns its one output bare
        # the kernel takes its private intermediates from a workspace (its last parameter)
        self.workspaces = Workspaces() if self.source.split(":", 1)[0].endswith("ws)") else None
        self.plain = self.plain and self.workspaces is None
        self.first = True

    def __call__(self, args):
        """Outputs for ``args`` (a list this call may modify)."""
        if self.first:
            return self._convert(self._prepare_args(args), first=True)
        if self.plain:
            out = self.kernel.dispatcher(*args)
            return (out,) if self.bare else out
        return self._convert(self._prepare_args(args))

    def _prepare_args(self, args):
        for i, t in self.scalar_in:
            args[i] = t(args[i])
        if self.const_values:
            args = list(args) + self.const_values
        return args

    def _convert(self, args, first=False):
        workspaces = self.workspaces
        if workspaces is not None:
            ws = workspaces.acquire()
            args = list(args) + [ws]
        if first:
            outs = self.cache.call_first(self.kernel, args)
            self.first = False
        else:
            outs = self.kernel.dispatcher(*args)
        if workspaces is not None:
            workspaces.release(ws)
        if self.bare:
            outs = (outs,)
        if self.scalar_out:
            outs = list(outs)
            for i, t in self.scalar_out:
                outs[i] = t(outs[i])
        return outs


class InterpretedStep:
    def __init__(self, eqn):
        self.eqn = eqn


def tiered_default():
    """Tiered execution unless ``TF_NUMBA_TIERED=0``."""
    return os.environ.get("TF_NUMBA_TIERED", "1").lower() not in ("0", "false", "off", "no")


class Plan:
    """``run(args) -> outputs`` for a flat program; ``as_text()`` shows how it was lowered.

    Tiered: until its kernels are compiled (in a background thread, started by the first
    run), a plan answers with the NumPy interpreter, so a first call costs milliseconds,
    not the seconds numba needs to compile in a fresh process. ``compile()`` waits.
    """

    def __init__(self, program, kernel_cache=KERNELS, tiered=None, parallel=False):
        self.program = program
        self.segments = []
        self.kernel_cache = kernel_cache
        self._wide_variant = self if parallel else None     # see variant_for
        self._build(program, kernel_cache, parallel)
        self.tiered = tiered_default() if tiered is None else tiered
        self.symbolic = is_symbolic(program)
        self.ready = False
        self._compiling = None
        self._lock = threading.Lock()

    def _build(self, program, kernel_cache, parallel):
        program = library.fold_transposed_operands(
            control.hoist_step_independent_work(program))
        groups, current = [], []
        for eqn in program.eqns:
            if lowerable(eqn):
                current.append(eqn)
            else:
                if current:
                    groups.append(current)
                    current = []
                groups.append(eqn)
        if current:
            groups.append(current)
        uses_after = _uses_after(program, groups)
        # host steps' LAPACK runs on NumPy's BLAS or SciPy's (numba's): keep the plan's
        # products on the same one, so one library (run as wide as the engine) does all of
        # its BLAS work
        lapack = _lapack_libraries(groups)
        const_vars = {v for v, _ in program.consts}
        self.consts = dict(program.consts)
        for g, group in enumerate(groups):
            if not isinstance(group, list):
                self.segments.append(InterpretedStep(group))
                continue
            defined = {v for e in group for v in e.outvars}
            ins, seen = [], set()
            for e in group:
                for v in e.invars:
                    if type(v) is Var and v not in defined and v not in seen:
                        seen.add(v)
                        ins.append(v)
            outs = [v for e in group for v in e.outvars if v in uses_after[g]]
            seg_consts = [(v, self.consts[v]) for v in ins if v in const_vars]
            if len(groups) == 1:
                # the whole program is one kernel: take the program's inputs as they are,
                # so run() can hand its arguments straight to it
                seg_ins, outs = list(program.invars), list(program.outvars)
            else:
                seg_ins = [v for v in ins if v not in const_vars]
            sub = Program(seg_ins, seg_consts, group, outs)
            self.segments.append(CompiledSegment(
                sub, kernel_cache, parallel,
                products_on_numpy=SCIPY_BLAS not in lapack and numpy_blas.AVAILABLE))
        # a kernel with a numba.prange region runs as wide as the caller's engine allows,
        # and so do BLAS and LAPACK calls (blas_threads)
        self.parallel = any(type(seg) is CompiledSegment and "numba.prange(" in seg.source
                            for seg in self.segments)
        self.blas_use = _blas_libraries(self.segments, lapack)  # numba's, NumPy's, LAPACK's
        self._blas = None                                   # their setters, found on use
        self.single = (len(self.segments) == 1 and type(self.segments[0]) is CompiledSegment
                       and list(self.segments[0].program.invars) == list(program.invars)
                       and list(self.segments[0].program.outvars) == list(program.outvars))

    def run(self, args, threads=1):
        """Outputs for ``args`` with at most ``threads`` threads (the caller's
        ``CpuEngine.threads``). One thread runs this plan's serial kernels; more run a
        variant whose large regions are prange loops, built on first use (a parallel
        kernel on one thread is ~10% slower, and OpenMP's idle workers spin)."""
        plan = self.variant_for(threads)
        if plan.parallel:               # (never a plan that calls BLAS: see variant_for)
            return _run_with_width(plan._run, args, threads)
        if plan.ready and plan.blas:     # (runs before that are interpreted or compiling)
            return _run_with_blas(plan.blas, plan._run, args, threads)
        return plan._run(args)

    def runner(self, threads):
        """A function equal to ``lambda args: self.run(args, threads)`` with the choices
        ``run`` makes on every call made once: for a compiled one-kernel plan that runs
        serially, the kernel's call with the BLAS width set around it (~2 us less a call:
        a tenth of a 256 x 256 gradient); for a one-kernel parallel variant, the kernel's
        call with numba's thread count set around it. ``args`` may be modified."""
        plan = self.variant_for(threads)
        if not (plan.ready and plan.single):
            return lambda args: self.run(args, threads)
        segment, blas = plan.segments[0], plan.blas
        if plan.parallel:
            return lambda args: _run_with_width(segment, args, threads)
        if not blas:
            return segment
        return lambda args: _run_with_blas(blas, segment, args, threads)

    @property
    def blas(self):
        """Setters of the BLAS libraries this plan's steps call (empty if none)."""
        if self._blas is None:
            numba_blas, numpy_blas, lapack = self.blas_use
            # the first runs as wide as the engine, the other on one thread: LAPACK's
            # library where the plan calls LAPACK, else NumPy's, which has the large products
            self._blas = blas_threads.setters(numba_blas, numpy_blas,
                                              first_numpy=lapack != SCIPY_BLAS)
        return self._blas

    def variant_for(self, threads):
        """The plan that runs with ``threads``: this one on one thread or when it calls
        BLAS (which then runs that wide), else the variant of the same program whose large
        regions are prange loops (built on first use), when it has any."""
        if threads <= 1 or any(self.blas_use):
            # BLAS gets the width instead: OpenMP's workers spin after a prange loop and
            # OpenBLAS's after a call, so both pools wide on two cores took a 784-256-10
            # MLP step from 1.2 ms to 16 ms
            return self
        wide = self._wide_variant
        if wide is None:
            with self._lock:
                if self._wide_variant is None:
                    self._wide_variant = Plan(self.program, self.kernel_cache, self.tiered,
                                              parallel=True)
                wide = self._wide_variant
        return wide if wide.parallel else self

    def _run(self, args):
        if self.ready:
            if self.single:
                return self.segments[0](args if self.segments[0].plain else list(args))
            return self._run_segments(args)
        if not self.tiered or self._kernels_loaded():
            outs = self._run_segments(args)
            self.ready = True
            return outs
        with self._lock:
            if self._compiling is None:
                self._compiling = threading.Thread(target=self._compile_in_background,
                                                   args=(list(args),), daemon=True,
                                                   name="tf_numba-compile")
                self._compiling.start()
        return self.interpret(args)

    def _kernels_loaded(self):
        """Every kernel already compiled in this process (another plan shares them)."""
        return all(seg.kernel.dispatcher.overloads for seg in self.segments
                   if type(seg) is CompiledSegment)

    def interpret(self, args):
        """Run the program op by op on NumPy (specialized first if its dims are symbolic)."""
        program = self.program
        if self.symbolic:
            program = specialize(program, bind_dims(program, args))
        return eval_program(program, list(args))

    def _compile_in_background(self, args):
        try:
            self._run_segments(args)
            self.ready = True
        except Exception as err:  # the interpreter keeps answering correctly
            print(f"tf_numba: compiling a kernel failed, running interpreted: {err!r}",
                  file=sys.stderr)

    def compile(self):
        """Compile now (or wait for the background compile); needs one ``run`` first
        when tiered, since kernels are typed from real arguments."""
        thread = self._compiling
        if thread is not None:
            thread.join()
        return self

    def _run_segments(self, args):
        if self.single:
            return self.segments[0](list(args))
        env = dict(zip(self.program.invars, args))
        env.update(self.consts)
        dims = bind_dims(self.program, args) if self.symbolic else None
        for seg in self.segments:
            if type(seg) is InterpretedStep:
                eqn = seg.eqn
                params = eqn.params if dims is None else substitute(eqn.params, dims)
                out = eqn.prim.impl(*[_read(env, v) for v in eqn.invars], **params)
                env.update(zip(eqn.outvars, out if eqn.prim.multiple_results else [out]))
            else:
                sub = seg.program
                outs = seg([env[v] for v in sub.invars])
                env.update(zip(sub.outvars, outs))
        return [_read(env, v) for v in self.program.outvars]

    def as_text(self):
        parts = [f"program ({len(self.program.eqns)} equations):", str(self.program), ""]
        for k, seg in enumerate(self.segments):
            if type(seg) is InterpretedStep:
                parts.append(f"# segment {k}: NumPy step for {seg.eqn.prim.name} "
                             "(no compiled lowering for these operands)")
            else:
                parts.append(f"# segment {k}: kernel {seg.kernel.key} "
                             f"({', '.join(map(repr, seg.steps))})")
                parts.append(seg.source)
        return "\n".join(parts)


# numba's fallback threading layer (workqueue, used where neither OpenMP nor TBB is
# installed) aborts the process when two threads launch parallel regions at once: runs of
# parallel plans are serialized while the layer is unknown or workqueue.
_WORKQUEUE_LOCK = threading.Lock()


def _concurrent_launches_safe():
    try:
        return numba.threading_layer() != "workqueue"
    except ValueError:          # no parallel region has run yet in this process
        return False


# numba registers these two symbols with LLVM when it starts its threads
_get_thread_count = calling("get_num_threads", "int", ())
_set_thread_count = calling("set_num_threads", "void", ("int",))


def _swap_thread_count(threads):
    """Set numba's thread count for this thread; returns the count before. Compiled: 0.3
    us, where Python's numba.get_num_threads and set_num_threads cost 1-2 us each (a
    parallel softmax cross-entropy over 128 x 1000 paid 5.8 us a run, a tenth)."""
    before = _get_thread_count()
    _set_thread_count(threads)
    return before


def _thread_count_setter():
    """``_swap_thread_count`` compiled, after numba has started its threads (which
    registers the symbols it calls; numba's check takes two locks, ~3 us, so it is made
    once). Made on first use: a dispatcher made at import costs ``import tf_numba``
    0.4 ms, and the first of a process 9 ms more (``deferred``)."""
    if not _THREAD_COUNT_SETTER:
        launch_threads()
        _THREAD_COUNT_SETTER.append(numba.njit(cache=True, nogil=True)(_swap_thread_count))
    return _THREAD_COUNT_SETTER[0]


_THREAD_COUNT_SETTER = []


def _run_with_width(run, args, threads):
    """``run(args)`` on ``threads`` of numba's threads (this thread's count, restored after)."""
    threads = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    swap = _thread_count_setter()
    with _NO_LOCK if _concurrent_launches_safe() else _WORKQUEUE_LOCK:
        before = swap(threads)
        try:
            return run(args)
        finally:
            swap(before)


_NO_LOCK = contextlib.nullcontext()


def _run_with_blas(blas, run, args, threads):
    """``run(args)`` with the BLAS libraries ``blas`` (setters) as wide as ``threads``
    (``blas_threads.set_width``), restored after."""
    before = blas_threads.set_width(blas, threads)
    try:
        return run(args)
    finally:
        blas_threads.restore(blas, before)


def _lapack_libraries(groups):
    """The BLAS libraries the plan's host steps call (``ext.HOST_BLAS``)."""
    return frozenset(HOST_BLAS[g.prim] for g in groups
                     if not isinstance(g, list) and g.prim in HOST_BLAS)


def _blas_libraries(segments, lapack):
    """(numba's BLAS, NumPy's BLAS, LAPACK's): which of the two BLAS libraries a plan's
    steps may call, and which one runs its host steps' LAPACK (SciPy's where any does,
    else NumPy's; None without LAPACK). Products go to NumPy's (``loops.gemm_into``) unless
    LAPACK runs on SciPy's, numba's (``loops.dot_into``)."""
    sources = [seg.source for seg in segments if type(seg) is CompiledSegment]
    wide = next((lib for lib in (SCIPY_BLAS, NUMPY_BLAS) if lib in lapack), None)
    return (SCIPY_BLAS in lapack or any("loops.dot_into(" in s for s in sources),
            NUMPY_BLAS in lapack or any("loops.gemm_into(" in s for s in sources), wide)


def _read(env, v):
    return v.value if type(v) is Literal else env[v]


def _uses_after(program, groups):
    """For each group index, the vars it defines that something after it needs."""
    needed = {v for v in program.outvars if type(v) is Var}
    result = [None] * len(groups)
    for g in range(len(groups) - 1, -1, -1):
        group = groups[g] if isinstance(groups[g], list) else [groups[g]]
        result[g] = set(needed)
        for e in group:
            needed.update(v for v in e.invars if type(v) is Var)
    return result
