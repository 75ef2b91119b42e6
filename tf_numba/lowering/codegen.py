"""Render a kernel's schedule as the Python source of one numba kernel.

The kernel takes the program inputs (rank-0 inputs as scalars), runs the steps of its
``schedule`` in order (nests as explicit loops, library steps through the ``emit`` of
their primitive's rule) and returns the outputs as a tuple. Every choice was made on the
schedule's records (``schedule``); rendering only prints them. Dims are written through
``DimEnv``, so the same source serves every length it is valid for.
"""
from ..core.ir import Literal, Var
from . import unrolled
from .partition import row_helper
from . import vreduce
from ..kernel_vocab.rules import IndexMap, Reduction, fusion, lowering_of
from ..kernel_vocab.scalar_exprs import ctor, literal
from .schedule import Call, Nest, RowBlock, Target, schedule, trailing_level


class Emitter:
    """Source lines plus names for program values; handed to library ``emit`` rules.
    Its state is the renderer's own (names, indentation, where lines go); the choices it
    prints come from the schedule."""

    def __init__(self, sched):
        self.lines = []
        self.indent = 1
        self.names = {}
        self.dims = sched.context.dims
        self.counter = 0
        self.hoisted = None         # inside a loop: lines run once, before the outermost loop
        self.destinations = {}      # value -> the array its step writes it into
        self.elements = {}          # value -> the names of the scalars holding its elements
        # where the schedule put each value (bodies' values are distinct from the kernel's)
        placed = list(sched.schedules())
        self.workspace = sched.workspace    # values allocated from ``ws``
        self.hoisted_values = frozenset().union(*(s.hoisted for s in placed))
        self.scalars = frozenset().union(*(s.scalars for s in placed))
        self.call = None            # the Call record of the library step being printed

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

        A value with a ``destinations`` entry (a loop's output row or next carry) is
        written straight there. A value the schedule placed in the kernel's workspace
        (``workspace``) comes from there: it outlives the call; one it hoisted out of a
        loop body (``hoisted_values``) is allocated before the outermost loop.
        """
        slot = self.destinations.pop(v, None)
        if slot is not None:
            self.emit(f"{name} = {slot}")
        elif v in self.workspace:
            self.emit(f"{name} = workspace.take(ws, {shape}, {ctor(v.aval.dtype)})")
        elif v in self.hoisted_values:
            self.hoisted.append(f"{name} = workspace.empty({self.shape(v.aval.shape)}, "
                                f"{ctor(v.aval.dtype)})")
        else:
            self.emit(f"{name} = workspace.empty({shape}, {ctor(v.aval.dtype)})")

    def shape(self, shape):
        return self.dims.shape(shape)

    def dim(self, d):
        return self.dims.expr(d)


class Generated:
    """What code generation made: the kernel's ``source`` and the ``schedule`` it prints;
    what its callers need to know of the kernel is the schedule's summary: ``parallel``
    (it has a ``numba.prange`` loop), ``workspace`` (its last parameter is a workspace),
    ``blas`` (the BLAS libraries its steps call), ``serial_products`` (a parallel kernel
    calls BLAS for a large product on one thread: ``products``), ``threaded_calls`` (it
    calls a helper that runs across threads)."""
    __slots__ = ("source", "schedule")

    def __init__(self, source, sched):
        self.source, self.schedule = source, sched

    @property
    def steps(self):
        return self.schedule.steps

    parallel = property(lambda self: self.schedule.threaded)
    workspace = property(lambda self: self.schedule.uses_workspace)
    blas = property(lambda self: self.schedule.blas)
    serial_products = property(lambda self: self.schedule.serial_products)
    threaded_calls = property(lambda self: self.schedule.threaded_calls)


def generate(program, name="kernel", parallel=False, products_on_numpy=True, given=()):
    """The ``Generated`` kernel of ``program``: its schedule (``schedule``) for a plan's
    parallel variant or not (``parallel``: large regions may become ``numba.prange``
    loops over chunks; how many threads run them is the caller's engine's choice), with
    products on NumPy's BLAS or numba's (``products_on_numpy``), outputs the caller may
    pass arrays for (``given``), and its source."""
    in_names = [f"in{i}" for i in range(len(program.invars))]
    sched = schedule(program, Target(parallel, products_on_numpy), in_names, given)
    return Generated(render(sched, name, in_names), sched)


def render(sched, name="kernel", in_names=None):
    """The source of a kernel that runs the schedule ``sched`` of a whole program."""
    program = sched.program
    in_names = in_names or [f"in{i}" for i in range(len(program.invars))]
    em = Emitter(sched)
    for v, n in zip(program.invars, in_names):
        em.names[v] = n
    for i, (v, _) in enumerate(program.consts):
        em.names[v] = f"c{i}"
    given = [f"out{k}" for k in range(len(sched.given))]
    em.destinations.update(zip(sched.given, given))
    emit_program(em, sched)
    if any(v in em.destinations for v in sched.given):
        raise AssertionError("an output the schedule gave an array was not written there")
    returned = [em.name(v) for v in program.outvars if v not in sched.given]
    # one output is returned bare: boxing a 1-tuple costs numba a noticeable part of a
    # small kernel's call
    if returned:
        em.emit(f"return {returned[0]}" if len(returned) == 1
                else f"return ({', '.join(returned)})")
    params = in_names + [f"c{i}" for i in range(len(program.consts))] + given
    header = [f"def {name}({', '.join(params + ['ws'] * sched.uses_workspace)}):"]
    if sched.uses_workspace:
        header.append("    ws[1][0] = 0; ws[1][1] = 0")
    return "\n".join(header + em.lines) + "\n"


def emit_program(em, sched):
    """Print the steps of ``sched`` at the emitter's current indent; its program's inputs
    must already have names (``em.names``). Loop rules print a body's schedule with this,
    inlined into the loop they write."""
    for step in sched.steps:
        if type(step) is RowBlock:
            _emit_block(em, step)
        else:
            _emit_step(em, step)


def _emit_library_step(em, call):
    eqn = call.eqn
    outs = [em.define(v) for v in eqn.outvars]
    em.call = call
    lowering_of(eqn).emit(em, [em.name(v) for v in eqn.invars], outs, eqn)


class _GroupLines:
    """Where a row block's member emits: ``before`` the chunk loop (arrays, accumulators,
    views), its ``body`` (each member's part of a chunk, in turn) and ``after`` it (full
    reductions combining their chunk partials); ``chunks`` names the loop (a prange)."""

    def __init__(self, chunks, indent):
        self.chunks, self.indent = chunks, indent
        self.before, self.body, self.after = [], [], []

    def switch(self, em, part):
        """Emit into ``part`` ("before", "body", "after") from now on."""
        em.lines = getattr(self, part)
        em.indent = self.indent + (part == "body")


def _emit_step(em, step):
    if type(step) is Call:
        _emit_library_step(em, step)
    elif step.form == "unrolled":
        unrolled.emit_region(em, step.region)
    else:
        _emit_region(em, step)


def _emit_block(em, block):
    """A row block: with threaded chunks, one prange over chunks of rows, each member
    running its part of a chunk in turn; otherwise its members in turn, as the schedule
    chunked each. Its memory-only tail runs after it."""
    if block.chunks is None:
        for s in block.members + block.tail:
            _emit_step(em, s)
        return
    nests = [s for s in block.members if type(s) is Nest]
    rows = _space_source(em, nests[0].region)[0]
    chunks = _Chunks(em, rows, block.chunks.step)
    lines, indent = em.lines, em.indent
    where = _GroupLines(chunks, indent)
    for s in block.members:
        if type(s) is Nest:
            _emit_region(em, s, where)
        else:
            where.switch(em, "before")          # a view of an array made before the loop
            _emit_library_step(em, s)
    em.lines, em.indent = lines, indent
    lines.extend(where.before)
    em.emit(f"for {chunks.chunk} in numba.prange({chunks.count}):")
    em.emit(f"    {chunks.lo} = {chunks.chunk} * {chunks.step}")
    em.emit(f"    {chunks.hi} = min({rows}, {chunks.lo} + {chunks.step})")
    lines.extend(where.body)
    lines.extend(where.after)
    for s in block.tail:
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


def _emit_region(em, nest, group=None):
    """The loop nest of ``nest``; as a member of a threaded row block, its part of a
    chunk of rows, in the lines ``group`` (a ``_GroupLines``) says."""
    lines = _LoopNest(em, nest, group)
    lines.declare_outputs()
    lines.declare_row_buffers()
    lines.open_chunks()
    lines.open_loops()
    lines.emit_body()
    if nest.split:
        lines.emit_accumulating_loop()
    lines.close_loops()
    if lines.par:
        lines.combine_partials()
    for v in nest.region.materialize:
        if not v.aval.shape and v not in em.names:
            em.names[v] = lines.loop_names[v]


class _LoopNest:
    """The state of one region's loop nest while it is emitted, in the order the steps
    of ``_emit_region`` run: outputs, the split of carried reductions, chunks, loops,
    body, accumulation, closing."""

    def __init__(self, em, nest, group):
        if group is not None:
            group.switch(em, "before")
        region = nest.region
        self.em, self.nest, self.region, self.group = em, nest, region, group
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
        chunks = nest.chunks
        self.par = (None if chunks is None else group.chunks.member(em) if nest.in_block
                    else _Chunks(em, self.dims[0], chunks.step))
        self.threaded = chunks is not None and chunks.threaded
        self.split, self.carried = nest.split, nest.carried
        self.loop_a = [e for e in region.eqns if e not in self.carried]

    def declare_outputs(self):
        """Arrays for materialized loop values, accumulators for reductions."""
        em, par, dims = self.em, self.par, self.dims
        for eqn in self.region.eqns:
            v = eqn.outvars[0]
            rule = fusion(eqn)
            if type(rule) is Reduction:
                init = rule.init(v.aval.dtype)
                name = em.define(v, "r")
                level = trailing_level(eqn.params["axes"], self.rank)
                if not v.aval.shape:
                    em.emit(f"{name} = {init}")
                    if par:     # each chunk sums its part; the parts are combined in order
                        acc, parts = em.fresh("acc"), em.fresh("parts")
                        em.emit(f"{parts} = workspace.empty({par.count}, {ctor(v.aval.dtype)})")
                        par.partials.append((eqn, acc, parts))
                        self.local[v] = ("chunk", acc)
                        par.inits.append(f"{acc} = {init}")
                    continue
                kept = "".join(d + ", " for k, d in enumerate(dims)
                               if k not in eqn.params["axes"])
                if par and 0 in eqn.params["axes"]:
                    # each chunk adds its rows into a row of partials, combined in order
                    parts = em.fresh("parts")
                    em.emit(f"{name} = workspace.empty(({kept}), {ctor(v.aval.dtype)})")
                    em.emit(f"{parts} = workspace.full(({par.count}, {kept}), {init}, "
                            f"{ctor(v.aval.dtype)})")
                    par.partials.append((eqn, None, parts))
                    self.across[v] = parts
                elif level is None:
                    em.emit(f"{name} = workspace.full(({kept}), {init}, {ctor(v.aval.dtype)})")
                else:
                    em.allocate(name, v, f"({kept})")
                    acc = em.fresh("acc")
                    self.local[v] = (level, acc)
                    self.inits[level].append(f"{acc} = {init}")
            elif v in self.region.materialize:
                if v.aval.shape:
                    em.allocate(em.define(v, "a"), v,
                                f"({''.join(d + ', ' for d in dims)})")

    def declare_row_buffers(self):
        """The split's row buffers and pairwise-sum scratch, where the schedule put them:
        in each prange chunk, before a loop body's loop, or here."""
        em, nest, par, rank = self.em, self.nest, self.par, self.rank
        self.buffers = {}
        self.scratch = {}               # dtype -> pairwise_sum's scratch, allocated once
        if not nest.split:
            return
        # a 1-D chunked region computes its one row a chunk at a time
        row_length = par.step if par and rank == 1 else self.dims[-1] if rank else None
        if nest.scratch_at == "hoisted" and rank:
            row_length = em.dim(nest.region.space[-1])
        put = {"chunk": par.arrays.append if par else None,
               "hoisted": em.hoisted.append if em.hoisted is not None else None,
               "here": em.emit}[nest.scratch_at]
        for kind, x in nest.scratch:
            if kind == "row":
                self.buffers[x] = em.fresh("row")
                put(f"{self.buffers[x]} = workspace.empty(({row_length},), {ctor(x.aval.dtype)})")
            else:
                self.scratch[x] = em.fresh("scratch")
                put(f"{self.scratch[x]} = {vreduce.scratch_source(ctor(x))}")

    def open_chunks(self):
        """The loop over chunks of rows (a prange in a parallel plan), or the row group's
        chunk body."""
        em, par = self.em, self.par
        self.base_indent = em.indent
        if self.group is not None:
            self.group.switch(em, "body")
        elif par:
            loop = "numba.prange" if self.threaded else "range"
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
        by_row = self.nest.by_row
        for eqn in by_row:
            acc, row = self.accumulator(eqn), self.operand_row(eqn.invars[0])
            if row_helper(eqn) == "sum":
                dt = eqn.outvars[0].aval.dtype
                self.reduce(eqn, f"vreduce.pairwise_sum({row}, {self.scratch[dt]})")
            else:
                is_max = fusion(eqn).extreme == "max"
                em.emit(f"{acc} = vreduce.row_extreme({row}, {acc}, {is_max})")
        rest = [e for e in self.carried if e not in by_row]
        if self.nest.four_accumulators:
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
        for _, acc, parts in par.partials:
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
