"""A program prepared for execution: its segments, and the tier it runs on.

Consecutive equations that can be lowered form one segment, compiled into one numba kernel
(one crossing from Python into compiled code); an equation with no lowering for its
dtypes runs its NumPy impl between segments (``segments``). In the common case the whole
program is one kernel and ``run`` is a single call.

Tiers: a tiered plan (the default) answers with the NumPy interpreter until its kernels are
ready, then runs them. A kernel this process has is ready at once; one numba's disk cache
holds is loaded on a later call; the others are made by compile workers
(``compile_service``: other processes, so the interpreter keeps the GIL and the cores'
time to itself) while calls are interpreted. ``tiered=False`` (or ``TF_NUMBA_TIERED=0``)
compiles on the first call, in the caller's thread.
"""
import collections
import functools
import os
import threading
import time

import numpy as np

from ..core.interpreter import run_concrete
from ..core.ir import Eqn, Literal, Var
from ..ops import elementwise as ew
from ..ops import layout
from ..core.symbolic import bind_dims, is_symbolic, specialize, substitute
from ..ext import SCIPY_BLAS
from ..transforms.lowering_rewrites import prepare_for_lowering
from ..transforms.simplify import dead_code_elimination
from . import library  # noqa: F401  (registers the lowering rules)
from . import control  # noqa: F401  (and those of the loops and branches)
from . import blas_threads
from .products import products_on_numpy
from .compile_log import LOGGER
from .compile_service import SERVICE
from .kernel_cache import KERNELS, NUMBA_IMPORTS
from ..kernel_vocab.rules import lowerable
from .segments import (CompiledSegment, InterpretedStep, cut_large_groups, segment_program,
                       split, uses_after)
from .widths import blas_libraries, lapack_libraries, run_with_blas, run_with_width

__all__ = ["Plan", "lowerable", "tiered_default"]


def tiered_default():
    """Tiered execution unless ``TF_NUMBA_TIERED=0``."""
    return os.environ.get("TF_NUMBA_TIERED", "1").lower() not in ("0", "false", "off", "no")


