"""Evaluate a Program op by op: with the NumPy impls, or by staging into the current trace.

Evaluating a program inside a trace is how a transformed program is inlined into an outer
one (``grad(grad(f))``); the equations keep the source lines they were traced at.
"""
from ..errors import TfNumbaError
from .ir import Literal, Var
from .trace import Tracer, current_builder


def eval_program(program, args):
    """Run ``program`` on ``args`` (a flat list) and return the flat list of outputs."""
    if len(args) != len(program.invars):
        raise TypeError(f"program takes {len(program.invars)} inputs, got {len(args)}")
    builder = current_builder()
    if builder is None and not any(type(a) is Tracer for a in args):
        return _eval_concrete(program, args)
    return _eval_staged(program, args, builder)


def _read(env, v):
    return v.value if type(v) is Literal else env[v]


def _eval_concrete(program, args):
    regs, outs, steps = _schedule(program)
    regs = regs.copy()
    regs[:len(args)] = args
    for impl, ins, params, out, kills, eqn in steps:
        try:
            value = impl(*[regs[i] for i in ins], **params)
        except TfNumbaError as err:      # (say where: the equation's line in the user's code)
            raise err.locate(eqn.prim.name, eqn.source)
        if type(out) is int:
            regs[out] = value
        else:
            for i, x in zip(out, value):
                regs[i] = x
        for i in kills:
            regs[i] = None
    return [regs[i] for i in outs]


def _schedule(program):
    """``program`` as registers and steps, made once per program: the inputs, then the
    consts and literals, in the first registers (a copy of that list starts a run); per
    equation ``(impl, input registers, params, output register or registers, registers
    read for the last time, eqn)``; and the output registers. Half the cost of running a
    scan body's step per step went on a dict of values and its bookkeeping."""
    if program._schedule is not None:
        return program._schedule
    where, regs = {}, []

    def register(v, value=None):
        where[v] = len(regs)
        regs.append(value)
        return where[v]

    def read(v):
        if type(v) is Literal:
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
    for eqn, dead in zip(program.eqns, dying):
        ins = tuple(read(v) for v in eqn.invars)
        outs = tuple(register(v) for v in eqn.outvars)
        steps.append((eqn.prim.impl, ins, eqn.params,
                      outs if eqn.prim.multiple_results else outs[0],
                      tuple(where[v] for v in dead), eqn))
    program._schedule = (regs, [read(v) for v in program.outvars], steps)
    return program._schedule


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
