"""Evaluate a Program op by op: with the NumPy impls, or by staging into the current trace.

Evaluating a program inside a trace is how a transformed program is inlined into an outer
one (``grad(grad(f))``); the equations keep the source lines they were traced at.
"""
import keyword
import math
import sys

import numpy as np

from ..errors import TfNumbaError
from .ir import Literal, Var
from .primitive import EFFECTFUL
from .trace import Tracer, current_builder


def eval_program(program, args):
    """Run ``program`` on ``args`` (a flat list) and return the flat list of outputs."""
    if len(args) != len(program.invars):
        raise TypeError(f"program takes {len(program.invars)} inputs, got {len(args)}")
    builder = current_builder()
    if builder is None and not any(type(a) is Tracer for a in args):
        return run_concrete(program, args)
    return _eval_staged(program, args, builder)


def _read(env, v):
    return v.value if type(v) is Literal else env[v]


def run_concrete(program, args):
    """``eval_program`` for a caller that knows ``args`` are values (no tracer) and that no
    trace is being built: a loop running its body program once a step."""
    schedule = program._schedule or _schedule(program)
    run = schedule.run
    if run is None:
        schedule.runs += 1
        if schedule.runs < COMPILE_AFTER_RUNS:
            return _run_steps(schedule, args)
        run = schedule.run = _as_python(program, schedule)
    try:
        return run(args)
    except TfNumbaError as err:      # (say where: the equation's line in the user's code)
        eqn = _failing_eqn(err, run)
        if eqn is None:
            raise
        err.locate(eqn.prim.name, eqn.source)
        raise


# A program run this many times is run as a Python function written for it (_as_python):
# it saves ~0.3 us an equation a run (a scan body's, every step), and writing it costs ~25
# us an equation once, which a program run once or twice (an eager transform) need not pay.
COMPILE_AFTER_RUNS = 8


class _Schedule:
    """How the interpreter runs a program (``_schedule``), and how often it has."""
    __slots__ = ("regs", "outs", "steps", "runs", "run")

    def __init__(self, regs, outs, steps):
        self.regs, self.outs, self.steps = regs, outs, steps
        self.runs, self.run = 0, None


def _run_steps(schedule, args):
    regs = schedule.regs.copy()
    regs[:len(args)] = args
    for impl, ins, params, out, kills, eqn in schedule.steps:
        try:
            value = impl(*[regs[i] for i in ins], **params)
        except TfNumbaError as err:      # (say where: the equation's line in the user's code)
            err.locate(eqn.prim.name, eqn.source)
            raise
        if type(out) is int:
            regs[out] = value
        else:
            for i, x in zip(out, value):
                regs[i] = x
        for i in kills:
            regs[i] = None
    return [regs[i] for i in schedule.outs]


def _schedule(program):
    """``program`` as registers and steps, made once per program: the inputs, then the
    consts and literals, in the first registers (a copy of that list starts a run); per
    equation ``(impl, input registers, params, output register or registers, registers
    read for the last time, eqn)``; and the output registers. Half the cost of running a
    scan body's step per step went on a dict of values and its bookkeeping."""
    where, regs = {}, []

    def register(v, value=None):
        where[v] = len(regs)
        regs.append(value)
        return where[v]

    constant = set()                # the registers of consts, literals and folded values

    def read(v):
        if type(v) is Literal:
            constant.add(len(regs))
            regs.append(v.value)
            return len(regs) - 1
        return where[v]

    for v in program.invars:
        register(v)
    for v, value in program.consts:
        register(v, value)
    last = {}
    for k, eqn in enumerate(program.eqns):
        for v in eqn.invars:
            if type(v) is Var:
                last[v] = k
    for v in program.outvars:
        last.pop(v, None)
    dying = [[] for _ in program.eqns]
    for v, k in last.items():
        dying[k].append(v)
    steps = []
    constant.update(range(len(program.invars), len(regs)))
    for eqn, dead in zip(program.eqns, dying):
        ins = tuple(read(v) for v in eqn.invars)
        if constant.issuperset(ins) and _foldable(eqn):
            try:
                value = eqn.prim.impl(*[regs[i] for i in ins], **eqn.params)
            except Exception:       # left for the run to raise, naming the user's line
                pass
            else:       # (as a NumPy scalar: what every run returns is its own)
                value = value[()] if type(value) is np.ndarray else value
                constant.add(register(eqn.outvars[0], value))
                continue
        outs = tuple(register(v) for v in eqn.outvars)
        steps.append((eqn.prim.impl, ins, eqn.params,
                      outs if eqn.prim.multiple_results else outs[0],
                      tuple(where[v] for v in dead), eqn))
    program._schedule = _Schedule(regs, [read(v) for v in program.outvars], steps)
    return program._schedule


def _foldable(eqn):
    """An equation of constants with a scalar result is computed once, when its program is
    scheduled: a mean's 1/n was three equations a run (dim_size, convert, divide), where
    NumPy's hand-written mean has none. Not an array: a run would hand out the same one
    each time (and a view of it), for its caller to change."""
    return (not eqn.prim.multiple_results and eqn.prim not in EFFECTFUL
            and eqn.outvars[0].aval.shape == ())


