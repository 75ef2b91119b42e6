"""A ready plan of several segments as one Python function: its calls written out.

``Plan._run_segments`` runs any plan (it types kernels, checks them, runs them mixed with
the interpreter), looking each value up in a dict and each segment's conversions up on
the segment. Once every kernel is in, a plan of many segments (region kernels: one per
fused region or library step) runs the same calls from a function whose source is the
plan's segments printed in order: values are local variables, each plain kernel is called
directly with them, and only a segment that converts its arguments (rank-0 inputs,
consts, a workspace) is called through its ``CompiledSegment``. The values no output
reaches are written into arrays the driver keeps between calls (a kernel's ``given``
outputs), so a kernel neither allocates nor boxes them. The per-segment cost is then
numba's dispatch of the call and little else.
"""
import functools

from ..core.ir import Literal
from .segments import InterpretedStep


def drive(program, segments, consts, finish):
    """``run(args) -> outputs``: the segments' calls on ``args`` in order, the outputs
    handed to ``finish`` (``plan._as_arrays`` with the plan's shared outputs)."""
    names, namespace, lines = {}, {"finish": finish}, []

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
                namespace[f"kernel{k}"] = seg.kernel.dispatcher
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
    source = "\n".join([f"def run({', '.join(params)}):", *lines])
    exec(compile(source, "<tf_numba driver>", "exec"), namespace)
    run = namespace["run"]
    run.source = source
    return lambda args: run(*args)


def _new_set(segments):
    """One set of the arrays the segments are given, in the driver's order."""
    return [array for seg in segments for array in seg.new_given()]