class Plan:
    """``run(args) -> outputs`` for a flat program; ``as_text()`` shows how it was lowered."""

    def __init__(self, program, kernel_cache=KERNELS, tiered=None, parallel=False):
        self.program = program
        self.segments = []
        self.kernel_cache = kernel_cache
        self._wide_variant = self if parallel else None     # see variant_for
        self._build(program, kernel_cache, parallel)
        self.tiered = tiered_default() if tiered is None else tiered
        self.symbolic = is_symbolic(program)
        self.ready = False
        self._jobs = None            # [(segment, signature, Job)] sent to compile workers
        self._unsent = []            # [(segment, signature)] the service had no room for
        self._on_disk = []           # [(segment, signature)] for the next call to load
        self._elsewhere = []         # [(segment, signature)] another process is compiling
        self._interpreted_seconds = 0.0     # this plan's calls answered by the interpreter
        self._first_call = None             # when (time.perf_counter)
        self._interpreted = None     # the program as the interpreter runs it (interpret)
        self._gave_up = False        # a kernel failed to compile: stay interpreted
        self._lock = threading.Lock()

    def _build(self, program, kernel_cache, parallel):
        program = self.rewritten = prepare_for_lowering(program)
        groups = cut_large_groups(split(program))
        after = uses_after(program, groups)
        # host steps' LAPACK runs on NumPy's BLAS or SciPy's (numba's): keep the plan's
        # products on the same one, so one library (run as wide as the engine) does all of
        # its BLAS work
        lapack = lapack_libraries(groups)
        consts = dict(program.consts)
        self.consts = consts
        self._shared = _shared_outputs(self.program.outvars, consts)    # (_as_arrays)
        for g, group in enumerate(groups):
            if not isinstance(group, list):
                self.segments.append(InterpretedStep(group))
                continue
            self.segments.append(CompiledSegment(
                segment_program(program, groups, g, after, consts), kernel_cache, parallel,
                products_on_numpy=products_on_numpy(lapack)))
        kernels = [seg for seg in self.segments if type(seg) is CompiledSegment]
        # a kernel with a numba.prange region runs as wide as the caller's engine allows,
        # and so do BLAS and LAPACK calls (widths)
        self.parallel = any(seg.parallel for seg in kernels)
        self.serial_products = any(seg.serial_products for seg in kernels)
        self.blas_use = blas_libraries(frozenset().union(*(s.blas for s in kernels)), lapack)
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
        if plan.parallel:
            if not any(plan.blas_use):
                return run_with_width(plan._run, args, threads)
            if plan.ready or not plan.tiered:
                # each thread calls BLAS for its share of a product: BLAS on one thread
                return run_with_blas(plan.blas, lambda a: run_with_width(plan._run, a, threads),
                                     args, 1)
            return run_with_blas(_interpreter_blas(), plan._run, args, threads)
        if plan.ready or not plan.tiered:
            if plan.blas:
                return run_with_blas(plan.blas, plan._run, args, threads)
            return plan._run(args)
        if any(plan.blas_use):
            # interpreted: its products run on NumPy's BLAS, as wide as the engine
            return run_with_blas(_interpreter_blas(), plan._run, args, threads)
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
        if plan.parallel and blas:
            return lambda args: run_with_blas(
                blas, lambda a: run_with_width(segment, a, threads), args, 1)
        if plan.parallel:
            return lambda args: run_with_width(segment, args, threads)
        if not blas:
            return segment
        return lambda args: run_with_blas(blas, segment, args, threads)

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

    def waiting_runner(self, threads):
        """A function equal to ``lambda args: self.run(args, threads)`` for the calls made
        while this plan's kernels are in flight: while the plan runs itself with
        ``threads`` and waits on the compile jobs it sent and nothing else, it interprets
        at the engine's BLAS width without ``run``'s choices and ``_run_tiered``'s lock
        (~4 us a call, a sixth of an interpreted linear-regression step). Any other state
        (the first call, kernels arrived or on disk, compiled elsewhere) goes to ``run``."""
        def general(args):
            return self.run(args, threads)
        if not self.tiered or self.variant_for(threads) is not self or self.parallel:
            return general
        blas = _interpreter_blas() if any(self.blas_use) else None

        def run(args):
            jobs = self._jobs
            if (not jobs or self.ready or self._on_disk or self._elsewhere or self._unsent
                    or self._gave_up or _all_done(jobs)):
                return self.run(args, threads)
            started = time.perf_counter()
            if blas is None:
                return self._interpret_timed(args, started)
            return run_with_blas(blas, lambda a: self._interpret_timed(a, started), args,
                                 threads)
        return run

    def variant_for(self, threads):
        """The plan that runs with ``threads``: this one on one thread, else the variant
        of the same program whose large regions are prange loops (built on first use),
        when it has any. A plan that calls BLAS takes it only when the variant splits
        every large product across the threads (``library._product``) and the plan calls
        no LAPACK: BLAS then runs on one thread inside each. Otherwise BLAS gets the width
        instead: OpenMP's workers spin after a prange loop and OpenBLAS's after a call, so
        both pools wide on two cores took a 784-256-10 MLP step from 1.2 ms to 16 ms."""
        if threads <= 1 or self.blas_use[2] is not None:
            return self
        wide = self._wide_variant
        if wide is None:
            with self._lock:
                if self._wide_variant is None:
                    self._wide_variant = Plan(self.program, self.kernel_cache, self.tiered,
                                              parallel=True)
                wide = self._wide_variant
        return wide if wide.parallel and not wide.serial_products else self

    def _run(self, args):
        if self.ready:
            if self.single:
                return self.segments[0](args if self.segments[0].plain else list(args))
            return self._run_segments(args)
        if not self.tiered:
            outs = self._run_segments(args)      # compiles here, on the caller's thread
            self.ready = True
            return outs
        return self._run_tiered(args)

    def _run_tiered(self, args):
        """A call before the kernels are ready: the first one reads each kernel's argument
        types on the way and sends for the kernels it cannot find. Once there are kernels
        to load and the calls they would speed up have paid for loading them
        (``_worth_loading``), numba's imports start in a thread
        (``kernel_cache.NUMBA_IMPORTS``), and when they are done a call loads the kernels
        in numba's disk cache or installs those arrived. Every call answers by the
        interpreter until then, and the first after that is checked (``_run_checked``)."""
        started = time.perf_counter()
        with self._lock:
            jobs = self._jobs
            if jobs is None and not self._gave_up:
                self._first_call = started
                outs = self._find_kernels(args)
                self._interpreted_seconds += time.perf_counter() - started
                return outs
            if self._elsewhere:
                self._poll_elsewhere()
            if self._unsent:
                self._send_unsent()
            arrived = _all_done(jobs) and not self._unsent
            waiting = not (self._on_disk or arrived)
            if not waiting:
                # only then: a script that ends before its kernels arrive would hold the
                # GIL for the imports, ~0.1-0.3 s of its interpreted calls, for nothing
                worth = self._worth_loading(len(self._on_disk) + len(jobs))
                if worth:
                    NUMBA_IMPORTS.start()
                waiting = not worth or not NUMBA_IMPORTS.done()   # (numba would import here)
            if not waiting and self._on_disk:
                self._load_from_disk()
                jobs = self._jobs
                arrived = _all_done(jobs)
        if waiting:
            return self._interpret_timed(args, started)
        if arrived:
            with self._lock:
                if self._jobs is jobs:
                    self._install(jobs)
        if self._arrived():
            return self._run_checked(args)
        return self._interpret_timed(args, started)

    def _interpret_timed(self, args, started):
        """``interpret(args)``, its time (since ``started``) counted for ``_worth_loading``."""
        outs = self.interpret(args)
        self._interpreted_seconds += time.perf_counter() - started
        return outs

    # Loading is worth it once the interpreted calls have taken this many times what the
    # load costs: expecting as many calls again as there have been, compiled at half the
    # time. A 200-step script whose kernel is on disk or lands late then stays
    # interpreted, where loading (numba's first load in a process: ~0.35 s) would cost
    # more than it saves; a long one loads after ~0.7 s of interpreted calls at most.
    LOAD_PAYBACK = 2.0
    # ... or once this long has passed since the plan's first call, whatever the calls
    # took: a small function called now and then gets its kernel too
    LOAD_WITHIN_SECONDS = 2.0

    def _worth_loading(self, kernels):
        return (self._interpreted_seconds >= self.LOAD_PAYBACK * NUMBA_IMPORTS.load_seconds(
            kernels) or time.perf_counter() - self._first_call >= self.LOAD_WITHIN_SECONDS)

    def _arrived(self):
        """Has every kernel the plan sent for arrived (and none failed)?"""
        return not (self._jobs or self._on_disk or self._elsewhere or self._unsent
                    or self._gave_up)

    def _run_checked(self, args):
        """The first call on the kernels: each kernel's argument types are read again, from
        the values the kernels before it computed. The interpreter's values, which typed
        the kernels sent for, may be laid out otherwise (its ``iota`` along a row is a
        broadcast view, a kernel's the C-ordered array it wrote): a kernel with no machine
        code for the types it is now handed is sent for again, and this call finishes on
        the interpreter, where numba would have compiled it on the caller's thread. The
        plan is ready when every kernel had its types."""
        if self.single:        # typed from the caller's arguments themselves
            self.ready = True
            return self._run(args)
        missing = []

        def run_kernel(seg, seg_args):
            if not missing:
                signature = seg.signature(seg_args)
                if seg.kernel.compiled_for(signature):
                    return seg(seg_args)
                missing.append((seg, signature))
            return seg.evaluate(seg_args)
        outs = self._run_segments(args, run_kernel)
        with self._lock:
            if not missing:
                self.ready = True
            elif self._arrived():
                self._jobs = []
                for seg, signature in missing:
                    self._send(seg, signature)
        return outs

    def _find_kernels(self, args):
        """This call's outputs, by the interpreter, each kernel's argument types read on
        the way: a kernel this process has is used as it is, one that numba's disk cache
        may hold is left for the next call to load, one that another process's worker is
        compiling (a rerun while the last run's compile is in flight) is waited for
        (``_poll_elsewhere``) rather than sent for, and the others are sent to the compile
        workers: a worker of this process's own costs a start, ~0.5 s of a core, only to
        wait for the same result."""
        wanted, outs = self._signatures(args)
        self._jobs, self._on_disk, self._elsewhere = [], [], []
        for seg, signature in wanted:
            kernel = seg.kernel
            if kernel.compiled_for(signature):
                seg.first = False
                continue
            job = SERVICE.find(kernel.request(signature))   # another plan sent for it
            if job is not None:
                self._jobs.append((seg, signature, job))
            elif kernel.maybe_on_disk():
                self._on_disk.append((seg, signature))
            elif kernel.compiling_elsewhere(signature):
                self._elsewhere.append((seg, signature))
            else:
                self._send(seg, signature)
        return outs

    def _send(self, seg, signature, block=False):
        """Send for ``seg``'s kernel for ``signature``: a job of the compile service's (one
        another plan sent for is joined), or, when the service's queue is full, a note to
        send again on a later call (``block``: wait for room instead)."""
        job = SERVICE.submit(seg.kernel.request(signature), block=block)
        if job is None:
            self._unsent.append((seg, signature))
        else:
            self._jobs.append((seg, signature, job))

    def _send_unsent(self, block=False):
        unsent, self._unsent = self._unsent, []
        for seg, signature in unsent:
            self._send(seg, signature, block)

    def _poll_elsewhere(self):
        """Kernels whose compile in another process has ended (its lock is gone) are for
        the next call to load from the disk cache, or to send for if they are not there."""
        ended = [(seg, signature) for seg, signature in self._elsewhere
                 if not seg.kernel.compiling_elsewhere(signature)]
        if ended:
            self._elsewhere = [e for e in self._elsewhere if e not in ended]
            self._on_disk.extend(ended)

    def _send_elsewhere(self):
        """Send for the kernels another process is compiling: a worker waits for that
        compile and loads its result (``compile`` waits on jobs)."""
        elsewhere, self._elsewhere = self._elsewhere, []
        for seg, signature in elsewhere:
            self._send(seg, signature, block=True)

    def _load_from_disk(self):
        """Load the kernels the first call left for the disk cache, and send for any
        missing."""
        for seg, signature in self._on_disk:
            if seg.kernel.load_from_disk(signature):
                self.kernel_cache.stats["disk_hits"] += 1
                seg.first = False
            else:
                self._send(seg, signature)
        self._on_disk = []

    def _signatures(self, args):
        """([(segment, signature)], outputs) for a run on ``args``, by the interpreter."""
        if self.single:
            seg = self.segments[0]
            return [(seg, seg.signature(args))], self.interpret(args)
        wanted = []

        def typed(seg, seg_args):
            wanted.append((seg, seg.signature(seg_args)))
            return [_as_written(out, seg_args) for out in seg.evaluate(seg_args)]
        return wanted, self._run_segments(args, typed)

    def _install(self, jobs):
        """Add the workers' compiled kernels; if any failed to compile or to load, say so
        once and stay interpreted from now on."""
        failed = next((job for _, _, job in jobs if job.error is not None), None)
        if failed is not None:
            # every plan waiting for that job gives up; the user hears of it once
            said, failed.reported = failed.reported, True
            return self._give_up(f"compiling {failed.describe()} failed: {failed.error}",
                                 quiet=said)
        for seg, signature, job in jobs:
            if not seg.kernel.compiled_for(signature):
                try:
                    seg.kernel.install(job.payload, signature)
                except Exception as err:    # the interpreter keeps answering correctly
                    return self._give_up(f"loading a compiled kernel failed: {err}")
            self.kernel_cache.stats["disk_hits" if job.cached else "compiles"] += 1
            seg.first = False
        self._jobs = []

    def _give_up(self, why, quiet=False):
        self._gave_up, self._jobs, self._unsent = True, [], []
        if not quiet:
            LOGGER.warning("%s; running interpreted", why)

    def interpret(self, args):
        """Run the program op by op on NumPy (specialized first if its dims are symbolic)."""
        program = self._interpreted
        if program is None:
            # the program as the kernels compute it (a scan's per-step products run as one
            # product before the loop, on the interpreter too), broadcasts read as views
            program = self._interpreted = _broadcasts_as_views(self.rewritten)
            self._interpreted_shared = _shared_outputs(program.outvars, dict(program.consts))
        shared = self._interpreted_shared
        if self.symbolic:
            program = specialize(program, bind_dims(program, args))
        # (values in, values out, even under a trace: a plan stages nothing)
        return _as_arrays(run_concrete(program, list(args)), shared)

    def compile(self, args=None):
        """Wait until the kernels a first run sent for have arrived (a tiered plan needs
        one ``run`` first: kernels are typed from real arguments) and, given ``args``,
        until a call on them finds every kernel typed for what it is handed
        (``_run_checked``); without, the plan is ready unchecked."""
        for _ in range(len(self.segments) + 1):     # each check sends for one kernel at most
            with self._lock:
                if self._elsewhere:
                    self._send_elsewhere()
                if self._on_disk:
                    self._load_from_disk()
                if self._unsent:
                    self._send_unsent(block=True)
            jobs = self._jobs
            if jobs:
                for _, _, job in jobs:
                    job.done.wait()
                with self._lock:
                    if self._jobs is jobs:
                        self._install(jobs)
            if self.ready or not self._arrived():
                break
            if args is None:    # unchecked: a kernel handed new types compiles on its call
                self.ready = True
                break
            self._run_checked(list(args))
        return self

    def _run_segments(self, args, run_kernel=None):
        """Each segment in turn; ``run_kernel(segment, args)`` runs the compiled ones
        (default: their kernels)."""
        if self.single and run_kernel is None:
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
                seg_args = [env[v] for v in sub.invars]
                outs = seg(seg_args) if run_kernel is None else run_kernel(seg, seg_args)
                env.update(zip(sub.outvars, outs))
        return _as_arrays([_read(env, v) for v in self.program.outvars], self._shared)

    @property
    def schedules(self):
        """The schedule of each compiled segment, in order."""
        return [seg.schedule for seg in self.segments if type(seg) is CompiledSegment]

    def as_text(self):
        """The program, its schedule and the generated source, each a section of its own
        (``docs/schedule.md`` explains how to read them)."""
        program = [f"== program: {len(self.program.eqns)} equations ==", str(self.program)]
        n = len(self.segments)
        schedule = [f"== schedule: {n} segment{'s' * (n != 1)}, "
                    f"{'parallel' if self.parallel else 'serial'} variant =="]
        source = ["== source =="]
        for k, seg in enumerate(self.segments):
            if type(seg) is InterpretedStep:
                schedule.append(f"segment {k}: NumPy step for {seg.eqn.prim.name} "
                                "(no compiled lowering for these operands)")
                continue
            sched = seg.schedule
            facts = [("threaded", sched.threaded), ("threaded helpers", sched.threaded_calls),
                     ("workspace", sched.uses_workspace)]
            said = ", ".join(name for name, holds in facts if holds)
            blas = ", ".join(sorted(sched.blas))
            schedule.append(f"segment {k}: kernel {seg.kernel.key}"
                            + (f" ({said})" if said else "") + (f"; BLAS: {blas}" if blas else ""))
            schedule.append(sched.as_text("  "))
            source.append(f"# segment {k}: kernel {seg.kernel.key}")
            source.append(seg.source)
        return "\n".join(program + [""] + schedule + [""] + source)


