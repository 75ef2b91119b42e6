"""A program prepared for execution: its segments, and the tier it runs on.

Consecutive equations that can be lowered form one segment, compiled into one numba kernel
(one crossing from Python into compiled code); an equation with no lowering for its
dtypes runs its NumPy impl between segments (``segments``). In the common case the whole
program is one kernel and ``run`` is a single call.

Tiers: a tiered plan (the default) answers with the NumPy interpreter until its kernels are
ready, then runs them; where its kernels come from and when it switches is ``tiers``'
state machine (compile workers in other processes, so the interpreter keeps the GIL and
the cores' time to itself). ``tiered=False`` (or ``TF_NUMBA_TIERED=0``) compiles on the
first call, in the caller's thread.
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
from .rewrites import prepare_for_lowering
from ..transforms.simplify import dead_code_elimination
from . import library  # noqa: F401  (registers the lowering rules)
from . import control  # noqa: F401  (and those of the loops and branches)
from . import blas_threads
from .products import products_on_numpy
from .schedule import private_values
from .kernel_cache import KERNELS
from ..kernel_vocab.rules import lowerable
from .tiers import Tiers
from .compile_log import LOGGER
from .compile_service import SERVICE
from .driver import drive, entry_points
from .segments import (MAX_KERNEL_NESTS, CompiledSegment, InterpretedStep, count_nests,
                       cut_into_regions, cut_large_groups, segment_program, split,
                       uses_after)
from .widths import blas_libraries, lapack_libraries, run_with_blas, run_with_width

__all__ = ["Plan", "lowerable", "tiered_default"]


def tiered_default():
    """Tiered execution unless ``TF_NUMBA_TIERED=0``."""
    return os.environ.get("TF_NUMBA_TIERED", "1").lower() not in ("0", "false", "off", "no")


def regions_default(groups):
    """Region kernels (``segments.cut_into_regions``) for a program one kernel cannot
    hold (more than ``MAX_KERNEL_NESTS`` loop nests: its compile would grow faster than
    the program), or as ``TF_NUMBA_REGIONS`` says ("1": always, "0": never); None when
    it is for the plan to choose (a smaller program: ``Plan._build``)."""
    chosen = os.environ.get("TF_NUMBA_REGIONS", "").lower()
    if chosen in ("0", "1", "true", "false", "on", "off", "yes", "no"):
        return chosen in ("1", "true", "on", "yes")
    if sum(count_nests(g) for g in groups if isinstance(g, list)) > MAX_KERNEL_NESTS:
        return True
    return None


class Plan:
    """``run(args) -> outputs`` for a flat program; ``as_text()`` shows how it was lowered."""

    def __init__(self, program, kernel_cache=KERNELS, tiered=None, parallel=False,
                 regions=None):
        self.program = program
        self.segments = []
        self.kernel_cache = kernel_cache
        self._wide_variant = self if parallel else None     # see variant_for
        self.regions = regions      # as asked; whether it has them: _build
        self.tiered = tiered_default() if tiered is None else tiered
        self.symbolic = is_symbolic(program)
        self.successor = None        # the one-kernel plan this one hands over to (_build)
        self._build(program, kernel_cache, parallel)
        self.ready = False
        self._interpreted = None     # the program as the interpreter runs it (interpret)
        self._driver = None          # a ready plan's segments as one function (_drive)
        self._lock = threading.Lock()
        self.tiers = Tiers(self)     # where its kernels come from (tiered plans)

    def _build(self, program, kernel_cache, parallel):
        program = self.rewritten = prepare_for_lowering(program)
        groups = split(program)
        regions = regions_default(groups) if self.regions is None else self.regions
        consts = dict(program.consts)
        self.consts = consts
        self._shared = _shared_outputs(self.program.outvars, consts)    # (_as_arrays)
        if regions is None:
            # A program one kernel holds: that kernel's step is the fastest (no call per
            # region, regions fused into row blocks), but its compile grows faster than
            # the program. Where its region kernels compile in much less (an MLP of 8
            # layers: 7 region kernels, 1.3 s of compile, against 4.5 s for its one
            # kernel), a tiered serial plan runs them as soon as they arrive and hands
            # over to the one kernel when it does (``Successor``), or, past
            # ``SUCCESSOR_MOST_NESTS``, keeps them; otherwise one kernel.
            cut = cut_into_regions(groups)
            nests = sum(count_nests(g) for g in groups if isinstance(g, list))
            regions = (self.tiered and not parallel and not self.symbolic
                       and _regions_may_arrive_first(nests, cut))
            if regions:
                segments, lapack = self._segments(program, cut, True, kernel_cache, parallel)
                regions = _regions_arrive_first(nests, segments)
            if regions and nests <= SUCCESSOR_MOST_NESTS:
                self.successor = Successor(self)
            elif not regions:
                segments, lapack = self._segments(program, cut_large_groups(groups), False,
                                                  kernel_cache, parallel)
        else:
            groups = cut_into_regions(groups) if regions else cut_large_groups(groups)
            segments, lapack = self._segments(program, groups, regions, kernel_cache,
                                              parallel)
        self.segments = segments
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

    def _segments(self, program, groups, regions, kernel_cache, parallel):
        """(segments, LAPACK library) of ``groups``, region kernels or not."""
        after = uses_after(program, groups)
        # host steps' LAPACK runs on NumPy's BLAS or SciPy's (numba's): keep the plan's
        # products on the same one, so one library (run as wide as the engine) does all of
        # its BLAS work
        lapack = lapack_libraries(groups)
        # region kernels write the values no output reaches into arrays the plan keeps
        # between calls (its driver's), rather than allocate and return them
        kept = private_values(program) if regions and not is_symbolic(program) else set()
        segments = []
        for g, group in enumerate(groups):
            if not isinstance(group, list):
                segments.append(InterpretedStep(group))
                continue
            sub = segment_program(program, groups, g, after, self.consts)
            segments.append(CompiledSegment(
                sub, kernel_cache, parallel, products_on_numpy=products_on_numpy(lapack),
                given=[v for v in sub.outvars if v in kept]))
        return segments, lapack

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
        call with numba's thread count set around it; for a settled serial plan of
        several segments, its driver with the BLAS width set around it. ``args`` may be
        modified."""
        plan = self.variant_for(threads)
        if plan.settled:
            plan = plan.final
        if plan.settled and not plan.single and not plan.parallel:
            # (a successor, if any, gave up: its region kernels stay)
            drive, blas = plan._drive, plan.blas
            return drive if not blas else lambda args: run_with_blas(blas, drive, args,
                                                                     threads)
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
        at the engine's BLAS width without ``run``'s choices and the tiers' lock
        (~4 us a call, a sixth of an interpreted linear-regression step). Any other state
        (the first call, kernels arrived or on disk, compiled elsewhere) goes to ``run``."""
        def general(args):
            return self.run(args, threads)
        if not self.tiered or self.variant_for(threads) is not self or self.parallel:
            return general
        blas = _interpreter_blas() if any(self.blas_use) else None

        tiers = self.tiers

        def run(args):
            if not tiers.waiting_only():
                return self.run(args, threads)
            started = time.perf_counter()
            if blas is None:
                return tiers.interpret_timed(args, started)
            return run_with_blas(blas, lambda a: tiers.interpret_timed(a, started), args,
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
                                              parallel=True, regions=self.regions)
                wide = self._wide_variant
        return wide if wide.parallel and not wide.serial_products else self

    def _run(self, args):
        if self.ready:
            if self.single:
                return self.segments[0](args if self.segments[0].plain else list(args))
            successor = self.successor
            if successor is not None:
                return successor.run(args)
            return self._drive(args)
        if not self.tiered:
            outs = self._run_segments(args)      # compiles here, on the caller's thread
            self.ready = True
            return outs
        return self.tiers.run(args)

    @property
    def settled(self):
        """Ready, with no one-kernel successor still to come (``Successor``)."""
        return self.ready and (self.successor is None or self.successor.settled)

    @property
    def final(self):
        """The plan calls run on once ``settled``: the successor's, when it took over."""
        successor = self.successor
        return self if successor is None or successor.plan is None or not \
            successor.plan.ready else successor.plan


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
        """Wait until the kernels a first run sent for have arrived (``Tiers.compile``),
        and the one kernel that succeeds them (``Successor``); returns the plan."""
        self.tiers.compile(args)
        if self.ready and self.successor is not None:
            self.successor.wait(args)
        return self

    def _drive(self, args):
        """A ready plan's segments run by its driver (``driver``), built on first use; a
        plan with symbolic dims runs them one by one (its steps' params take the dims)."""
        run = self._driver
        try:
            if run is None:
                if self.symbolic:
                    return self._run_segments(args)
                # typed by this call: its kernels' entry points for what it hands them
                outs, entries = entry_points(self.program, self.segments, args,
                                             self._run_segments)
                finish = functools.partial(_as_arrays, shared=self._shared)
                run = drive(self.program, self.segments, self.consts, finish)
                if entries:
                    run = drive(self.program, self.segments, self.consts, finish, entries,
                                fallback=run)
                self._driver = run
                return outs
            return run(args)
        except IndexError:      # a kernel's bare IndexError: the segments say which op
            return self._run_segments(args)

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
        """The schedule of each compiled segment, in order (of the one kernel a plan of
        region kernels hands over to: ``Successor``)."""
        one = self.successor.made() if self.successor is not None else None
        if one is not None:
            return one.schedules
        return [seg.schedule for seg in self.segments if type(seg) is CompiledSegment]

    def as_text(self):
        """The program, its schedule and the generated source, each a section of its own
        (``docs/schedule.md`` explains how to read them). A plan that runs region
        kernels until its one kernel arrives (``Successor``) shows the one kernel."""
        one = self.successor.made() if self.successor is not None else None
        if one is not None:
            regions = sum(1 for seg in self.segments if type(seg) is CompiledSegment)
            return one._text(f"(until this kernel arrives, {regions} region kernels "
                               "run: jit(f, regions=True) shows them)")
        return self._text()

    def _text(self, note=None):
        program = [f"== program: {len(self.program.eqns)} equations ==", str(self.program)]
        n = len(self.segments)
        schedule = [f"== schedule: {n} segment{'s' * (n != 1)}, "
                    f"{'parallel' if self.parallel else 'serial'} variant =="]
        if note:
            schedule.append(note)
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


