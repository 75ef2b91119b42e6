"""The tiers of a plan: where its kernels come from, and when it switches to them.

A tiered plan answers with the NumPy interpreter until its kernels are ready, then runs
them. A kernel this process has is ready at once; one numba's disk cache holds is loaded
on a later call; one another process is compiling is waited for; the others are sent to
the compile workers (``compile_service``) while calls are interpreted. ``Tiers`` is that
state machine, one per plan; ``Plan`` keeps the program's segments and how a call runs
them (``Plan._run_segments``, ``Plan.interpret``), and asks its tiers on every call
until it is ready.
"""
import threading
import time

import numpy as np

from .compile_log import LOGGER
from .compile_service import SERVICE
from .kernel_cache import NUMBA_IMPORTS


class Tiers:
    """The kernels ``plan`` waits for, and the calls it answered meanwhile."""

    def __init__(self, plan):
        self.plan = plan
        self.jobs = None             # [(segment, signature, Job)] sent to compile workers
        self.unsent = []             # [(segment, signature)] the service had no room for
        self.on_disk = []            # [(segment, signature)] for the next call to load
        self.elsewhere = []          # [(segment, signature)] another process is compiling
        self.interpreted_seconds = 0.0      # this plan's calls answered by the interpreter
        self.first_call = None              # when (time.perf_counter)
        self.gave_up = False         # a kernel failed to compile: stay interpreted
        self.lock = threading.Lock()

    def waiting_only(self):
        """Is the plan waiting on the jobs it sent and nothing else (no kernel arrived,
        none to load, none compiled elsewhere, none unsent, none failed, numba's set-up
        started or not yet worth starting)?"""
        jobs = self.jobs
        return bool(jobs) and not (self.plan.ready or self.on_disk or self.elsewhere
                                   or self.unsent or self.gave_up or any_done(jobs)) and (
            NUMBA_IMPORTS.started() or not self.worth_loading(len(jobs)))

    # Loading is worth it once the interpreted calls have taken this many times what the
    # load costs: expecting as many calls again as there have been, compiled at half the
    # time. A 200-step script whose kernel is on disk or lands late then stays
    # interpreted, where loading (numba's first load in a process: ~0.35 s) would cost
    # more than it saves; a long one loads after ~0.7 s of interpreted calls at most.
    LOAD_PAYBACK = 2.0
    # ... or once this long has passed since the plan's first call, whatever the calls
    # took: a small function called now and then gets its kernel too
    LOAD_WITHIN_SECONDS = 2.0

    def run(self, args):
        """A call before the kernels are ready: the first one reads each kernel's argument
        types on the way and sends for the kernels it cannot find. Once there are kernels
        to load, or on their way, and the calls they would speed up have paid for loading them
        (``worth_loading``), numba's imports and set-up start in a thread
        (``kernel_cache.NUMBA_IMPORTS``), and when they are done a call loads the kernels
        in numba's disk cache or installs those arrived. Every call answers by the
        interpreter until then, and the first after that is checked (``run_checked``)."""
        started = time.perf_counter()
        with self.lock:
            jobs = self.jobs
            if jobs is None and not self.gave_up:
                self.first_call = started
                outs = self.find_kernels(args)
                self.interpreted_seconds += time.perf_counter() - started
                return outs
            if self.elsewhere:
                self.poll_elsewhere()
            if self.unsent:
                self.send_unsent()
            # (no jobs at all: the first call found every kernel in this process)
            arrived = (not jobs or all_done(jobs)) and not self.unsent
            # some of several kernels in: they run, the rest interpreted (run_mixed)
            some = not arrived and len(self.plan.segments) > 1 and any_done(jobs)
            waiting = not (self.on_disk or arrived or some)
            # numba's set-up starts once loading would pay for itself, also while the
            # kernels compile, so that it is done when they arrive (a kernel shared by
            # many segments, as region kernels are, loads once)
            if not (waiting and NUMBA_IMPORTS.started()):
                kernels = {id(seg.kernel) for seg, *_ in self.on_disk + (jobs or [])}
                worth = self.worth_loading(len(kernels))
                if worth:
                    NUMBA_IMPORTS.start()
            if not waiting:
                waiting = not worth or not NUMBA_IMPORTS.done()   # (numba would set up here)
            if not waiting and self.on_disk:
                self.load_from_disk()
                jobs = self.jobs
                arrived = all_done(jobs)
        if waiting:
            return self.interpret_timed(args, started)
        with self.lock:
            if self.jobs is jobs and (arrived or some):
                self.install([j for j in jobs if j[2].done.is_set()])
        if self.arrived():
            return self.run_checked(args)
        if some and not self.gave_up:
            return self.run_mixed(args, started)
        return self.interpret_timed(args, started)

    def interpret_timed(self, args, started):
        """``interpret(args)``, its time (since ``started``) counted for ``worth_loading``."""
        outs = self.plan.interpret(args)
        self.interpreted_seconds += time.perf_counter() - started
        return outs

    def worth_loading(self, kernels):
        return (self.interpreted_seconds >= self.LOAD_PAYBACK * NUMBA_IMPORTS.load_seconds(
            kernels) or time.perf_counter() - self.first_call >= self.LOAD_WITHIN_SECONDS)

    def arrived(self):
        """Has every kernel the plan sent for arrived (and none failed)?"""
        return not (self.jobs or self.on_disk or self.elsewhere or self.unsent
                    or self.gave_up)

    def run_checked(self, args):
        """The first call on the kernels: each kernel's argument types are read again, from
        the values the kernels before it computed. The interpreter's values, which typed
        the kernels sent for, may be laid out otherwise (its ``iota`` along a row is a
        broadcast view, a kernel's the C-ordered array it wrote): a kernel with no machine
        code for the types it is now handed is sent for again, and this call finishes on
        the interpreter, where numba would have compiled it on the caller's thread. The
        plan is ready when every kernel had its types."""
        if self.plan.single:        # typed from the caller's arguments themselves
            self.plan.ready = True
            return self.plan._run(args)
        missing = []

        def run_kernel(seg, seg_args):
            if not missing:
                signature = seg.signature(seg_args)
                if seg.kernel.compiled_for(signature):
                    return seg(seg_args)
                missing.append((seg, signature))
            return seg.evaluate(seg_args)
        outs = self.plan._run_segments(args, run_kernel)
        with self.lock:
            if not missing:
                self.plan.ready = True
            elif self.arrived():
                self.jobs = []
                for seg, signature in missing:
                    self.send(seg, signature)
        return outs

    def run_mixed(self, args, started):
        """A call while some kernels are in and others compiling: each segment whose
        kernel has machine code for what it is handed runs it, the others run on the
        interpreter, their values laid out as a kernel writes them (``as_written``) so
        the kernels after them find the types they were compiled for."""
        def run_kernel(seg, seg_args):
            if seg.kernel.compiled_for(seg.signature(seg_args)):
                return seg(seg_args)
            return [as_written(out, seg_args) for out in seg.evaluate(seg_args)]
        outs = self.plan._run_segments(args, run_kernel)
        self.interpreted_seconds += time.perf_counter() - started
        return outs

    def find_kernels(self, args):
        """This call's outputs, by the interpreter, each kernel's argument types read on
        the way: a kernel this process has is used as it is, one that numba's disk cache
        may hold is left for the next call to load, one that another process's worker is
        compiling (a rerun while the last run's compile is in flight) is waited for
        (``poll_elsewhere``) rather than sent for, and the others are sent to the compile
        workers: a worker of this process's own costs a start, ~0.5 s of a core, only to
        wait for the same result."""
        wanted, outs = self.signatures(args)
        self.jobs, self.on_disk, self.elsewhere = [], [], []
        if not self.plan.single:
            wanted = one_signature_per_kernel(wanted)
        for seg, signature in wanted:
            kernel = seg.kernel
            if kernel.compiled_for(signature):
                seg.first = False
                continue
            job = SERVICE.find(kernel.request(signature))   # another plan sent for it
            if job is not None:
                self.jobs.append((seg, signature, job))
            elif kernel.maybe_on_disk():
                self.on_disk.append((seg, signature))
            elif kernel.compiling_elsewhere(signature):
                self.elsewhere.append((seg, signature))
            else:
                self.send(seg, signature)
        return outs

    def send(self, seg, signature, block=False):
        """Send for ``seg``'s kernel for ``signature``: a job of the compile service's (one
        another plan sent for is joined), or, when the service's queue is full, a note to
        send again on a later call (``block``: wait for room instead)."""
        job = SERVICE.submit(seg.kernel.request(signature), block=block)
        if job is None:
            self.unsent.append((seg, signature))
        else:
            self.jobs.append((seg, signature, job))

    def send_unsent(self, block=False):
        unsent, self.unsent = self.unsent, []
        for seg, signature in unsent:
            self.send(seg, signature, block)

    def poll_elsewhere(self):
        """Kernels whose compile in another process has ended (its lock is gone) are for
        the next call to load from the disk cache, or to send for if they are not there."""
        ended = [(seg, signature) for seg, signature in self.elsewhere
                 if not seg.kernel.compiling_elsewhere(signature)]
        if ended:
            self.elsewhere = [e for e in self.elsewhere if e not in ended]
            self.on_disk.extend(ended)

    def send_elsewhere(self):
        """Send for the kernels another process is compiling: a worker waits for that
        compile and loads its result (``compile`` waits on jobs)."""
        elsewhere, self.elsewhere = self.elsewhere, []
        for seg, signature in elsewhere:
            self.send(seg, signature, block=True)

    def load_from_disk(self):
        """Load the kernels the first call left for the disk cache, and send for any
        missing."""
        for seg, signature in self.on_disk:
            if seg.kernel.load_counted(signature, self.plan.kernel_cache.stats):
                seg.first = False
            else:
                self.send(seg, signature)
        self.on_disk = []

    def signatures(self, args):
        """([(segment, signature)], outputs) for a run on ``args``, by the interpreter."""
        if self.plan.single:
            seg = self.plan.segments[0]
            return [(seg, seg.signature(args))], self.plan.interpret(args)
        wanted = []

        def typed(seg, seg_args):
            wanted.append((seg, seg.signature(seg_args)))
            return [as_written(out, seg_args) for out in seg.evaluate(seg_args)]
        return wanted, self.plan._run_segments(args, typed)

    def install(self, jobs):
        """Add the workers' compiled kernels of ``jobs`` (finished ones of ``self.jobs``);
        if any failed to compile or to load, say so once and stay interpreted from now on."""
        failed = next((job for _, _, job in jobs if job.error is not None), None)
        if failed is not None:
            # every plan waiting for that job gives up; the user hears of it once
            said, failed.reported = failed.reported, True
            return self.give_up(f"compiling {failed.describe()} failed: {failed.error}",
                                 quiet=said)
        for seg, signature, job in jobs:
            try:
                seg.kernel.install_counted(job, signature, self.plan.kernel_cache.stats)
            except Exception as err:    # the interpreter keeps answering correctly
                return self.give_up(f"loading a compiled kernel failed: {err}")
            seg.first = False
        installed = {id(j) for j in jobs}
        self.jobs = [j for j in self.jobs if id(j) not in installed]

    def give_up(self, why, quiet=False):
        self.gave_up, self.jobs, self.unsent = True, [], []
        if not quiet:
            LOGGER.warning("%s; running interpreted", why)

    def compile(self, args=None):
        """Wait until the kernels a first run sent for have arrived (a tiered plan needs
        one ``run`` first: kernels are typed from real arguments) and, given ``args``,
        until a call on them finds every kernel typed for what it is handed
        (``run_checked``); without, the plan is ready unchecked."""
        for _ in range(len(self.plan.segments) + 1):     # each check sends for one kernel at most
            with self.lock:
                if self.elsewhere:
                    self.send_elsewhere()
                if self.on_disk:
                    self.load_from_disk()
                if self.unsent:
                    self.send_unsent(block=True)
            jobs = self.jobs
            if jobs:
                for _, _, job in jobs:
                    job.done.wait()
                with self.lock:
                    if self.jobs is jobs:
                        self.install(jobs)
            if self.plan.ready or not self.arrived():
                break
            if args is None:    # unchecked: a kernel handed new types compiles on its call
                self.plan.ready = True
                break
            self.run_checked(list(args))
        return self