def _all_done(jobs):
    """Have all of ``jobs`` (a tiered plan's ``[(segment, signature, job)]``, if any)
    finished? (A loop: a plan asks on every interpreted call.)"""
    if not jobs:
        return False
    for _, _, job in jobs:
        if not job.done.is_set():
            return False
    return True


def _broadcasts_as_views(program):
    """``program`` for the NumPy interpreter alone: each ``broadcast_in_dim`` read only by
    elementwise equations that have another operand of the full shape becomes a reshape
    to the broadcast's rank (or, of a scalar, the scalar itself), which NumPy's ufuncs
    broadcast as they read it, instead of an array written out at full size (a bias added
    to a batch, a mean subtracted from rows: ~15% of an interpreted MLP step). A reshape
    made before is read again instead of made twice, and a scalar filled out and
    reshaped (a mean's cotangent) is read as the scalar. The result is not a valid
    program for the transforms (those operands are smaller than their types say): only
    ``interpret`` runs it."""
    elementwise = set(ew.PRIMS.values())
    readers = collections.defaultdict(list)
    for eqn in program.eqns:
        for v in eqn.invars:
            if type(v) is Var:
                readers[v].append(eqn)
    broadcasts = {e.outvars[0] for e in program.eqns if e.prim is layout.broadcast_in_dim_p}
    outputs = {v for v in program.outvars if type(v) is Var}

    def full_operand_beside(v, reader):
        shape = reader.outvars[0].aval.shape
        return any(u is not v and type(u) is Var and u not in broadcasts
                   and u.aval.shape == shape for u in reader.invars)

    def read_as_view(w):
        return (w not in outputs and readers[w]
                and all(r.prim in elementwise and full_operand_beside(w, r)
                        for r in readers[w]))

    eqns, renamed = [], {}
    views = {}      # (var, shape) -> a var holding that var's elements in that shape
    fills = {}      # var -> the 0-d var it is a broadcast of (or a reshape of one)
    for eqn in program.eqns:
        if renamed and any(type(v) is Var and v in renamed for v in eqn.invars):
            eqn = Eqn(eqn.prim, tuple(renamed.get(v, v) if type(v) is Var else v
                                      for v in eqn.invars), eqn.outvars, eqn.params,
                      eqn.source)
        w = eqn.outvars[0] if eqn.outvars else None     # (an effect has no output)
        x = eqn.invars[0] if eqn.invars else None
        if eqn.prim is layout.reshape_p:
            shape = eqn.params["new_sizes"]
            if x in fills:                  # a filled array reshaped (a mean's 1/n)
                fills[w] = fills[x]
                if read_as_view(w):
                    renamed[w] = fills[x]
                    continue
            if (x, shape) in views:         # the same view made before
                renamed[w] = views[(x, shape)]
                continue
            views[(x, shape)] = w
            views.setdefault((w, x.aval.shape), x)
        elif eqn.prim is layout.broadcast_in_dim_p and read_as_view(w):
            if not x.aval.shape or x in fills:     # a scalar: the ufuncs read it as it is
                renamed[w] = fills.get(x, x)
                continue
            expanded = [1] * len(w.aval.shape)
            for i, d in enumerate(eqn.params["broadcast_dimensions"]):
                expanded[d] = x.aval.shape[i]
            expanded = tuple(expanded)
            # the operand itself in that shape, or a view of it made before (a softmax's
            # keepdims row maxima, read by its gradient too): no reshape call
            same = x if x.aval.shape == expanded else views.get((x, expanded))
            if same is not None:
                renamed[w] = same
                continue
            views[(x, expanded)] = w
            eqn = Eqn(layout.reshape_p, (x,), (w,), {"new_sizes": expanded}, eqn.source)
        elif eqn.prim is layout.broadcast_in_dim_p and (x in fills or not x.aval.shape):
            fills[w] = fills.get(x, x)
        eqns.append(eqn)
    if eqns == list(program.eqns):
        return program
    # an output may be a reshape made twice (an unsimplified program): the one made first
    outvars = [renamed.get(v, v) if type(v) is Var else v for v in program.outvars]
    # (a reshape whose readers now read another view of its operand is left unread)
    return dead_code_elimination(program.replace(eqns=eqns, outvars=outvars))