class Successor:
    """The one-kernel plan a tiered plan of region kernels hands over to (``Plan._build``:
    a program one kernel holds). The region kernels, few and shared, arrive first and
    run; the one kernel of the whole program, sent for once they run, compiles meanwhile
    and takes over when it is in (a call by call check that costs a dict lookup). Should
    it fail to compile, the region kernels stay: they compute the same values."""

    def __init__(self, regions):
        self.regions = regions
        self.plan = None            # the one-kernel plan, made when first sent for
        self.signature = None       # its kernel's argument types (the caller's arguments)
        self.job = None             # the compile service's job for it
        self.settled = False        # handed over, or given up
        self.lock = threading.Lock()

    def run(self, args):
        """A call of the ready region plan: the one kernel once it took over, the region
        kernels until then."""
        if self.settled:
            plan = self.plan
            return plan._run(args) if plan is not None and plan.ready else \
                self.regions._drive(args)
        job = self.job
        if job is None or job.done.is_set():
            self.advance(args)
        return self.regions._drive(args)

    def advance(self, args):
        """Send for the one kernel (once), or install it when it has arrived. Called by
        the ready region plan: sent for earlier, its compile would share the cores with
        the region kernels' and delay them (an 8-layer MLP's region kernels arrived at
        5.2 s instead of 1.8 s, a VAE's at 17.6 s instead of ~8 s); and numba is set up
        in this process by then, so one in numba's disk cache loads in milliseconds."""
        with self.lock:
            if self.settled:
                return
            try:
                if self.made() is None:       # (host steps between kernels)
                    self.settled = True
                    return
                seg = self.plan.segments[0]
                if self.signature is None:
                    self.signature = seg.signature(list(args))
                kernel, signature, job = seg.kernel, self.signature, self.job
                if job is None:
                    if kernel.compiled_for(signature):
                        return self._take_over()
                    if kernel.maybe_on_disk():
                        if kernel.load_counted(signature, self.regions.kernel_cache.stats):
                            return self._take_over()
                    self.job = SERVICE.submit(kernel.request(signature))  # None: no room yet
                elif job.done.is_set():
                    if job.error is not None:
                        self.settled = True
                        return
                    kernel.install_counted(job, signature, self.regions.kernel_cache.stats)
                    self._take_over()
            except Exception as err:    # the region kernels compute the same values
                self.settled = True
                LOGGER.info("the one kernel of a region plan is not used: %s", err)

    def made(self):
        """The one-kernel plan (made on first use), or None if the program does not make
        one kernel (host steps between kernels): the region kernels then stay."""
        if self.plan is None:
            regions = self.regions
            self.plan = Plan(regions.program, regions.kernel_cache, tiered=True,
                             regions=False)
        return self.plan if self.plan.single else None

    def _take_over(self):
        self.plan.segments[0].first = False
        self.plan.ready = True
        self.settled = True

    def wait(self, args=None):
        """Block until the one kernel took over or failed (``args``: the call's, to type
        it if no call has yet)."""
        while not self.settled:
            if self.job is None:
                if self.signature is None and args is None:
                    return          # never typed: nothing sent for, nothing to wait for
                self.advance(args)
                if self.job is None and not self.settled:
                    time.sleep(0.01)        # the service's queue is full
                continue
            self.job.done.wait()
            self.advance(args)