def as_written(value, inputs):
    """An interpreted kernel's output laid out as the kernel writes it, so the kernels
    after it are typed for what they will be handed: C-ordered, unless it may be a view
    of an input (which a kernel can return too). The interpreter's broadcasts are views
    (its ``iota`` along a row is Fortran-ordered). ``Tiers.run_checked`` catches the rest."""
    if type(value) is not np.ndarray or value.flags.c_contiguous or any(
            type(x) is np.ndarray and np.may_share_memory(value, x) for x in inputs):
        return value
    return np.ascontiguousarray(value)


def one_signature_per_kernel(wanted):
    """``wanted`` ([(segment, signature)], read by the interpreter) with one signature per
    kernel: the one it has machine code for, else the one with the most C-ordered arrays.
    A kernel that several segments share (region kernels) may be handed other layouts by
    the interpreter than by the kernels before it: NumPy's reshape of a strided array is
    a strided view where a kernel's is C-ordered, so typing it from every interpreted call
    compiled it twice, once for types no compiled call hands it. The first call on the
    kernels types them again (``Tiers.run_checked``) and sends for any types still missing."""
    chosen = {}
    for seg, signature in wanted:
        best = chosen.get(id(seg.kernel))
        if best is None or _preferred(seg.kernel, signature) > _preferred(seg.kernel, best):
            chosen[id(seg.kernel)] = signature
    return [(seg, signature) for seg, signature in wanted
            if chosen[id(seg.kernel)] == signature]


def _preferred(kernel, signature):
    return (kernel.compiled_for(signature),
            sum(getattr(t, "layout", "C") == "C" for t in signature))


def any_done(jobs):
    """Has any of ``jobs`` finished?"""
    for _, _, job in jobs:
        if job.done.is_set():
            return True
    return False


def all_done(jobs):
    """Have all of ``jobs`` (a tiered plan's ``[(segment, signature, job)]``, if any)
    finished? (A loop: a plan asks on every interpreted call.)"""
    if not jobs:
        return False
    for _, _, job in jobs:
        if not job.done.is_set():
            return False
    return True