# An equation whose impl is a NumPy ufunc writes its result into the array of an operand
# read for the last time, when nothing else holds that array (NumPy's own temporary
# elision, by the same reference count, which NumPy applies to arrays of 256 KiB or more
# in an expression): an interpreted step then touches as many buffers as NumPy written by
# hand, not one more per equation. Below this size the check costs more than it saves.
REUSE_BYTES = 1 << 14


def _refs(a):
    return sys.getrefcount(a)


def _held_once():
    a = np.empty(0)
    return _refs(a)


_HELD_ONCE = _held_once()     # a local's array, as seen inside a function it is passed to


def _reusable(a, shape):
    """Can ``a`` take a result of ``shape``: an array owning its memory (no view of it
    stays live: a view holds a reference to it) that only the caller's variable holds."""
    return (type(a) is np.ndarray and a.base is None and a.shape == shape
            and a.flags.writeable and sys.getrefcount(a) == _HELD_ONCE)


def _reused_operand(eqn, ins, kills, params, local):
    """The register whose array ``eqn``'s result may be written into (None if none): an
    operand read for the last time, of the result's dtype, by a ufunc whose result is
    large enough to be worth it."""
    if params or not isinstance(eqn.prim.impl, np.ufunc) or len(eqn.outvars) != 1:
        return None
    aval = eqn.outvars[0].aval
    if not all(type(d) is int for d in aval.shape):
        return None
    if math.prod(aval.shape) * np.dtype(aval.dtype).itemsize < REUSE_BYTES:
        return None
    for reg, v in zip(ins, eqn.invars):
        if reg in kills and reg in local and type(v) is Var and v.aval.dtype == aval.dtype:
            return reg
    return None


def _as_python(program, schedule):
    """The schedule's steps written out as one Python function of the argument list: each
    equation one line, a call of its impl on local variables with its params as keywords
    (into a dying operand's array where ``_reused_operand`` finds one), and a ``del`` of
    the values read for the last time (as the steps' registers are cleared). The consts,
    literals, impls and params are the function's globals."""
    n_in = len(program.invars)
    local = set(range(n_in))            # registers that are the function's variables
    for step in schedule.steps:
        local.update([step[3]] if type(step[3]) is int else step[3])
    space = {"_reusable": _reusable}
    reuses = 0

    def name_of(reg):
        if reg in local:
            return f"r{reg}"
        space[f"k{reg}"] = schedule.regs[reg]      # a const or a literal
        return f"k{reg}"

    lines = ["def run(args):"]
    if n_in:
        lines.append("    " + "".join(f"r{i}, " for i in range(n_in)) + "= args")
    eqn_at = {}
    for k, (impl, ins, params, out, kills, eqn) in enumerate(schedule.steps):
        space[f"f{k}"] = impl
        call = [name_of(i) for i in ins]
        if all(key.isidentifier() and not keyword.iskeyword(key) for key in params):
            for key, value in params.items():
                space[f"p{k}_{key}"] = value
                call.append(f"{key}=p{k}_{key}")
        elif params:
            space[f"p{k}"] = params
            call.append(f"**p{k}")
        target = (f"r{out} = " if type(out) is int else
                  "".join(f"r{i}, " for i in out) + "= " if out else "")
        eqn_at[len(lines) + 1] = eqn
        args = ", ".join(call)
        expr = f"f{k}({args})"
        reused = _reused_operand(eqn, ins, kills, params, local)
        if reused is not None:
            space[f"s{k}"] = eqn.outvars[0].aval.shape
            expr = f"f{k}({args}, out=r{reused}) if _reusable(r{reused}, s{k}) else {expr}"
            reuses += 1
        lines.append(f"    {target}{expr}")
        dead = [f"r{i}" for i in kills if i in local]
        if dead:
            lines.append(f"    del {', '.join(dead)}")
    lines.append(f"    return [{', '.join(name_of(i) for i in schedule.outs)}]")
    exec(compile("\n".join(lines), "<tf_numba interpreter>", "exec"), space)
    run = space["run"]
    run.eqn_at = eqn_at                 # line -> equation, for its errors
    run.reuses = reuses                 # equations that may write into an operand
    return run


def _failing_eqn(err, run):
    """The equation whose line of ``run`` raised ``err`` (None if not one of them)."""
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is run.__code__:
            return run.eqn_at.get(tb.tb_lineno)
        tb = tb.tb_next
    return None


def _eval_staged(program, args, builder):
    env = dict(zip(program.invars, args))
    env.update(program.consts)
    saved = builder.source_override if builder is not None else None
    if builder is not None:
        builder.inherit(program)
    try:
        for eqn in program.eqns:
            if builder is not None:
                builder.source_override = eqn.source
            out = eqn.prim.bind(*[_read(env, v) for v in eqn.invars], **eqn.params)
            if eqn.prim.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
    finally:
        if builder is not None:
            builder.source_override = saved
    return [_read(env, v) for v in program.outvars]