# Region kernels arrive before the one kernel from about this many loop nests on: an
# MLP's gradient of 2 layers (5 nests) gets its one kernel first (2.0 s against 2.5 s for
# its 7 region kernels), one of 8 layers (17 nests) its region kernels (1.8 s against 6.8 s)
REGIONS_FIRST_NESTS = 8


def _regions_may_arrive_first(nests, cut):
    """Could region kernels (``cut``) arrive sooner than the one kernel of a program of
    ``nests`` loop nests?
    Not below ``REGIONS_FIRST_NESTS``, nor when one region holds most of the nests (a
    loop's body is one region: its kernel would be the one kernel again)."""
    regions = [count_nests(g) for g in cut if isinstance(g, list)]
    return nests >= REGIONS_FIRST_NESTS and len(regions) > 1 and 2 * max(regions) <= nests


# A program of more nests whose regions split runs region kernels only: its one kernel
# would compile for ~0.4-0.5 s a nest, in one worker (a VAE step, 30 nests: 12-15 s,
# against 8.6-9.7 s until the last of its 27 region kernels had arrived from two
# workers), to run a step ~5% faster. Up to this many, the one kernel follows the region
# kernels (``Successor``).
SUCCESSOR_MOST_NESTS = 20


def _regions_arrive_first(nests, segments):
    """Do the region kernels compile in much less than the one kernel: do they share
    enough (at most one distinct kernel per two of its nests), or is the program past
    ``SUCCESSOR_MOST_NESTS``? The compile workers share the cores with the user's running
    steps, so what counts is compile CPU: ~0.3-0.5 s per region kernel, ~0.2 s per nest
    of a small one kernel, twice that past ~20 nests. (A 4-layer MLP, 7 kernels for 9
    nests, took as long either way, 1.7 s.)"""
    distinct = {seg.kernel.key for seg in segments if type(seg) is CompiledSegment}
    return 2 * len(distinct) <= nests or nests > SUCCESSOR_MOST_NESTS


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


@functools.cache
def _interpreter_blas():
    """Setters for an interpreted run: its products and LAPACK run on NumPy's BLAS."""
    return blas_threads.numpy_setters()


def _read(env, v):
    return v.value if type(v) is Literal else env[v]
