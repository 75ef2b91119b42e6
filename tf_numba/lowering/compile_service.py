"""Kernels compile in worker processes, never in a thread of the user's process.

Why: numba holds the GIL while it types and lowers, so a compile thread starved the
interpreted tier it was meant to hide, and LLVM still running in a daemon thread at
interpreter exit crashed the process. A worker is a separate Python process at a lower
priority (``compile_worker.py``): it imports a kernel's module from its file (or its source
text when there is no disk cache), compiles it for the argument types the user's process
saw, saves numba's disk-cache entry where there is a cache directory, and sends back
numba's own serialized compile result, which the user's process adds to its dispatcher in
milliseconds.

Jobs. ``submit`` names a job by its kernel's module, function, options and signature: a job
queued or compiling under that name is joined, a recently finished one is handed back, so a
kernel is compiled once however many plans ask for it (a length sweep makes a plan per
length, all on one length-generic kernel). At most ``MAX_QUEUED`` jobs wait for a worker;
beyond that ``submit`` refuses (None) and the caller keeps interpreting and submits later.

Threads, pipes and locks (why no cycle of waits exists):

- One lock, ``CompileService._cond`` (a condition), guards the queue, the job tables, the
  worker list and the counters. No thread does I/O, waits on a process or waits on an
  event while it holds it; it is held for dictionary and deque operations only.
- Each worker process has one thread of its own in this process (``_Worker``), which is
  the only thread that touches that worker's pipes: it starts the process, takes one job
  from the queue (waiting on ``_cond``, which releases the lock), writes it to the
  worker's stdin, reads the one reply from its stdout, settles the job, and takes the next.
  A worker has at most one job in flight, so the worker never blocks writing a reply that
  nobody reads (its thread is reading) and the thread never blocks writing a job the worker
  does not read (the worker is idle, reading). Writes and reads wait with a deadline (the
  job's timeout) and are select()-driven on non-blocking pipes, so even a stopped worker
  blocks only its own thread, and only until the deadline.
- The user's threads only take ``_cond`` briefly (``submit``) and wait on a job's ``done``
  event, which the worker's thread sets after releasing ``_cond``. A thread blocked in
  ``submit(block=True)`` waits on ``_cond`` for a worker thread to take a job, and worker
  threads take jobs without waiting on anything the user's thread holds.

Faults. A worker that dies mid-job (killed, crashed) or exceeds the job's timeout
(``TF_NUMBA_COMPILE_TIMEOUT``, default ``DEFAULT_TIMEOUT`` seconds; it is then killed)
costs a retry on a new worker; a job that fails ``MAX_ATTEMPTS`` times is settled with an
error naming its kernel, and the plans waiting for it stay interpreted. A worker that is
stopped (SIGSTOP) does not count toward the worker limit while it is stopped, so another
worker takes the queued jobs and only the stopped one's job waits.

Lifetime. Workers start when jobs come, not before (a worker's start, Python, imports and
numba's first compile, is ~0.5-1 s of a core that a rerun whose kernels are all on disk
would pay for nothing), one per core at most, from their own thread; an idle worker leaves
after ``TF_NUMBA_WORKER_IDLE_SECONDS`` (default 60; its memory is ~200 MB). At interpreter
exit (``close``) queued jobs are dropped and the workers are killed, so no tf_numba process
outlives the user's; the workers also die with the thread that started them (Linux's
parent-death signal, armed before the worker runs, so that even a stopped worker gets it)
or when their parent has gone, should the user's process be killed without running its
exit handlers. ``TF_NUMBA_COMPILE_AFTER_EXIT=1`` opts into the other
choice: at exit the workers finish the job each is on (into the disk cache, so the next
run can load it) and then exit. Ctrl-C is not sent to the workers (their own session): it
interrupts the user's thread, and the exit handler stops them.
"""
import atexit
import collections
import functools
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time

from . import compile_log

