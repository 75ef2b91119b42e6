"""Vectorization (``vmap``) as a Program -> Program transform, and helpers for batch rules.

``batch_program(program, in_dims, axis_size)`` replays ``program`` with some inputs carrying
an extra batch axis (``in_dims[i]``: its position, or None for an unbatched input). Each
equation with a batched operand calls its primitive's ``batch`` rule,
``rule(args, dims, **params) -> (out, out_dim)``; the rest are replayed as they are. A rule
may leave the batch axis wherever it is cheapest (axes move only when an op needs it: under
jit a transpose is a copy), so every value carries its own batch dim, or None.
"""
from collections import Counter

from ..core.ir import Literal, ShapedArray
from ..core.linear import ARRAY_OPS, aval_of
from ..core.primitive import RULES
from ..core.trace import ProgramBuilder
from ..errors import MissingRuleError

not_mapped = None


def batched_aval(aval, dim, size):
    """``aval`` with a batch axis of ``size`` inserted at ``dim`` (None: unchanged)."""
    if dim is None:
        return aval
    shape = aval.shape
    return ShapedArray(shape[:dim] + (size,) + shape[dim:], aval.dtype)


def unbatched_aval(aval, dim):
    if dim is None:
        return aval
    return ShapedArray(aval.shape[:dim] + aval.shape[dim + 1:], aval.dtype)


def shape_of(x):
    return aval_of(x).shape


def moveaxis(x, src, dst):
    """``x`` with axis ``src`` moved to ``dst`` (no equation when they are equal)."""
    if src == dst:
        return x
    rank = len(shape_of(x))
    perm = [a for a in range(rank) if a != src]
    perm.insert(dst, src)
    return ARRAY_OPS["transpose"](x, tuple(perm))


def broadcast_batch(x, size, dst):
    """An unbatched ``x`` repeated ``size`` times along a new axis at ``dst``."""
    shape = shape_of(x)
    out = shape[:dst] + (size,) + shape[dst:]
    return ARRAY_OPS["broadcast_in_dim"](x, out, tuple(a for a in range(len(out)) if a != dst))


def bdim_to(x, dim, dst, size):
    """``x`` with its batch axis at ``dst``: moved if it has one, broadcast if not."""
    if dim is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, dim, dst)


def axis_size_of(args, dims):
    """The batch size, read off the first batched operand."""
    for x, d in zip(args, dims):
        if d is not None:
            return shape_of(x)[d]
    raise ValueError("no batched operand")


def shift_axis(axis, dim):
    """Position in the batched value of the unbatched value's ``axis`` (batch axis at dim)."""
    return axis + (dim is not None and axis >= dim)


def common_dim(args, dims, rank=None):
    """The most frequent batch dim among batched operands (of unbatched rank ``rank``)."""
    found = Counter(d for x, d in zip(args, dims) if d is not None
                    and (rank is None or len(shape_of(x)) - 1 == rank))
    return found.most_common(1)[0][0] if found else 0


def batch_program(program, in_dims, axis_size, out_dims=None):
    """The batched ``program``: input ``i`` gains a batch axis of ``axis_size`` at
    ``in_dims[i]`` (None: not batched).

    Returns ``(batched, out_dims)``. With ``out_dims`` given (one int or None per output),
    an output with an int there is moved (or broadcast) to that batch axis; None keeps
    whatever the rules produced (possibly unbatched).
    """
    in_dims = tuple(in_dims)
    with ProgramBuilder() as builder:
        builder.inherit(program)
        ins = [builder.new_input(batched_aval(v.aval, d, axis_size))
               for v, d in zip(program.invars, in_dims)]
        outs, dims = batch_eval(program, ins, in_dims, axis_size, builder)
        if out_dims is not None:
            moved = []
            for x, d, want in zip(outs, dims, out_dims):
                if want is None:
                    moved.append(x)
                    continue
                moved.append(bdim_to(x, d, want, axis_size))
            dims = [d if want is None else want for d, want in zip(dims, out_dims)]
            outs = moved
        batched, _ = builder.build(outs)
    return batched, list(dims)


def batch_eval(program, args, in_dims, axis_size, builder=None):
    """Evaluate ``program`` on batched ``args`` in the current trace: (outs, out_dims)."""
    env = dict(zip(program.invars, args))
    denv = {v: d for v, d in zip(program.invars, in_dims) if d is not None}
    env.update(program.consts)
    saved = builder.source_override if builder is not None else None

    def read(v):
        return v.value if type(v) is Literal else env[v]

    try:
        for eqn in program.eqns:
            if builder is not None:
                builder.source_override = eqn.source
            vals = [read(v) for v in eqn.invars]
            ds = [None if type(v) is Literal else denv.get(v) for v in eqn.invars]
            if all(d is None for d in ds):
                out = eqn.prim.bind(*vals, **eqn.params)
                outs = out if eqn.prim.multiple_results else [out]
                env.update(zip(eqn.outvars, outs))
                continue
            rule = RULES["batch"].get(eqn.prim)
            if rule is None:
                raise MissingRuleError(eqn.prim.name, "batching", eqn.prim.family)
            out, od = rule(vals, ds, **eqn.params)
            if not eqn.prim.multiple_results:
                out, od = [out], [od]
            for v, x, d in zip(eqn.outvars, out, od):
                env[v] = x
                if d is not None:
                    denv[v] = d
    finally:
        if builder is not None:
            builder.source_override = saved
    outs = [read(v) for v in program.outvars]
    dims = [None if type(v) is Literal else denv.get(v) for v in program.outvars]
    return outs, dims
