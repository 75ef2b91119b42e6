"""Evaluate a Program op by op: with the NumPy impls, or by staging into the current trace.

Evaluating a program inside a trace is how a transformed program is inlined into an outer
one (``grad(grad(f))``); the equations keep the source lines they were traced at.
"""
from ..errors import TfNumbaError
from .ir import Literal
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
    env = dict(zip(program.invars, args))
    env.update(program.consts)
    dying = program.last_use()
    for eqn, dead in zip(program.eqns, dying):
        prim = eqn.prim
        try:
            out = prim.impl(*[v.value if type(v) is Literal else env[v] for v in eqn.invars],
                            **eqn.params)
        except TfNumbaError as err:      # (say where: the equation's line in the user's code)
            raise err.locate(prim.name, eqn.source)
        if prim.multiple_results:
            env.update(zip(eqn.outvars, out))
        else:
            env[eqn.outvars[0]] = out
        for v in dead:
            del env[v]
    return [_read(env, v) for v in program.outvars]


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