_HEADER = struct.Struct("<Q")
MAX_ATTEMPTS = 2                  # a job whose worker died or timed out is sent once more
MAX_QUEUED = 32                   # jobs waiting for a worker; more are refused (submit later)
FINISHED_KEPT = 256               # finished jobs handed back to late askers (their payloads)
DEFAULT_TIMEOUT = 600.0           # seconds a job may take on a worker before it is replaced
DEFAULT_IDLE_SECONDS = 60.0
WORKER_ENV = "TF_NUMBA_COMPILE_WORKER"    # set in a worker: it starts no workers itself
PARENT_ENV = "TF_NUMBA_COMPILE_PARENT"    # the user's process id, which the worker watches
AFTER_EXIT_ENV = "TF_NUMBA_COMPILE_AFTER_EXIT"
_SELECTABLE_PIPES = os.name != "nt"       # Windows selects sockets only: blocking pipes


def _env_seconds(name, default):
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def compiles_after_exit():
    """Has the user asked the workers to finish their jobs after the process exits?"""
    return os.environ.get(AFTER_EXIT_ENV, "0").lower() in ("1", "true", "on", "yes")


@functools.cache
def parent_death_signal():
    """``arm()``: make the calling process receive SIGKILL when the thread that started it
    ends (Linux's ``prctl(PR_SET_PDEATHSIG)``), True if armed; None where there is no such
    call. Resolved ahead so that ``arm`` may run between fork and exec, where looking a
    symbol up could wait on a lock another thread held at the fork."""
    import ctypes
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes, prctl.restype = (ctypes.c_int, ctypes.c_ulong), ctypes.c_int
    kill = int(signal.SIGKILL)

    def arm():
        return prctl(1, kill) == 0       # PR_SET_PDEATHSIG
    return arm


def _armed_at_start(parent):
    """The ``preexec_fn`` of a worker: arm its death signal before it runs any Python of its
    own. Armed in the worker itself, ~1 s later (its imports), a worker stopped meanwhile
    (SIGSTOP, a debugger) outlived a killed parent for good: the signal was never armed,
    and a stopped process runs no thread that could watch the parent. SIGKILL reaches a
    stopped process. A parent that has already gone leaves a child that kills itself."""
    arm = parent_death_signal()
    if arm is None or compiles_after_exit():
        return None
    kill = int(signal.SIGKILL)

    def preexec():
        if not arm() or os.getppid() != parent:
            os.kill(os.getpid(), kill)
    return preexec