def _as_arrays(outs, shared=()):
    """Outputs as ndarrays: NumPy's reductions give NumPy scalars, a kernel 0-d arrays,
    and a plan gives the same whichever tier answers. The ``shared`` ones are a literal
    or a const of the program, the same array every run (a gradient that is zero): each
    run hands out a copy, so that a caller changing one changes no later run."""
    outs = [x if type(x) is np.ndarray else np.asarray(x) for x in outs]
    for i in shared:
        outs[i] = outs[i].copy()
    return outs


def _shared_outputs(outvars, consts):
    """The positions of the outputs that are literals or ``consts``."""
    return tuple(i for i, v in enumerate(outvars) if type(v) is Literal or v in consts)


def _as_written(value, inputs):
    """An interpreted kernel's output laid out as the kernel writes it, so the kernels
    after it are typed for what they will be handed: C-ordered, unless it may be a view
    of an input (which a kernel can return too). The interpreter's broadcasts are views
    (its ``iota`` along a row is Fortran-ordered). ``_run_checked`` catches the rest."""
    if type(value) is not np.ndarray or value.flags.c_contiguous or any(
            type(x) is np.ndarray and np.may_share_memory(value, x) for x in inputs):
        return value
    return np.ascontiguousarray(value)


@functools.cache
def _interpreter_blas():
    """Setters for an interpreted run: its products and LAPACK run on NumPy's BLAS."""
    return blas_threads.numpy_setters()


def _read(env, v):
    return v.value if type(v) is Literal else env[v]
