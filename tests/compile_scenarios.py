"""Compile-service scenarios: user scripts that the tests (``test_compile_service.py``)
run once each and ``perf/compile_service_stress.py`` runs many times, in fresh processes.

``script(body)`` is a body with ``PRELUDE`` in front: its ``wait_compiling()`` returns once
a worker has the job and prints the workers' pids; its ``report(**values)`` prints one
line of ``name value`` pairs (the service's jobs, retries and refused submissions first),
which ``reported`` reads back.
"""
import textwrap

PRELUDE = """
import os, sys, threading, time
import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
from tf_numba.lowering.compile_service import SERVICE

def wait_compiling():
    while not SERVICE.info()["compiling"]:
        time.sleep(0.01)
    print(*SERVICE.worker_pids(), flush=True)

def report(**values):
    info = SERVICE.info()
    print("jobs", info["jobs"], "retries", info["retries"], "refused", info["refused"],
          *[f"{k} {v}" for k, v in values.items()], flush=True)
"""

SWEEP = """
f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * x))
worst = 0.0
for n in range(2, 5200):
    x = np.linspace(0.0, 1.0, n)
    worst = max(worst, abs(float(f(x)) - np.sum(np.sin(x) * x)) / n)
report(worst=worst)
"""

THREADS = """
scales = [1.0 + k / 64 for k in range(50)]
fns = [tf.jit(lambda x, s=s: tnp.sum(tnp.tanh(x * s))) for s in scales]
x = np.linspace(-1.0, 1.0, 17)
wrong = []

def calls(t):
    for i in range(1250):
        k = (i * 7 + t * 13) % 50
        if abs(float(fns[k](x)) - np.sum(np.tanh(x * scales[k]))) > 1e-12:
            wrong.append(k)
threads = [threading.Thread(target=calls, args=(t,)) for t in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
report(wrong=len(wrong))
"""

# compiles one kernel, says which worker has it, then waits in compile()
WAITS = """
f = tf.jit(lambda x: tnp.sum(tnp.exp(x) * 0.71875))
x = np.linspace(0.0, 1.0, 37)
f(x)
wait_compiling()
if sys.argv[1:] == ["others"]:        # after the harness has stopped that worker
    sys.stdin.readline()
    started = time.monotonic()
    for s in (0.25, 0.375):
        g = tf.jit(lambda x, s=s: tnp.sum(tnp.cos(x) * s))
        g(x)
        g.lower(x).plan.compile()
        assert g.lower(x).plan.ready and abs(float(g(x)) - np.sum(np.cos(x) * s)) < 1e-14
    print("others", time.monotonic() - started, flush=True)
f.lower(x).plan.compile()
assert f.lower(x).plan.ready
report(error=abs(float(f(x)) - np.sum(np.exp(x) * 0.71875)))
"""

EXITS = """
f = tf.jit(lambda x: tnp.sum(tnp.exp(tnp.sin(x)) * 0.8125))
x = np.linspace(0.0, 1.0, 37)
f(x)
wait_compiling()
report()
"""

TWO = """
x = np.linspace(0.0, 2.0, 41)
for s in (0.40625, 0.46875, 0.53125):
    f = tf.jit(lambda x, s=s: tnp.max(tnp.sin(x) * s) + tnp.sum(x * s))
    f(x)
    f.lower(x).plan.compile()
    assert abs(float(f(x)) - (np.max(np.sin(x) * s) + np.sum(x * s))) < 1e-13
report()
"""


def script(*bodies):
    """A runnable script: ``PRELUDE`` and ``bodies``, in order."""
    return textwrap.dedent(PRELUDE) + "".join(textwrap.dedent(b) for b in bodies)


def reported(out):
    """The ``name value`` pairs of the last line a script printed (its ``report``)."""
    words = out.strip().splitlines()[-1].split()
    return dict(zip(words[::2], words[1::2]))
