"""Kernels compile in worker processes, never in a thread of the user's process.

Why: numba holds the GIL while it types and lowers, so a compile thread starved the
interpreted tier it was meant to hide (a small gradient answered at ~180 us a call instead
of ~40), and LLVM still running in a daemon thread at interpreter exit crashed the
process. A worker is a separate Python process at a lower priority
(``compile_worker.py``): it imports a kernel's module from its file (or its source text
when there is no disk cache), compiles it for the argument types the user's process saw,
saves numba's disk-cache entry where there is a cache directory, and sends back numba's
own serialized compile result, which the user's process adds to its dispatcher in
milliseconds.

Lifetime: workers start when jobs come, not before: a worker's start (Python, imports,
numba's first compile) is ~0.5-1 s of a core, which a run whose kernels are all on disk
(a rerun) would pay for nothing, and which slows the interpreted calls beside it where
the cores share their vector units or memory bandwidth; started when ``jit`` wrapped a
function it gained a cold run only the few ms to its first call. Each worker reads jobs
from a pipe. When the user's process exits, the pipe closes; a worker finishes the jobs
it has already been sent (so their kernels land in the disk cache and the next run starts
warm) and exits. Nothing else stays behind. A worker
that dies mid-compile costs a retry on a new worker; a compile that fails the same way
twice is reported to the caller, whose plan keeps running on the interpreter.
"""
import itertools
import os
import pickle
import struct
import subprocess
import sys
import threading

from . import compile_log

_HEADER = struct.Struct("<Q")
MAX_ATTEMPTS = 2                  # a job whose worker died is sent once more
WORKER_ENV = "TF_NUMBA_COMPILE_WORKER"    # set in a worker: it starts no workers itself


def _worker_count():
    """One worker per core the process may use: the user's thread keeps running
    interpreted steps meanwhile, and the workers run at a lower priority."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def write_message(stream, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream):
    """The next message, or None at end of stream (``stream`` may return short reads)."""
    head = _read_exactly(stream, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    data = _read_exactly(stream, size)
    return None if data is None else pickle.loads(data)


def _read_exactly(stream, size):
    parts, missing = [], size
    while missing:
        part = stream.read(missing)
        if not part:
            return None
        parts.append(part)
        missing -= len(part)
    return b"".join(parts)


class Job:
    """One kernel to compile for one signature. ``done`` is set when ``payload`` (numba's
    serialized compile result) or ``error`` (a message) has arrived."""
    __slots__ = ("request", "done", "payload", "error", "attempts", "cached")

    def __init__(self, request):
        self.request = request
        self.done = threading.Event()
        self.payload = self.error = None
        self.attempts = 0
        self.cached = False        # the worker found it in numba's disk cache


class _Worker:
    """A worker process, its pipe, the jobs sent to it, and the thread reading its replies
    (blocked in a read, that thread holds no GIL)."""

    def __init__(self, service):
        self.service = service
        self.jobs = {}
        env = dict(os.environ)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH")) if p)
        env[WORKER_ENV] = "1"
        from .kernel_cache import numba_target_environ
        env.update(numba_target_environ())      # numba's disk cache keys code by CPU
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from tf_numba.lowering.compile_worker import main; main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
            # what numba prints while compiling would reach the user's terminal, maybe
            # after the script has ended; errors come back as replies instead
            stderr=None if os.environ.get("TF_NUMBA_WORKER_STDERR") else subprocess.DEVNULL,
            # its own session: a Ctrl-C meant for the user's script does not cut a compile
            # short, and the worker finishes what it was sent into the cache
            start_new_session=True)
        self.lock = threading.Lock()
        self.dead = False           # its replies have ended: send nothing more to it
        self.reader = threading.Thread(target=self._read_replies, daemon=True,
                                       name="tf_numba-compile-replies")
        self.reader.start()

    def send(self, job_id, job):
        """Send ``job``; False if this worker has already gone (the caller sends it to
        another), since its reader has handed on the jobs it had, not this one."""
        with self.lock:
            if self.dead:
                return False
            self.jobs[job_id] = job
            try:
                write_message(self.process.stdin, (job_id, job.request))
            except (OSError, ValueError):      # the worker is gone: the reader retries it
                pass
        return True

    def _read_replies(self):
        stream = self.process.stdout
        while True:
            try:
                reply = read_message(stream)
            except (OSError, EOFError, pickle.UnpicklingError):
                reply = None
            if reply is None:
                break
            job_id, status, value, cached, seconds = reply
            with self.lock:
                job = self.jobs.pop(job_id, None)
            if job is None:
                continue
            job.cached = cached
            compile_log.job_done(job.request, status == "ok", cached, seconds,
                                 self.process.pid)
            if status == "ok":
                job.payload = value
            else:
                job.error = value
            job.done.set()
        self.process.wait()
        with self.lock:
            self.dead = True
            orphans, self.jobs = list(self.jobs.items()), {}
        self.service._worker_died(self, orphans)

    @property
    def load(self):
        return len(self.jobs)


class CompileService:
    """Sends compile jobs to worker processes (started on demand, at most one per core)."""

    def __init__(self, max_workers=None):
        self.max_workers = max_workers or _worker_count()
        self._workers = []
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self.stats = {"jobs": 0, "retries": 0, "workers_started": 0, "worker_deaths": 0}

    def submit(self, request):
        """A Job for ``request`` (``compile_worker.compile_request`` reads it)."""
        job = Job(request)
        self._dispatch(job)
        return job

    def _start_worker(self):
        worker = _Worker(self)
        self._workers.append(worker)
        self.stats["workers_started"] += 1
        return worker

    def _dispatch(self, job):
        job.attempts += 1
        if os.getpid() != self._pid:
            # a forked child: the parent's workers answer the parent's reader threads,
            # which the child does not have (nor maybe a lock another thread held at the
            # fork): it starts afresh, with workers of its own
            self._workers, self._pid, self._lock = [], os.getpid(), threading.Lock()
        self.stats["jobs"] += 1
        while True:         # (a worker that has just gone refuses the job: the next one)
            with self._lock:
                alive = [w for w in self._workers if not w.dead]
                idle = [w for w in alive if w.load == 0]
                if idle:
                    worker = idle[0]
                elif len(alive) < self.max_workers:
                    worker = self._start_worker()
                else:
                    worker = min(alive, key=lambda w: w.load)
            if worker.send(next(self._ids), job):
                return

    def _worker_died(self, worker, orphans):
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
            if orphans:
                self.stats["worker_deaths"] += 1
        for _, job in orphans:
            if worker.process.returncode == 0:
                # it left idle just as the job was sent: not the job's fault
                job.attempts -= 1
                self._dispatch(job)
            elif job.attempts < MAX_ATTEMPTS:
                self.stats["retries"] += 1
                self._dispatch(job)
            else:
                job.error = (f"the compile worker exited (code {worker.process.returncode}) "
                             f"while compiling, {job.attempts} times")
                job.done.set()

    def worker_pids(self):
        with self._lock:
            return [w.process.pid for w in self._workers]

    def info(self):
        with self._lock:
            return dict(self.stats, workers=len(self._workers))


SERVICE = CompileService()
