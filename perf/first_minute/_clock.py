"""The stopwatch every ``perf/first_minute`` script carries: imports, steps, losses, one JSON line.

A script's first statement is ``import _clock as clock`` (importing it starts the clock), then:

    import numpy as np, tf_numba as tf        # the script's own imports
    clock.imported()
    ...                                       # data, parameters, the jitted step
    clock.begin()
    for i in range(steps):
        params, loss = step(params, x, y)
        clock.step(loss)                      # float(loss): waits for JAX's async dispatch
    clock.done()                              # one JSON line: $FIRST_MINUTE_JSON, else stderr

Every step is waited for (``float(loss)``), in every tool alike: a step's duration is then
its own, and a script that logs its loss each step pays the same. The JSON holds seconds
since the clock started (``t0_epoch`` is that instant in ``time.time()``, so the harness adds
the interpreter's start-up), every step's end, every loss, and ``first_compiled``: the end of
the first step from which steps run within ``FAST_FACTOR`` of the steady step time
(``first_compiled_step``), the same rule for every tool, needing nothing from a library's
internals. With tf_numba imported, it also holds ``tf.cache_info()`` at the end.
"""
import json
import os
import statistics
import sys
import time

T0 = time.perf_counter()
T0_EPOCH = time.time()

FAST_FACTOR = 3.0       # a step within 3x of the steady step time counts as compiled
STEADY_FRACTION = 0.2   # the steady step time: the median of the last 20% of steps
CONFIRM_STEPS = 5       # judged on the median of that many steps: one lucky or slow step
                        # does not decide

_marks = {}
_ends = []
_losses = []


def _now():
    return time.perf_counter() - T0


def imported():
    """Mark the end of the script's imports."""
    _marks["import"] = _now()


def begin():
    """Mark the start of the training loop (the first step's duration is measured from here)."""
    _marks["begin"] = _now()


def step(loss):
    """Record one finished step and its loss; returns the loss as a Python float."""
    value = float(loss)
    _ends.append(_now())
    _losses.append(value)
    return value


def steady(durations):
    """The steady step time: the median duration of the last ``STEADY_FRACTION`` of steps."""
    return statistics.median(durations[-max(1, int(len(durations) * STEADY_FRACTION)):])


def first_compiled_step(durations, steady_time=None):
    """Index of the first step that, and the median of the ``CONFIRM_STEPS`` steps it starts
    (fewer at the end), take at most ``FAST_FACTOR`` times ``steady_time`` (default: this
    run's ``steady``); None if no step does. The median lets a stall among compiled steps
    pass; a run whose compile never lands looks compiled against its own steady time, so the
    harness passes the fastest steady time of the same script's runs.

    >>> first_compiled_step([5, 4, 1, 1, 9, 1, 1, 1, 1, 1])
    2
    >>> first_compiled_step([5, 4, 4, 4, 1], steady_time=1)
    4
    >>> first_compiled_step([5, 4, 4, 4, 4], steady_time=1) is None
    True
    """
    limit = FAST_FACTOR * (steady(durations) if steady_time is None else steady_time)
    return next((i for i in range(len(durations))
                 if durations[i] <= limit
                 and statistics.median(durations[i:i + CONFIRM_STEPS]) <= limit), None)


def done(**extra):
    """Write the script's timings as one JSON line (``$FIRST_MINUTE_JSON``, else stderr)."""
    total = _now()
    starts = [_marks["begin"]] + _ends[:-1]
    durations = [e - s for s, e in zip(starts, _ends)]
    first = first_compiled_step(durations)
    modules = {name: getattr(sys.modules[name], "__file__", None)
               for name in ("tf_numba", "jax", "numpy") if name in sys.modules}
    record = dict(t0_epoch=T0_EPOCH, imported=_marks["import"], begin=_marks["begin"],
                  first_step=_ends[0], first_compiled=None if first is None else _ends[first],
                  first_compiled_index=first,
                  steady_step=steady(durations),
                  done=total, steps=len(_ends), ends=_ends, losses=_losses,
                  modules=modules, **extra)
    tf = sys.modules.get("tf_numba")
    if tf is not None and hasattr(tf, "cache_info"):
        record["tf_cache_info"] = tf.cache_info()
    line = json.dumps(record, default=str)
    path = os.environ.get("FIRST_MINUTE_JSON")
    if path:
        with open(path, "w") as f:
            f.write(line + "\n")
    else:
        print(line, file=sys.stderr)