def _worker_count():
    """One worker per core the process may use: the user's thread keeps running
    interpreted steps meanwhile, and the workers run at a lower priority."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _frame(obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def write_message(stream, obj):
    """Write ``obj`` to a blocking binary ``stream`` (the worker's side)."""
    stream.write(_frame(obj))
    stream.flush()


def read_message(stream):
    """The next message from a blocking ``stream``, or None at its end (the worker's side;
    ``stream`` may return short reads)."""
    head = _read_exactly(stream.read, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    data = _read_exactly(stream.read, size)
    return None if data is None else pickle.loads(data)


def _read_exactly(read, size):
    parts, missing = [], size
    while missing:
        part = read(missing)
        if not part:
            return None
        parts.append(part)
        missing -= len(part)
    return b"".join(parts)


def job_key(request):
    """What makes two requests the same job: the kernel (its module is named by its source's
    hash), the function, numba's options and the argument types."""
    return (request["module"], request["function"],
            tuple(sorted(request["options"].items())), tuple(request["signature"]))


class Job:
    """One kernel to compile for one signature. ``done`` is set when ``payload`` (numba's
    serialized compile result, None when the worker found it in numba's disk cache:
    ``cached``) or ``error`` (a message) has arrived."""
    __slots__ = ("key", "request", "joined", "done", "payload", "error", "attempts",
                 "cached", "seconds", "worker_pid", "reported")

    def __init__(self, request, key=None):
        self.key = job_key(request) if key is None else key
        self.request = request
        self.joined = []             # requests of other calls that joined it (compile_log)
        self.done = threading.Event()
        self.payload = self.error = None
        self.attempts = 0
        self.cached = False
        self.seconds = None          # the worker's compile time
        self.worker_pid = None       # the worker that settled it
        self.reported = False        # a failure has been reported to the user (once)

    def describe(self):
        request = self.request
        types = ", ".join(map(str, request["signature"]))
        return f"kernel {request['module']}.{request['function']}({types})"


class _Stalled(Exception):
    """The worker did not answer within the job's timeout."""


class _Worker:
    """A worker process and the one thread that starts it, writes its jobs and reads its
    replies (see the module's docstring for why only this thread touches its pipes)."""

    def __init__(self, service):
        self.service = service
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name="tf_numba-compile-worker")
        self.process = None
        self.starting = True        # not yet taking jobs
        self.idle = False           # waiting for a job
        self.stopped = False        # the process is stopped (SIGSTOP): not counted as busy

    # -- the process -----------------------------------------------------------------

    def _start_process(self):
        env = dict(os.environ)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH")) if p)
        env[WORKER_ENV] = "1"
        env[PARENT_ENV] = str(os.getpid())
        from .kernel_cache import numba_target_environ
        env.update(numba_target_environ())      # numba's disk cache keys code by CPU
        process = subprocess.Popen(
            [sys.executable, "-c", "from tf_numba.lowering.compile_worker import main; main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0,
            # what numba prints while compiling would reach the user's terminal, maybe
            # after the script has ended; errors come back as replies instead
            stderr=None if os.environ.get("TF_NUMBA_WORKER_STDERR") else subprocess.DEVNULL,
            # its own session: a Ctrl-C meant for the user's script reaches the user's
            # thread only; the exit handler then stops the workers
            start_new_session=True, preexec_fn=_armed_at_start(os.getpid()))
        if _SELECTABLE_PIPES:
            os.set_blocking(process.stdin.fileno(), False)
            os.set_blocking(process.stdout.fileno(), False)
        return process

    def _process_stopped(self):
        """Is the process stopped (SIGSTOP, a debugger)? Read from /proc where there is one."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state in (b"T", b"t")

    def kill(self):
        process = self.process
        if process is not None and process.poll() is None:
            try:
                process.kill()
            except OSError:
                pass

    # -- the pipes ---------------------------------------------------------------------

    def _wait(self, fd, for_write, deadline):
        """Wait until ``fd`` is ready, noting meanwhile whether the worker is stopped;
        _Stalled past ``deadline``."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Stalled
            ready = select.select([], [fd], [], min(remaining, 1.0))[1] if for_write else \
                select.select([fd], [], [], min(remaining, 1.0))[0]
            if ready:
                if self.stopped:
                    self.service._worker_stopped(self, False)
                return
            stopped = self._process_stopped()
            if stopped != self.stopped:
                self.service._worker_stopped(self, stopped)

    def _send(self, data, deadline):
        if not _SELECTABLE_PIPES:
            self.process.stdin.write(data)
            return
        fd, view = self.process.stdin.fileno(), memoryview(data)
        while view:
            self._wait(fd, True, deadline)
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue

    def _receive(self, deadline):
        """The worker's reply, or None when its stdout has closed (it died)."""
        if not _SELECTABLE_PIPES:
            return read_message(self.process.stdout)
        fd = self.process.stdout.fileno()

        def read(size):
            while True:
                self._wait(fd, False, deadline)
                try:
                    return os.read(fd, size)
                except BlockingIOError:
                    continue
        head = _read_exactly(read, _HEADER.size)
        if head is None:
            return None
        data = _read_exactly(read, _HEADER.unpack(head)[0])
        return None if data is None else pickle.loads(data)

    # -- the thread --------------------------------------------------------------------

    def _run(self):
        service = self.service
        try:
            self.process = self._start_process()
        except Exception as err:        # no Python to start, no memory, no processes left
            service._could_not_start(self, err)
            return
        try:
            if not service._started(self):
                return
            while True:
                job = service._take(self)
                if job is None:
                    return
                outcome = self._compile(job)
                service._settle(self, job, outcome)
                if outcome[0] in ("died", "timeout"):
                    return
        finally:
            self._close()
            service._left(self)

    def _compile(self, job):
        """("ok" | "error", value, cached, seconds), or ("died" | "timeout", message)."""
        deadline = time.monotonic() + self.service.timeout
        try:
            self._send(_frame((job.attempts, job.request)), deadline)
            reply = self._receive(deadline)
        except _Stalled:
            self.kill()
            return ("timeout", f"the compile worker did not finish within "
                               f"{self.service.timeout:g} s (TF_NUMBA_COMPILE_TIMEOUT)")
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            reply = None
        if reply is None:
            self.kill()
            code = self.process.wait()
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            return ("died", f"the compile worker {how} while compiling")
        _, status, value, cached, seconds = reply
        return (status, value, cached, seconds)

    def _close(self):
        """End the process: its stdin closes (an idle worker exits on its own), and it is
        killed if it has not gone within a second."""
        process = self.process
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.kill()
            process.wait()
        try:
            process.stdout.close()
        except OSError:
            pass


class CompileService:
    """Compile jobs for worker processes (started on demand, at most one per core)."""

    def __init__(self, max_workers=None, max_queued=MAX_QUEUED, timeout=None):
        self.max_workers = max_workers or _worker_count()
        self.max_queued = max_queued
        self.timeout = timeout or _env_seconds("TF_NUMBA_COMPILE_TIMEOUT", DEFAULT_TIMEOUT)
        self._reset()
        atexit.register(self.close)

    def _reset(self):
        self._pid = os.getpid()
        self._cond = threading.Condition()
        self._queue = collections.deque()           # jobs waiting for a worker
        self._active = {}                           # key -> job queued or compiling
        self._finished = collections.OrderedDict()  # key -> recently settled job
        self._workers = []
        self._closed = False
        self.stats = collections.Counter(jobs=0, joined=0, refused=0, sent=0, retries=0,
                                         timeouts=0, workers_started=0, worker_deaths=0,
                                         dropped=0)

    def _check_fork(self):
        """A forked child: the parent's workers answer the parent's threads, which the child
        does not have (nor maybe a lock another thread held at the fork): start afresh."""
        if os.getpid() != self._pid:
            self._reset()

    # -- the user's side -----------------------------------------------------------

    def find(self, request):
        """The job for ``request`` if one is queued, compiling or recently finished."""
        self._check_fork()
        with self._cond:
            return self._known(job_key(request), request)

    def _known(self, key, request):
        """The job under ``key`` if one is queued, compiling (``request``'s call joins it:
        its log group counts it) or recently finished; None otherwise. Under ``_cond``."""
        job = self._active.get(key)
        if job is None:
            return self._finished.get(key)
        self.stats["joined"] += 1
        asked = compile_log.requested(request)
        if "group" in asked:
            job.joined.append(asked)
        return job

    def submit(self, request, block=False):
        """The Job for ``request`` (``compile_worker.compile_request`` reads it): one already
        queued, compiling or recently finished is joined; otherwise a new one is queued.
        When ``MAX_QUEUED`` jobs are waiting: None (the caller submits later), or with
        ``block`` wait for room."""
        self._check_fork()
        key = job_key(request)
        with self._cond:
            job = self._known(key, request)
            if job is not None:
                return job
            if self._closed:
                job = Job(request, key)
                job.error = "the process is exiting"
                job.done.set()
                return job
            while len(self._queue) >= self.max_queued:
                if not block:
                    self.stats["refused"] += 1
                    return None
                self._cond.wait()
            job = self._active[key] = Job(compile_log.requested(request), key)
            self._queue.append(job)
            self.stats["jobs"] += 1
            self._staff()
            self._cond.notify_all()
        return job

    def _staff(self):
        """Start a worker when queued jobs outnumber the workers ready for them (under
        ``_cond``); a stopped worker counts as neither busy nor ready."""
        running = [w for w in self._workers if not w.stopped]
        ready = sum(1 for w in running if w.idle or w.starting)
        while len(self._queue) > ready and len(running) < self.max_workers:
            worker = _Worker(self)
            self._workers.append(worker)
            running.append(worker)
            ready += 1
            self.stats["workers_started"] += 1
            worker.thread.start()

    # -- the workers' side (each called from a worker's own thread) ------------------

    def _started(self, worker):
        with self._cond:
            if self._closed or os.getpid() != self._pid:
                worker.kill()
                return False
            return True

    def _could_not_start(self, worker, err):
        """No worker can start: the queued jobs fail (their plans stay interpreted) rather
        than wait for ever."""
        with self._cond:
            if worker in self._workers:
                self._workers.remove(worker)
            failed = list(self._queue) if not self._workers else []
            for job in failed:
                self._queue.remove(job)
                job.error = f"could not start a compile worker ({type(err).__name__}: {err})"
                self._file(job)
            self._cond.notify_all()
        for job in failed:
            job.done.set()

    def _take(self, worker):
        """The next queued job for ``worker``; None when it should leave (the service is
        closing, or it has been idle for the idle time)."""
        idle_seconds = _env_seconds("TF_NUMBA_WORKER_IDLE_SECONDS", DEFAULT_IDLE_SECONDS)
        with self._cond:
            worker.starting = False
            worker.idle = True
            try:
                deadline = time.monotonic() + idle_seconds
                while not self._closed:
                    if self._queue:
                        job = self._queue.popleft()
                        job.attempts += 1
                        self.stats["sent"] += 1
                        self._cond.notify_all()        # room for a blocked submit
                        return job
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return None
                    self._cond.wait(remaining)
                return None
            finally:
                worker.idle = False

    def _worker_stopped(self, worker, stopped):
        with self._cond:
            worker.stopped = stopped
            if stopped:
                self._staff()       # another worker takes the queued jobs meanwhile

    def _settle(self, worker, job, outcome):
        status = outcome[0]
        with self._cond:
            if status in ("died", "timeout"):
                self.stats["worker_deaths"] += 1
                self.stats["timeouts"] += status == "timeout"
                if job.attempts < MAX_ATTEMPTS and not self._closed:
                    self.stats["retries"] += 1
                    self._queue.appendleft(job)
                    self._workers.remove(worker)       # (it leaves: a new one is staffed)
                    self._staff()
                    self._cond.notify_all()
                    return
                job.error = (f"{outcome[1]}, {job.attempts} times" if not self._closed
                             else "the process is exiting")
            else:
                _, value, job.cached, job.seconds = outcome
                if status == "ok":
                    job.payload = value
                else:
                    job.error = value
            job.worker_pid = worker.process.pid
            self._file(job)
            joined = list(job.joined)
        compile_log.job_done(job.request, status == "ok", job.cached, job.seconds,
                             job.worker_pid, joined)
        job.done.set()

    def _file(self, job):
        """Move a settled job from the active table to the bounded finished one (under
        ``_cond``)."""
        if self._active.get(job.key) is job:
            del self._active[job.key]
        self._finished[job.key] = job
        while len(self._finished) > FINISHED_KEPT:
            self._finished.popitem(last=False)

    def _left(self, worker):
        with self._cond:
            if worker in self._workers:
                self._workers.remove(worker)
            self._staff()       # jobs came while it was leaving
            self._cond.notify_all()

    # -- the end -----------------------------------------------------------------------

    def close(self):
        """Drop the queued jobs and stop the workers (at interpreter exit): killed, unless
        ``TF_NUMBA_COMPILE_AFTER_EXIT`` asks them to finish the job each is on, which they
        do once this process has gone and their stdin has closed."""
        if os.getpid() != self._pid:
            return
        with self._cond:
            if self._closed:
                return
            self._closed = True
            dropped = list(self._queue)
            self._queue.clear()
            for job in dropped:
                job.error = "the process is exiting"
                self._file(job)
            self.stats["dropped"] += len(dropped)
            workers = list(self._workers)
            self._cond.notify_all()
        for job in dropped:
            job.done.set()
        if compiles_after_exit():
            return
        for worker in workers:
            worker.kill()
        for worker in workers:
            if worker.process is not None:
                try:
                    worker.process.wait(timeout=1.0)    # reaped: no zombie either
                except subprocess.TimeoutExpired:
                    pass

    # -- what tests and tools read -------------------------------------------------

    def worker_pids(self):
        """The process ids of the running workers (started ones only)."""
        self._check_fork()
        with self._cond:
            return [w.process.pid for w in self._workers if w.process is not None]

    def info(self):
        self._check_fork()
        with self._cond:
            return dict(self.stats, workers=len(self._workers), queued=len(self._queue),
                        compiling=len(self._active) - len(self._queue))


def workers_of(pid):
    """The process ids of the compile workers the process ``pid`` started that are still
    running, whether or not ``pid`` itself is (a worker whose parent has gone is reparented,
    so it is found by the parent's id in its environment, ``PARENT_ENV``). Read from /proc:
    empty where there is none."""
    marker = f"{PARENT_ENV}={pid}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in environ and state != b"Z":      # (a zombie has ended)
            found.append(int(entry))
    return found


SERVICE = CompileService()
