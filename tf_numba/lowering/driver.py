"""A ready plan of several segments as one Python function: its calls written out.

``Plan._run_segments`` runs any plan (it types kernels, checks them, runs them mixed with
the interpreter), looking each value up in a dict and each segment's conversions up on
the segment. Once every kernel is in, a plan of many segments (region kernels: one per
fused region or library step) runs the same calls from a function whose source is the
plan's segments printed in order: values are local variables, each plain kernel is called
directly with them, and only a segment that converts its arguments (rank-0 inputs,
consts, a workspace) is called through its ``CompiledSegment``. The values no output
reaches are written into arrays the driver keeps between calls (a kernel's ``given``
outputs), so a kernel neither allocates nor boxes them.

Each plain kernel is called through its machine code's entry point for the argument types
its first driven call handed it (``entry_points``), skipping numba's type dispatch (~130 ns
a call and ~30 ns an array). An entry point reads any array as the layout it was typed
for, so the driver first checks that every array input is laid out as on that call
(C-ordered, aligned, writable: every kernel's argument types follow from its inputs'),
and hands any other call to the same calls through the dispatchers.
"""
import functools

import numpy as np

from ..core.ir import Literal
from .segments import InterpretedStep


def drive(program, segments, consts, finish, entries=None, fallback=None):
    """``run(args) -> outputs``: the segments' calls on ``args`` in order, the outputs
    handed to ``finish`` (``plan._as_arrays`` with the plan's shared outputs).
    ``entries`` ({segment index: entry point}, of ``entry_points``) are called in place of
    those segments' dispatchers on calls whose array inputs are all C-ordered, aligned
    and writable; ``fallback(args)`` runs the others."""
    names, namespace, lines = {}, {"finish": finish}, []
    entries = entries or {}

    def local(v):
        if v not in names:
            names[v] = f"v{len(names)}"
        return names[v]

    def read(v):
        if type(v) is Literal or v in consts:
            key = f"c{len(namespace)}"
            namespace[key] = v.value if type(v) is Literal else consts[v]
            return key
        return names[v]

    params = [local(v) for v in program.invars]
    kept, holders = [], []     # the given values, and the segments that write them
    for k, seg in enumerate(segments):
        if type(seg) is InterpretedStep:
            eqn = seg.eqn
            namespace[f"step{k}"] = functools.partial(eqn.prim.impl, **eqn.params)
            call = f"step{k}({', '.join(read(v) for v in eqn.invars)})"
            outs = [local(v) for v in eqn.outvars]
            many = eqn.prim.multiple_results
        else:
            sub = seg.program
            args = [read(v) for v in sub.invars]
            outs = [local(v) for v in sub.outvars]
            given = [f"kept[{len(kept) + j}]" for j in range(len(seg.given))]
            kept.extend(seg.given)
            if seg.given:
                holders.append(seg)
            if seg.direct:
                # the kernel writes its given outputs into the kept arrays, returns the rest
                for v, array in zip(seg.given, given):
                    lines.append(f"    {names[v]} = {array}")
                namespace[f"kernel{k}"] = entries.get(k) or seg.kernel.dispatcher
                call = f"kernel{k}({', '.join(args + [names[v] for v in seg.given])})"
                outs = [names[v] for v in sub.outvars if v not in seg.given]
                many = len(outs) > 1
            else:
                namespace[f"segment{k}"] = seg
                arrays = f", [{', '.join(given)}]" if given else ""
                call = f"segment{k}([{', '.join(args)}]{arrays})"
                many = True
        target = ", ".join(outs) + ("," if many and len(outs) == 1 else "")
        lines.append(f"    {target} = {call}" if outs else f"    {call}")
    outputs = ", ".join(read(v) for v in program.outvars)
    if kept:
        # one set of arrays per call in flight: a call takes a set from the pool (list
        # pop and append are atomic), and puts it back when its outputs are made
        namespace["pool"], namespace["new_set"] = [], functools.partial(_new_set, holders)
        lines = ["    kept = pool.pop() if pool else new_set()", *lines,
                 f"    outputs = finish([{outputs}])", "    pool.append(kept)",
                 "    return outputs"]
    else:
        lines.append(f"    return finish([{outputs}])")
    arrays = [names[v] for v in program.invars if v.aval.shape]
    if entries and arrays:
        namespace["fallback"] = fallback
        lines = [f"    if not ({' and '.join(f'{a}.flags.carray' for a in arrays)}):",
                 f"        return fallback([{', '.join(params)}])", *lines]
    source = "\n".join([f"def run({', '.join(params)}):", *lines])
    exec(compile(source, "<tf_numba driver>", "exec"), namespace)
    run = namespace["run"]

    def call(args):
        return run(*args)
    call.source, call.entries = source, len(entries)
    return call


def entry_points(program, segments, args, run_segments):
    """(``run_segments(args, run_kernel)``'s outputs, {segment index: entry point}): the
    segments run through their dispatchers, and each plain kernel's entry point for the
    types it was handed is kept. None are kept when an array input is not C-ordered,
    aligned and writable (``drive`` checks that every later call's are), nor for a kernel
    that reads a NumPy step's output (whose layout NumPy chooses)."""
    if not all(type(a) is np.ndarray and a.flags.carray
               for v, a in zip(program.invars, args) if v.aval.shape):
        return run_segments(args), {}
    index = {id(seg): k for k, seg in enumerate(segments)}
    from_numpy = {v for seg in segments if type(seg) is InterpretedStep
                  for v in seg.eqn.outvars}
    entries = {}

    def run_kernel(seg, seg_args):
        outs = seg(seg_args)        # (a direct segment's call leaves seg_args as they are)
        if seg.direct and from_numpy.isdisjoint(seg.program.invars):
            entry = seg.kernel.entry_point(seg.signature(seg_args))
            if entry is not None:
                entries[index[id(seg)]] = entry
        return outs
    return run_segments(args, run_kernel), entries


def _new_set(segments):
    """One set of the arrays the segments are given, in the driver's order."""
    return [array for seg in segments for array in seg.new_given()]
