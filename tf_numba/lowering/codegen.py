"""Generate the Python source of one numba kernel for a whole program.

The kernel takes the program inputs (rank-0 inputs as scalars), runs the steps from
``partition`` in order — fused regions as explicit loop nests, library steps through the
``lower`` rule of their primitive — and returns the outputs as a tuple. Dims are written
through ``DimEnv``, so the same source serves every length it is valid for.
"""
import collections
import math

import numpy as np

from ..core.ir import Literal, Var
from ..errors import MissingRuleError
from . import unrolled
from .dims import DimEnv
from .partition import (FusedRegion, RowGroup, cuts_into_row_chunks, group_rows, partition,
                        reductions_across_rows, row_helper)
from . import vreduce
from ..kernel_vocab.rules import IndexMap, Reduction, fusion, is_reduction, lowering_of
from ..kernel_vocab.scalar_exprs import ctor, literal


class Emitter:
    """Source lines plus names for program values; handed to library ``lower`` rules."""

    def __init__(self, program, dims):
        self.lines = []
        self.indent = 1
        self.names = {}
        self.dims = dims
        self.counter = 0
        self.parallel = False       # may large top-level regions be numba.prange loops
        self.products_on_numpy = True           # loops.gemm_into, else loops.dot_into
        self.hoisted = None         # inside a loop: lines run once, before the outermost loop
        self.destinations = {}      # value -> the array its step writes it into
        self.elements = {}          # tiny value -> the scalars holding its elements (unrolled)
        self.private = set()        # values no output can reach: allocated from ``ws``
        self.uses = collections.Counter()   # top-level value -> equations reading it
        self.uses_workspace = False
        self.uses_prange = False    # facts for the Generated record
        self.serial_products = False    # a large product runs on one thread (parallel)
        self.threaded_calls = False     # it calls a loops helper that has a prange
        self.blas = set()           # BLAS libraries the products call (ext.*_BLAS)

    def emit(self, line):
        self.lines.append("    " * self.indent + line)

    def fresh(self, prefix="t"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def name(self, v):
        """Source for a value: a variable name, or a literal."""
        if type(v) is Literal:
            return literal(v.value, v.aval.dtype)
        return self.names[v]

    def define(self, v, prefix="v"):
        name = self.fresh(prefix)
        self.names[v] = name
        return name

    def allocate(self, name, v, shape):
        """``name = `` a new array for ``v`` (``shape``: source of its shape here), which its
        step then fills completely.

        Inside a loop the array is allocated once, before the outermost loop, and every
        iteration reuses it: the loop rules copy whatever outlives an iteration
        (``control``). A value with a ``destinations`` entry (a loop's output row or next
        carry) is written straight there. A top-level value no output can reach comes
        from the kernel's workspace (``workspace``), which outlives the call.
        """
        slot = self.destinations.pop(v, None)
        if slot is not None:
            self.emit(f"{name} = {slot}")
        elif v in self.private and self.hoisted is None and self.indent == 1:
            self.uses_workspace = True
            self.emit(f"{name} = workspace.take(ws, {shape}, {ctor(v.aval.dtype)})")
        elif self.hoisted is not None and self.dims.writable(v.aval.shape):
            self.hoisted.append(f"{name} = np.empty({self.shape(v.aval.shape)}, "
                                f"{ctor(v.aval.dtype)})")
        else:
            self.emit(f"{name} = np.empty({shape}, {ctor(v.aval.dtype)})")

    def shape(self, shape):
        return self.dims.shape(shape)

    def dim(self, d):
        return self.dims.expr(d)


class Generated:
    """What code generation made: the kernel's ``source`` and the ``steps`` (partition) it
    was built from, and the facts its callers need, recorded as they were emitted (never
    read back out of the text): ``parallel`` (it has a ``numba.prange`` loop),
    ``workspace`` (its last parameter is a ``workspace``), ``blas`` (the BLAS libraries
    its products call: ``ext.NUMPY_BLAS`` and/or ``ext.SCIPY_BLAS``),
    ``serial_products`` (a parallel kernel calls BLAS for a large product on one thread:
    ``library._product``), ``threaded_calls`` (it calls a ``loops`` helper that runs
    across threads, so it runs as wide as the engine too, though its own code has no
    prange: numba would warn that ``parallel=True`` found nothing to do)."""
    __slots__ = ("source", "steps", "parallel", "workspace", "blas", "serial_products",
                 "threaded_calls")

    def __init__(self, source, steps, parallel, workspace, blas, serial_products=False,
                 threaded_calls=False):
        self.source, self.steps = source, steps
        self.parallel, self.workspace, self.blas = parallel, workspace, frozenset(blas)
        self.serial_products, self.threaded_calls = serial_products, threaded_calls


def generate(program, name="kernel", parallel=False, products_on_numpy=True):
    """A ``Generated`` record: the kernel's source text, the partition it was built from
    and what it uses.
    ``parallel``: regions of at least ``PARALLEL_MIN_ELEMENTS`` become ``numba.prange``
    loops over chunks (how many threads run them is the caller's engine's choice).
    ``products_on_numpy``: products run on NumPy's BLAS, else on numba's
    (``loops.gemm_into``, ``loops.dot_into``)."""
    in_names = [f"in{i}" for i in range(len(program.invars))]
    dims = DimEnv(program.in_avals, in_names)
    em = Emitter(program, dims)
    em.parallel = parallel
    em.products_on_numpy = products_on_numpy
    em.private = private_values(program)
    em.uses.update(v for eqn in program.eqns for v in eqn.invars if type(v) is Var)
    for v, n in zip(program.invars, in_names):
        em.names[v] = n
    for i, (v, _) in enumerate(program.consts):
        em.names[v] = f"c{i}"
    steps = emit_program(em, program)
    outs = ", ".join(em.name(v) for v in program.outvars)
    # one output is returned bare: boxing a 1-tuple costs numba a noticeable part of a
    # small kernel's call
    em.emit(f"return {outs}" if len(program.outvars) == 1 else f"return ({outs})")
    params = in_names + [f"c{i}" for i in range(len(program.consts))]
    header = [f"def {name}({', '.join(params + ['ws'] * em.uses_workspace)}):"]
    if em.uses_workspace:
        header.append("    ws[1][0] = 0; ws[1][1] = 0")
    return Generated("\n".join(header + em.lines) + "\n", steps, em.uses_prange,
                     em.uses_workspace, em.blas, em.serial_products, em.threaded_calls)


def consumable(em, v):
    """May the step reading ``v`` overwrite its array: made by this kernel, no output can
    reach it, and that step is its only reader."""
    return type(v) is Var and v in em.private and em.uses[v] == 1


def private_values(program):
    """Top-level values that no program output can reach, not even as a view, so their
    arrays may live in a workspace reused by the next call. A fusible equation or a
    library step declared ``writes_fresh`` writes a fresh array; any other step (a
    reshape, a loop, a library call) is taken to possibly return a view of any of its
    operands."""
    reachable = {v for v in program.outvars if type(v) is Var}
    for eqn in reversed(program.eqns):
        rule = lowering_of(eqn)
        fresh = rule is not None and (rule.fusion(eqn) is not None or rule.writes_fresh)
        if not fresh and any(v in reachable for v in eqn.outvars):
            reachable.update(v for v in eqn.invars if type(v) is Var)
    return {v for eqn in program.eqns for v in eqn.outvars if v not in reachable}


def emit_program(em, program):
    """Emit the steps of ``program`` at the emitter's current indent; its inputs must
    already have names (``em.names``). Loop primitives use this to inline a body program
    into the loop they generate. Returns the steps."""
    steps = partition(program)
    if em.indent == 1 and em.hoisted is None:
        steps = group_rows(steps)
    read_after = _read_after(steps)
    for k, step in enumerate(steps):
        if type(step) is RowGroup:
            _emit_group(em, step, read_after[k])
        else:
            _emit_step(em, step)
    return steps


def _read_after(steps):
    """For each step, the values the steps after it read."""
    out, seen = [], set()
    for step in reversed(steps):
        out.append(set(seen))
        for member in (step.steps if type(step) is RowGroup else [step]):
            seen |= _reads(member)
    return out[::-1]


def _reads(step):
    """The values a region or a library step reads."""
    return {v for eqn in (step.eqns if type(step) is FusedRegion else [step.eqn])
            for v in eqn.invars if type(v) is Var}


def _emit_library_step(em, step):
    eqn = step.eqn
    lower = lowering_of(eqn)
    if lower is None:
        raise MissingRuleError(eqn.prim.name, "lowering", eqn.prim.family)
    outs = [em.define(v) for v in eqn.outvars]
    lower.emit(em, [em.name(v) for v in eqn.invars], outs, eqn)


class _GroupLines:
    """Where a row group's member emits: ``before`` the chunk loop (arrays, accumulators,
    views), its ``body`` (each member's part of a chunk, in turn) and ``after`` it (full
    reductions combining their chunk partials); ``chunks`` names the loop (a prange)."""

    def __init__(self, chunks, indent):
        self.chunks, self.indent = chunks, indent
        self.before, self.body, self.after = [], [], []

    def switch(self, em, part):
        """Emit into ``part`` ("before", "body", "after") from now on."""
        em.lines = getattr(self, part)
        em.indent = self.indent + (part == "body")


def _light(step):
    """A step with no reduction and no math call: a pass that only moves memory."""
    return type(step) is not FusedRegion or not any(
        is_reduction(e) or fusion(e).math for e in step.eqns)


def _emit_step(em, step, chunk_step=None):
    if type(step) is FusedRegion:
        if chunk_step is not None or not unrolled.emit_region(em, step):
            _emit_region(em, step, chunk_step=chunk_step)
    else:
        _emit_library_step(em, step)


def _emit_group(em, group, read_later):
    """A row group as one loop over chunks of rows, each member running its part of a
    chunk in turn: a prange in a plan's parallel variant, where the group's work pays
    for threads but none of its regions does alone (a region that does already has a
    prange of its own). Measured on this machine's two vCPUs, whose caches do not share
    lines cheaply, it pays only when no later step reads a large array the group wrote:
    layer_norm's forward pass went 55 -> 36 us; a group whose output a serial pass read
    next ran 100 -> 207 us (its layer_norm gradient), and a trailing memory-only member
    94 -> 110 us (softmax cross-entropy's gradient). Otherwise the members run as plain
    regions. Either way, each variant computes the same bits: the serial variant chunks
    the full reductions of a group the parallel variant runs as one, at its rows."""
    steps = list(group.steps)
    tail = []
    while len(steps) > 1 and _light(steps[-1]):        # memory-only passes run after it
        tail.insert(0, steps.pop())
    read_later = read_later.union(*map(_reads, tail))  # ... and read what it wrote then
    regions = [s for s in steps if type(s) is FusedRegion]
    made = {v for s in steps for v in (s.defined | s.reduced if type(s) is FusedRegion
                                       else s.eqn.outvars)}
    rows_only = {(group.rows,), (group.rows, 1)}
    chunked = (len(regions) >= 2
               and _pays_for_threads(sum(math.prod(r.space) for r in regions),
                                     [e for r in regions for e in r.eqns])
               and not any(_pays_for_threads(math.prod(r.space), r.eqns) for r in regions)
               and not any(v in made and v.aval.shape not in rows_only for v in read_later))
    widest = max((math.prod(r.space[1:]) for r in regions), default=1)
    step = max(1, _CHUNK_ELEMENTS // widest)
    if not chunked or not em.parallel:
        for s in steps:
            totals = type(s) is FusedRegion and reductions_across_rows(s)
            _emit_step(em, s, step if chunked and totals else None)
        for s in tail:
            _emit_step(em, s)
        return
    rows = _space_source(em, regions[0])[0]
    chunks = _Chunks(em, rows, step)
    lines, indent = em.lines, em.indent
    where = _GroupLines(chunks, indent)
    for s in steps:
        if type(s) is FusedRegion:
            _emit_region(em, s, where)
        else:
            where.switch(em, "before")          # a view of an array made before the loop
            _emit_library_step(em, s)
    em.lines, em.indent = lines, indent
    lines.extend(where.before)
    em.uses_prange = True
    em.emit(f"for {chunks.chunk} in numba.prange({chunks.count}):")
    em.emit(f"    {chunks.lo} = {chunks.chunk} * {chunks.step}")
    em.emit(f"    {chunks.hi} = min({rows}, {chunks.lo} + {chunks.step})")
    lines.extend(where.body)
    lines.extend(where.after)
    for s in tail:
        _emit_step(em, s)


def _space_source(em, region):
    """Dims of the iteration space, read off an operand of that shape when there is one.
    A length-1 axis is the literal 1: LLVM then removes that loop, so the loop around it
    becomes the innermost one and can vectorize (a (256, 1) column is one loop of 256)."""
    for eqn in region.eqns:
        for v in eqn.invars:
            if type(v) is Var and v.aval.shape == region.space and v in em.names:
                return ["1" if d == 1 else f"{em.names[v]}.shape[{k}]"
                        for k, d in enumerate(region.space)]
    return [em.dim(d) for d in region.space]


def _trailing_level(axes, rank):
    """The loop depth a reduction over the trailing ``axes`` of the space starts at, or
    None when it reduces other axes (then it accumulates into its output array)."""
    k = len(axes)
    return rank - k if k and tuple(axes) == tuple(range(rank - k, rank)) else None


def _emit_region(em, region, group=None, chunk_step=None):
    """The loop nest of ``region``; as a member of a row group, its part of a chunk of
    rows, in the lines ``group`` (a ``_GroupLines``) says; with ``chunk_step``, cut into
    chunks of that many rows whatever its size."""
    nest = _LoopNest(em, region, group, chunk_step)
    nest.declare_outputs()
    nest.plan_split()
    nest.open_chunks()
    nest.open_loops()
    nest.emit_body()
    if nest.split:
        nest.emit_accumulating_loop()
    nest.close_loops()
    if nest.par:
        nest.combine_partials()
    for v in region.materialize:
        if not v.aval.shape and v not in em.names:
            em.names[v] = nest.loop_names[v]


class _LoopNest:
    """The state of one region's loop nest while it is emitted, in the order the steps
    of ``_emit_region`` run: outputs, the split of carried reductions, chunks, loops,
    body, accumulation, closing."""

    def __init__(self, em, region, group, chunk_step):
        if group is not None:
            group.switch(em, "before")
        self.em, self.region, self.group = em, region, group
        self.rank = len(region.space)
        self.dims = _space_source(em, region)
        self.idx = [f"i{k}" for k in range(self.rank)]
        self.index = ", ".join(self.idx)
        self.loop_names = {}
        # reductions over the innermost loops keep a local accumulator, initialised before
        # those loops open and stored after they close (row sums and maxes stay in registers)
        self.local = {}                 # reduction outvar -> (level, accumulator name)
        self.across = {}                # reduction across chunks -> its chunks' partials
        self.inits = [[] for _ in range(self.rank + 1)]
        self.par = (group.chunks.member(em) if group is not None
                    else _Chunks(em, self.dims[0], chunk_step) if chunk_step is not None
                    else _chunking(em, region, self.dims))
        self.parallel = group is not None or em.parallel and chunk_step is None

    def declare_outputs(self):
        """Arrays for materialized loop values, accumulators for reductions."""
        em, par, dims = self.em, self.par, self.dims
        for eqn in self.region.eqns:
            v = eqn.outvars[0]
            rule = fusion(eqn)
            if type(rule) is Reduction:
                init = rule.init(v.aval.dtype)
                name = em.define(v, "r")
                level = _trailing_level(eqn.params["axes"], self.rank)
                if not v.aval.shape:
                    em.emit(f"{name} = {init}")
                    if par:     # each chunk sums its part; the parts are combined in order
                        acc, parts = em.fresh("acc"), em.fresh("parts")
                        em.emit(f"{parts} = np.empty({par.count}, {ctor(v.aval.dtype)})")
                        par.partials.append((eqn, acc, parts))
                        self.local[v] = ("chunk", acc)
                        par.inits.append(f"{acc} = {init}")
                    continue
                kept = "".join(d + ", " for k, d in enumerate(dims)
                               if k not in eqn.params["axes"])
                if par and 0 in eqn.params["axes"]:
                    # each chunk adds its rows into a row of partials, combined in order
                    parts = em.fresh("parts")
                    em.emit(f"{name} = np.empty(({kept}), {ctor(v.aval.dtype)})")
                    em.emit(f"{parts} = np.full(({par.count}, {kept}), {init}, "
                            f"{ctor(v.aval.dtype)})")
                    par.partials.append((eqn, None, parts))
                    self.across[v] = parts
                elif level is None:
                    em.emit(f"{name} = np.full(({kept}), {init}, {ctor(v.aval.dtype)})")
                else:
                    em.allocate(name, v, f"({kept})")
                    acc = em.fresh("acc")
                    self.local[v] = (level, acc)
                    self.inits[level].append(f"{acc} = {init}")
            elif v in self.region.materialize:
                if v.aval.shape:
                    em.allocate(em.define(v, "a"), v,
                                f"({''.join(d + ', ' for d in dims)})")

    def plan_split(self):
        """A reduction whose accumulator is carried by the innermost loop (a row sum, a
        full sum) keeps LLVM from vectorizing that loop without reassociating the sum.
        With other work in the region, the innermost loop is split in two: one computes
        the row into buffers (vectorizable: exp, tanh ...), one accumulates it in order."""
        em, region, par, rank = self.em, self.region, self.par, self.rank
        self.carried = [e for e in region.eqns if is_reduction(e)
                        and (e.outvars[0] in self.local or not e.outvars[0].aval.shape)]
        self.loop_a = [e for e in region.eqns if e not in self.carried]
        exact_order_free = all(fusion(e).extreme for e in self.carried)
        self.split = rank >= 1 and bool(self.carried) and (
            bool(self.loop_a) or exact_order_free or any(row_helper(e) for e in self.carried))
        self.buffers = {}
        self.scratch = {}               # dtype -> pairwise_sum's scratch, allocated once
        # a prange chunk allocates its own buffers; a serial chunk loop shares one set
        private = par.arrays if par and self.parallel else None
        # a 1-D parallel region computes its one row a chunk at a time
        row_length = par.step if par and rank == 1 else self.dims[-1] if rank else None
        # inside a loop, scratch is allocated once before it (the loop's hoisted lines)
        hoist = not par and em.hoisted is not None and em.dims.writable(region.space[-1:])
        if hoist and rank:
            row_length = em.dim(region.space[-1])
        scratch_lines = private if private is not None else em.hoisted if hoist else None
        if not self.split:
            return
        for e in self.carried:
            x = e.invars[0]
            if type(x) is Var and x in region.defined and x not in self.buffers:
                self.buffers[x] = em.fresh("row")
                line = f"{self.buffers[x]} = np.empty(({row_length},), {ctor(x.aval.dtype)})"
                scratch_lines.append(line) if scratch_lines is not None else em.emit(line)
            dt = e.outvars[0].aval.dtype
            if row_helper(e) == "sum" and dt not in self.scratch:
                self.scratch[dt] = em.fresh("scratch")
                line = f"{self.scratch[dt]} = {vreduce.scratch_source(ctor(dt))}"
                scratch_lines.append(line) if scratch_lines is not None else em.emit(line)

    def open_chunks(self):
        """The loop over chunks of rows (a prange in a parallel plan), or the row group's
        chunk body."""
        em, par = self.em, self.par
        self.base_indent = em.indent
        if self.group is not None:
            self.group.switch(em, "body")
        elif par:
            loop = "numba.prange" if self.parallel else "range"
            em.uses_prange = em.uses_prange or self.parallel
            em.emit(f"for {par.chunk} in {loop}({par.count}):")
            em.indent += 1
            em.emit(f"{par.lo} = {par.chunk} * {par.step}")
            em.emit(f"{par.hi} = min({self.dims[0]}, {par.lo} + {par.step})")
        if par:
            for line in par.arrays + par.inits:
                em.emit(line)
            self.base_indent = em.indent

    def open_loop(self, k, d):
        """Open the loop over axis ``k``. A chunk's rows are counted from 0 and offset
        (``i0 = lo + j``): with ``range(lo, hi)`` numba's negative-index check on a row
        buffer's ``i0 - lo`` kept LLVM from vectorizing the loop (24 -> 18 ms at 1e6)."""
        em, par = self.em, self.par
        if par and k == 0:
            em.emit(f"for {par.row} in range({par.hi} - {par.lo}):")
            em.emit(f"    {self.idx[0]} = {par.lo} + {par.row}")
        else:
            em.emit(f"for {self.idx[k]} in range({d}):")
        em.indent += 1

    def open_loops(self):
        em, dims, rank = self.em, self.dims, self.rank
        for k, d in enumerate(dims[:rank - 1] if self.split else dims):
            for line in self.inits[k]:
                em.emit(line)
            self.open_loop(k, d)
        if self.split:
            for line in self.inits[rank - 1]:
                em.emit(line)
            if self.loop_a:
                self.open_loop(rank - 1, dims[-1])
        # where the last index sits in a row buffer and what a whole row is
        par = self.par
        self.in_row = par.row if par and rank == 1 else self.idx[-1] if rank else None
        self.row_span = f"{par.lo}:{par.hi}" if par and rank == 1 else ":"

    def read(self, v):
        if type(v) is Literal:
            return literal(v.value, v.aval.dtype)
        if v in self.loop_names:
            return self.loop_names[v]
        name = self.em.names[v]
        if not v.aval.shape:
            return name
        return f"{name}[{self.index}]"

    def accumulator(self, eqn):
        v = eqn.outvars[0]
        if v in self.local:
            return self.local[v][1]
        acc = self.em.names[v]
        if v.aval.shape:
            kept = ", ".join(i for k, i in enumerate(self.idx) if k not in eqn.params["axes"])
            if v in self.across:
                return f"{self.across[v]}[{self.par.chunk}, {kept}]"
            acc = f"{acc}[{kept}]"
        return acc

    def reduce(self, eqn, x, acc=None):
        acc = acc or self.accumulator(eqn)
        self.em.emit(f"{acc} = {fusion(eqn).step.format(acc=acc, x=x)}")

    def operand_at(self, x, j):
        """Source of a carried reduction's operand at position ``j`` of the last axis."""
        if x in self.buffers:
            return f"{self.buffers[x]}[{j}]"
        if type(x) is Literal or not x.aval.shape:
            return self.read(x)
        return f"{self.em.names[x]}[{', '.join(self.idx[:-1] + [j])}]"

    def operand_row(self, x):
        """Source of a carried reduction's whole operand row, or None (a scalar)."""
        par = self.par
        if x in self.buffers:
            if par and self.rank == 1:
                return f"{self.buffers[x]}[:{par.hi} - {par.lo}]"
            return self.buffers[x]
        if type(x) is Literal or not x.aval.shape:
            return None
        return f"{self.em.names[x]}[{', '.join(self.idx[:-1] + [self.row_span])}]"

    def emit_body(self):
        """One scalar statement per equation, at the innermost loop."""
        em, region, idx = self.em, self.region, self.idx
        filled = set()
        for eqn in region.eqns:
            v = eqn.outvars[0]
            rule = fusion(eqn)
            if type(rule) is Reduction:
                x = eqn.invars[0]
                if not self.split or eqn not in self.carried:
                    self.reduce(eqn, self.read(x))
                elif x in self.buffers and x not in filled:
                    filled.add(x)
                    em.emit(f"{self.buffers[x]}[{self.in_row}] = {self.read(x)}")
                continue
            if type(rule) is IndexMap:
                expr = rule.read(em.name, eqn, idx)
            else:
                expr = rule.expression(eqn, [self.read(a) for a in eqn.invars])
            name = em.fresh("s")
            em.emit(f"{name} = {expr}")
            self.loop_names[v] = name
            if v in region.materialize:
                if v.aval.shape:
                    em.emit(f"{em.names[v]}[{self.index}] = {name}")
                else:
                    em.names[v] = name

    def emit_accumulating_loop(self):
        """The second innermost loop of a split region: the carried reductions, in order
        (whole rows by the ``vreduce`` helpers where they apply)."""
        em, idx, dims = self.em, self.idx, self.dims
        if self.loop_a:
            em.indent -= 1
        by_row = [e for e in self.carried
                  if row_helper(e) and self.operand_row(e.invars[0])]
        for eqn in by_row:
            acc, row = self.accumulator(eqn), self.operand_row(eqn.invars[0])
            if row_helper(eqn) == "sum":
                dt = eqn.outvars[0].aval.dtype
                self.reduce(eqn, f"vreduce.pairwise_sum({row}, {self.scratch[dt]})")
            else:
                is_max = fusion(eqn).extreme == "max"
                em.emit(f"{acc} = vreduce.row_extreme({row}, {acc}, {is_max})")
        rest = [e for e in self.carried if e not in by_row]
        if rest and all(fusion(e).extreme for e in rest):
            _emit_unrolled_extremes(em, rest, self.accumulator, self.operand_at, self.reduce,
                                    idx[-1], dims[-1])
        elif rest:
            em.emit(f"for {idx[-1]} in range({dims[-1]}):")
            em.indent += 1
            for eqn in rest:
                self.reduce(eqn, self.operand_at(eqn.invars[0], idx[-1]))
            em.indent -= 1

    def close_loops(self):
        """Close the loops, innermost first, storing each local accumulator as its level
        closes."""
        em = self.em
        for level in range(self.rank - 1, -1, -1):
            em.indent = self.base_indent + level
            for v, (at, acc) in self.local.items():
                if at == level:
                    em.emit(f"{em.names[v]}[{', '.join(self.idx[:level])}] = {acc}")
        em.indent = self.base_indent

    def combine_partials(self):
        """Each chunk's part of a reduction across rows, combined in chunk order (the same
        bits on every run, however many threads ran the chunks)."""
        em, par = self.em, self.par
        for eqn, acc, parts in par.partials:
            if acc is not None:
                em.emit(f"{parts}[{par.chunk}] = {acc}")
        if self.group is not None:
            self.group.switch(em, "after")
        else:
            em.indent = self.base_indent - 1
        for eqn, acc, parts in par.partials:
            total = em.names[eqn.outvars[0]]
            if acc is None:
                self.combine_rows(eqn, total, parts)
                continue
            em.emit(f"for {par.chunk} in range({par.count}):")
            em.emit(f"    {total} = "
                    + fusion(eqn).step.format(acc=total, x=f"{parts}[{par.chunk}]"))

    def combine_rows(self, eqn, total, parts):
        """``total`` (an array) = the rows of ``parts`` combined in chunk order."""
        em, par = self.em, self.par
        flat, rows, j, acc = em.fresh("flat"), em.fresh("rows"), em.fresh("j"), em.fresh("acc")
        em.emit(f"{flat} = {total}.reshape(-1)")
        em.emit(f"{rows} = {parts}.reshape(({par.count}, -1))")
        em.emit(f"for {j} in range({flat}.shape[0]):")
        em.emit(f"    {acc} = {rows}[0, {j}]")
        em.emit(f"    for {par.chunk} in range(1, {par.count}):")
        em.emit(f"        {acc} = "
                + fusion(eqn).step.format(acc=acc, x=f"{rows}[{par.chunk}, {j}]"))
        em.emit(f"    {flat}[{j}] = {acc}")


# A prange launch and its barrier cost a few us on OpenMP and a chunk should stay in
# L1/L2, so chunks are ~8k elements and only regions that take well over 10 us alone are
# chunked: 2^17 elements of arithmetic, or 2^15 when they call transcendental functions
# (softmax cross-entropy's exp over 128 x 1000 went from 112 to 81-93 us on two threads,
# where layer_norm's arithmetic over 128 x 768 ran slower on two than on one). The serial
# variant of a plan chunks the same regions with range(): same partial sums, same bits.
PARALLEL_MIN_ELEMENTS = 1 << 17
PARALLEL_MIN_ELEMENTS_MATH = 1 << 15
_CHUNK_ELEMENTS = 1 << 13


def _pays_for_threads(elements, eqns):
    return elements >= PARALLEL_MIN_ELEMENTS or (
        elements >= PARALLEL_MIN_ELEMENTS_MATH and any(fusion(e).math for e in eqns))


class _Chunks:
    """A large region's outermost loop cut into ``count`` chunks of ``step`` rows: chunk
    ``chunk`` runs rows ``lo:hi``. ``arrays`` are the buffers a prange chunk allocates for
    itself, ``inits`` its accumulators; ``partials`` the reductions across rows combined, in chunk
    order, after the loop."""

    def __init__(self, em, first_dim, step):
        self.chunk, self.lo, self.hi = em.fresh("chunk"), em.fresh("lo"), em.fresh("hi")
        self.row = em.fresh("row_in_chunk")
        self.step = step
        self.count = f"(({first_dim} + {step} - 1) // {step})"
        self.arrays, self.inits, self.partials = [], [], []

    def member(self, em):
        """The chunks of a row group as one member region sees them: the group's loop and
        bounds, a row counter and per-chunk lines of the member's own."""
        mine = _Chunks.__new__(_Chunks)
        mine.chunk, mine.lo, mine.hi, mine.step, mine.count = (
            self.chunk, self.lo, self.hi, self.step, self.count)
        mine.row = em.fresh("row_in_chunk")
        mine.arrays, mine.inits, mine.partials = [], [], []
        return mine


def _chunking(em, region, dims):
    """The chunking of a large region (a prange loop in a plan's parallel variant, a range
    loop in its serial one, so both compute the same bits), or None (a plain loop nest).

    Chunks of the outermost axis are independent but for the reductions across that
    axis, which each chunk computes into a partial of its own. A 1-D region is cut into
    pieces of its only row, so its full reductions must be row helpers.
    Only top-level regions qualify (a loop body runs many times; a prange there would
    pay its launch every step)."""
    space = region.space
    if em.indent != 1 or not cuts_into_row_chunks(region):
        return None
    if not _pays_for_threads(math.prod(space), region.eqns):
        return None
    inner = int(np.prod(space[1:]))
    return _Chunks(em, dims[0], max(1, _CHUNK_ELEMENTS // inner))


def _emit_unrolled_extremes(em, carried, accumulator, operand_at, reduce, i, n):
    """max/min with four independent accumulators, combined at the end: the same result
    as one accumulator (max is exact and a NaN propagates either way), four times the
    instruction-level parallelism of one compare-and-select chain."""
    parts = {}
    for eqn in carried:
        acc = accumulator(eqn)
        extra = [em.fresh("part") for _ in range(3)]
        for name in extra:
            em.emit(f"{name} = {acc}")
        parts[eqn] = [acc] + extra
    stop = em.fresh("stop")
    em.emit(f"{stop} = {n} - {n} % 4")
    em.emit(f"for {i} in range(0, {stop}, 4):")
    em.indent += 1
    for eqn in carried:
        for u, part in enumerate(parts[eqn]):
            reduce(eqn, operand_at(eqn.invars[0], f"{i} + {u}" if u else i), part)
    em.indent -= 1
    em.emit(f"for {i} in range({stop}, {n}):")
    em.indent += 1
    for eqn in carried:
        reduce(eqn, operand_at(eqn.invars[0], i))
    em.indent -= 1
    for eqn in carried:
        for part in parts[eqn][1:]:
            reduce(eqn, part)
    em.indent += 1
