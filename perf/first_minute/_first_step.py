"""A first_minute script up to its training loop: its ``step`` and the arguments of the
loop's first call (for the benchmarks that time one step, not the whole script). The
script's ``_clock`` hooks are silenced."""
import re
import sys
import types


def silence_clock():
    clock = types.ModuleType("_clock")
    for name in ("imported", "begin", "done"):
        setattr(clock, name, lambda *a: None)
    clock.step = float
    sys.modules["_clock"] = clock


def step_and_args(script):
    """``(step, args)``: the script run up to ``clock.begin()``, then its loop's first
    iteration's arguments to ``step``."""
    silence_clock()
    with open(script) as f:
        head, loop = f.read().split("clock.begin()", 1)
    call = re.search(r"=\s*(step\(.*\))\s*$", loop, re.M).group(1)
    target, iterable = re.search(r"^for (.+) in (.+):\s*$", loop, re.M).groups()
    env = {"__name__": "workload"}
    exec(compile(head, script, "exec"), env)
    exec(f"{target} = next(iter({iterable}))", env)       # the loop's first iteration
    args = eval(call.replace("step(", "(", 1) + ("," if call.count(",") == 0 else ""), env)
    return env["step"], args
