"""Decide, then render: a kernel's schedule, the records its source is printed from.

Code generation runs in two stages. ``schedule(program, target)`` takes every decision
the kernel's source embodies, once, on the records below, by the passes in ``PASSES``
(in that order); ``codegen.render`` only prints the records. The plan and the tests read
a schedule (``Schedule.threaded``, ``.blas``, ...), never the generated text, and a
second target would print the same records its own way.

The records:

- ``Nest``: one fused region's loop nest: its iteration space; ``form`` ("loops", or
  "unrolled": element by element as scalar code, a tiny region in a loop body);
  ``chunks`` (the outermost axis cut into chunks of rows, a prange when threaded); the
  reduction split (``split``: the innermost loop in two, the ``carried`` reductions
  accumulated in order in the second, the rows they read and the pairwise sums' scratch
  kept in the buffers ``scratch`` lists, allocated ``scratch_at`` "chunk" (by each
  prange chunk), "hoisted" (before a loop body's loop) or "here"; the reductions done
  ``by_row`` by ``vreduce`` helpers, the rest max/min by ``four_accumulators`` or one).
- ``RowBlock``: regions over the same rows run a chunk of rows at a time (``chunks``
  threaded: one prange for them all), members first, then the memory-only ``tail``.
- ``Call``: a library step, with the choices its rule's ``decide`` made: a product's
  form, helper and BLAS (``products.Product``), a threaded helper, the schedules of a
  loop's or branch's body programs (``bodies``) and where a loop's carries live between
  iterations (``carries``).
- ``Schedule``: the steps of one program (the kernel's, or a body's) in the context
  they run in, and where its arrays and elements live: the values whose arrays come from
  the kernel's ``workspace`` or from arrays its caller passes (``given``); in a loop
  body, the values whose arrays are allocated once before the loop (``hoisted``), the
  body's inputs read into scalars at the top of each iteration (``loaded``, its loop's
  choice) and the values whose elements are held in scalars (``scalars``: those, the
  outputs of unrolled regions, and what slices, reshapes, reversals, pads and
  concatenations make of them), which later steps read instead of the arrays.
"""
import collections
import math

import numpy as np

from ..core.ir import Var, var_names
from ..ops import layout
from .dims import DimEnv
from .partition import (FusedRegion, RowGroup, cuts_into_row_chunks, group_rows, partition,
                        reductions_across_rows, row_helper)
from ..kernel_vocab.rules import Reduction, fusion, is_elementwise, is_reduction, lowering_of
from . import unrolled


class Target:
    """What a kernel is scheduled for: ``parallel`` (a plan's parallel variant: large
    regions and products may share themselves out among threads) and
    ``products_on_numpy`` (products call NumPy's BLAS, else numba's: ``products``)."""
    __slots__ = ("parallel", "products_on_numpy")

    def __init__(self, parallel=False, products_on_numpy=True):
        self.parallel, self.products_on_numpy = parallel, products_on_numpy


class Context:
    """Where a program's steps run: ``top`` (the kernel's own top level: only there may
    a step have a prange or join a row block, since a body runs many times and a prange
    there would pay its launch every step), ``in_loop`` (inside a loop's body: arrays
    are allocated once before the loop, tiny regions are unrolled) and the ``dims`` the
    kernel writes shapes with."""
    __slots__ = ("target", "top", "in_loop", "dims")

    def __init__(self, target, top, in_loop, dims):
        self.target, self.top, self.in_loop, self.dims = target, top, in_loop, dims

    def nested(self, top=False, in_loop=None):
        return Context(self.target, top, self.in_loop if in_loop is None else in_loop,
                       self.dims)

    @property
    def threads(self):
        """May a step here share itself out among threads?"""
        return self.target.parallel and self.top


class Chunks:
    """The outermost axis of a nest (or a row block) cut into chunks of ``step`` rows,
    run by a ``numba.prange`` when ``threaded`` (else a ``range``: the serial variant
    computes the same partial sums, so the same bits)."""
    __slots__ = ("step", "threaded")

    def __init__(self, step, threaded):
        self.step, self.threaded = step, threaded

    def __repr__(self):
        return f"{'prange' if self.threaded else 'range'} chunks of {self.step} rows"


class Nest:
    __slots__ = ("region", "form", "chunks", "in_block", "split", "carried", "scratch",
                 "scratch_at", "by_row", "four_accumulators")

    def __init__(self, region, form="loops", chunks=None, in_block=False):
        self.region, self.form, self.chunks, self.in_block = region, form, chunks, in_block
        self.split, self.carried = False, ()
        self.scratch = ()       # ("row", value): a row buffer; ("sum", dtype): sum scratch
        self.scratch_at = "here"
        self.by_row, self.four_accumulators = (), False

    @property
    def row_buffers(self):
        return tuple(x for kind, x in self.scratch if kind == "row")

    def describe(self, names):
        r = self.region
        ops = " ".join(e.prim.name for e in r.eqns)
        parts = [f"nest {_shape_text(r.space)}: {ops}"]
        if self.form != "loops":
            parts.append(self.form)
        if self.chunks is not None:
            parts.append(repr(self.chunks) + (" (the block's)" if self.in_block else ""))
        if self.split:
            parts.append(f"split: {len(self.carried)} reductions accumulated in order"
                         + (f", {len(self.by_row)} by row helpers" if self.by_row else "")
                         + (", max/min by four accumulators" if self.four_accumulators
                            else "")
                         + (f", {len(self.scratch)} buffers ({self.scratch_at})"
                            if self.scratch else ""))
        made = sorted(names[v] for v in r.materialize | r.reduced)
        if made:
            parts.append("-> " + " ".join(made))
        return "; ".join(parts)


class RowBlock:
    __slots__ = ("group", "members", "tail", "chunks", "read_later")

    def __init__(self, group, members, tail, chunks):
        self.group, self.members, self.tail, self.chunks = group, members, tail, chunks
        self.read_later = frozenset()   # values the steps after the block read

    def describe(self, names):
        how = repr(self.chunks) if self.chunks is not None else "members as plain nests"
        return f"row block over {self.group.rows} rows: {how}"


class Call:
    """A library step and its rule's choices (``decide``); see the module docstring."""
    __slots__ = ("eqn", "product", "threaded", "blas", "bodies", "allocates", "overwrites",
                 "carries", "rows")

    def __init__(self, eqn, product=None, threaded=False, blas=None, bodies=None):
        self.eqn, self.product, self.threaded, self.blas = eqn, product, threaded, blas
        self.bodies = bodies or {}      # sub-program -> its Schedule
        self.allocates = False          # writes its output into an array it allocates
        self.overwrites = False         # may write into its first operand's array
        self.carries = ()               # a loop's: where each carry lives (control)
        self.rows = frozenset()         # a scan's outputs written straight into their rows

    def describe(self, names):
        parts = [" ".join(f"{names[v]}:{v.aval}" for v in self.eqn.outvars)
                 + f" = {self.eqn.prim.name}"]
        if self.product is not None:
            parts.append(repr(self.product))
        elif self.blas is not None:
            parts.append(f"BLAS: {self.blas}")
        if self.threaded:
            parts.append("threaded helper")
        if self.overwrites:
            parts.append("writes into its operand")
        if self.carries:
            parts.append("carries: " + ", ".join(self.carries))
        return "; ".join(parts)


class Schedule:
    """The steps of one program (``Nest``, ``RowBlock``, ``Call``) in ``context``; the
    top-level values whose arrays come from the kernel's ``workspace``; in a loop body,
    the values ``hoisted`` (allocated once before the loop), ``loaded`` (inputs read
    into scalars each iteration) and held in ``scalars``."""
    __slots__ = ("program", "steps", "context", "workspace", "hoisted", "loaded", "scalars",
                 "given")

    def __init__(self, program, steps, context, loaded=(), given=()):
        self.program, self.steps, self.context = program, steps, context
        self.workspace = self.hoisted = self.scalars = frozenset()
        self.loaded = tuple(loaded)
        self.given = tuple(given)

    def schedules(self):
        """This schedule and its bodies', depth first."""
        yield self
        for step in self.steps:
            if type(step) is Call:
                for body in step.bodies.values():
                    yield from body.schedules()

    def walk(self):
        """Every record, bodies' included, depth first."""
        for step in self.steps:
            yield step
            if type(step) is RowBlock:
                yield from step.members
                yield from step.tail
            elif type(step) is Call:
                for body in step.bodies.values():
                    yield from body.walk()

    def nests(self):
        return [r for r in self.walk() if type(r) is Nest]

    def calls(self):
        return [r for r in self.walk() if type(r) is Call]

    # the schedule's summary: what the plan needs to know of the kernel
    @property
    def threaded(self):
        """Has the kernel a ``numba.prange`` loop (so numba compiles it parallel)?"""
        return any(type(s) in (Nest, RowBlock) and s.chunks is not None and s.chunks.threaded
                   for s in self.walk())

    @property
    def threaded_calls(self):
        """Does it call a helper that runs across threads (it then runs as wide as the
        engine too, though its own code may have no prange)?"""
        return any(c.threaded for c in self.calls())

    @property
    def blas(self):
        """The BLAS libraries its steps call (``ext.NUMPY_BLAS``, ``ext.SCIPY_BLAS``)."""
        return frozenset(c.blas for c in self.calls() if c.blas is not None)

    @property
    def serial_products(self):
        """Does a large product stay one BLAS call on one thread in a parallel kernel
        (the plan then runs serially with BLAS wide instead: ``products``)?"""
        return any(c.product is not None and c.product.serial for c in self.calls())

    @property
    def uses_workspace(self):
        return bool(self.workspace)

    def as_text(self, indent=""):
        """One line a record, bodies indented under their call; values are named as the
        program prints them."""
        names = var_names(self.program)
        lines = []
        for step in self.steps:
            lines.append(indent + step.describe(names))
            if type(step) is RowBlock:
                lines += [indent + "  | " + s.describe(names) for s in step.members]
                lines += [indent + "  then " + s.describe(names) for s in step.tail]
            elif type(step) is Call:
                for k, body in enumerate(step.bodies.values()):
                    lines.append(indent + f"  body {k}:")
                    lines.append(body.as_text(indent + "    "))
        for title, values in (("workspace", self.workspace),
                              ("written into given arrays", self.given),
                              ("allocated before the loop", self.hoisted),
                              ("elements in scalars", self.scalars)):
            if values:
                lines.append(indent + f"{title}: " + " ".join(sorted(names[v] for v in values)))
        return "\n".join(lines)


def _shape_text(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


# ------------------------------------------------------------------------------ passes

def schedule(program, target=None, in_names=None, given=()):
    """The kernel schedule of ``program`` (its inputs named ``in_names`` in the source;
    ``given``: outputs the caller may pass arrays for, ``Schedule.given``)."""
    target = target or Target()
    in_names = in_names or [f"in{i}" for i in range(len(program.invars))]
    dims = DimEnv(program.in_avals, in_names)
    return schedule_body(program, Context(target, top=True, in_loop=False, dims=dims),
                         given=given)


def schedule_body(program, context, loaded=(), given=()):
    """The schedule of ``program``'s steps in ``context`` (a kernel's, or a body's whose
    inputs ``loaded`` its loop reads into scalars)."""
    steps = partition(program)
    if context.top:
        steps = group_rows(steps)
    records = [_record(step, context) for step in steps]
    result = Schedule(program, records, context, loaded, given)
    for _, apply in PASSES:
        apply(result)
    return result


def _record(step, context):
    if type(step) is FusedRegion:
        return Nest(step)
    if type(step) is RowGroup:
        return RowBlock(step, [_record(s, context) for s in step.steps], [], None)
    rule = lowering_of(step.eqn)
    call = rule.decide(step.eqn, context) if rule.decide is not None else Call(step.eqn)
    call.allocates = rule.allocates(step.eqn)
    return call


def _unroll_tiny_regions(sched):
    """A tiny region of elementwise ops and broadcasts in a loop body is written element
    by element (``unrolled``): its cost repeats every iteration."""
    if not sched.context.in_loop:
        return
    for nest in sched.steps:
        if type(nest) is Nest and _unrollable(nest.region):
            nest.form = "unrolled"


def _unrollable(region):
    return unrolled.tiny(region.space) and all(
        e.prim is layout.broadcast_in_dim_p or is_elementwise(e) for e in region.eqns)


# A prange launch and its barrier cost a few us on OpenMP and a chunk should stay in
# L1/L2, so chunks are ~8k elements and only regions that take well over 10 us alone are
# chunked: 2^17 elements of arithmetic, or 2^15 when they call transcendental functions
# (softmax cross-entropy's exp over 128 x 1000 went from 112 to 81-93 us on two threads,
# where layer_norm's arithmetic over 128 x 768 ran slower on two than on one). The serial
# variant of a plan chunks the same regions with range(): same partial sums, same bits.
PARALLEL_MIN_ELEMENTS = 1 << 17
PARALLEL_MIN_ELEMENTS_MATH = 1 << 15
CHUNK_ELEMENTS = 1 << 13


def pays_for_threads(elements, eqns):
    return elements >= PARALLEL_MIN_ELEMENTS or (
        elements >= PARALLEL_MIN_ELEMENTS_MATH and any(fusion(e).math for e in eqns))


def _chunk_large_regions(sched):
    """A large top-level region's outermost axis is cut into chunks, independent but for
    the reductions across that axis, each chunk computing a partial of its own (a prange
    in a parallel variant, a range in the serial one). A 1-D region is cut into pieces of
    its only row, so its full reductions must be row helpers (``cuts_into_row_chunks``)."""
    if not sched.context.top:
        return
    threaded = sched.context.target.parallel
    for step in sched.steps:
        if type(step) is RowBlock:
            _chunk_row_block(step, threaded)
        for nest in (step.members + step.tail if type(step) is RowBlock else [step]):
            if type(nest) is Nest and nest.chunks is None:
                _chunk_if_large(nest, threaded)


def _chunk_if_large(nest, threaded):
    region = nest.region
    if cuts_into_row_chunks(region) and pays_for_threads(math.prod(region.space),
                                                         region.eqns):
        inner = int(np.prod(region.space[1:]))
        nest.chunks = Chunks(max(1, CHUNK_ELEMENTS // inner), threaded)


def _light(record):
    """A step with no reduction and no math call: a pass that only moves memory."""
    return type(record) is not Nest or not any(
        is_reduction(e) or fusion(e).math for e in record.region.eqns)


def _chunk_row_block(block, threaded):
    """A row block as one loop over chunks of rows, each member running its part of a
    chunk in turn: a prange in a plan's parallel variant, where the block's work pays
    for threads but none of its regions does alone (a region that does already has a
    prange of its own). Measured on two vCPUs, whose caches do not share lines cheaply,
    it pays only when no later step reads a large array the block wrote: layer_norm's
    forward pass went 55 -> 36 us; a block whose output a serial pass read next ran
    100 -> 207 us (its layer_norm gradient), and a trailing memory-only member 94 ->
    110 us (softmax cross-entropy's gradient). Otherwise the members run as plain nests.
    Either way, each variant computes the same bits: the serial variant chunks the full
    reductions of a block the parallel variant runs as one, at its rows."""
    members = block.members
    while len(members) > 1 and _light(members[-1]):     # memory-only passes run after it
        block.tail.insert(0, members.pop())
    read_later = block.read_later.union(*map(_reads, block.tail))
    nests = [s for s in members if type(s) is Nest]
    made = {v for s in members for v in (s.region.defined | s.region.reduced
                                         if type(s) is Nest else s.eqn.outvars)}
    rows_only = {(block.group.rows,), (block.group.rows, 1)}
    chunked = (len(nests) >= 2
               and pays_for_threads(sum(math.prod(n.region.space) for n in nests),
                                    [e for n in nests for e in n.region.eqns])
               and not any(pays_for_threads(math.prod(n.region.space), n.region.eqns)
                           for n in nests)
               and not any(v in made and v.aval.shape not in rows_only for v in read_later))
    # (at least 1: a region with a zero-length axis has rows of no elements)
    widest = max([math.prod(n.region.space[1:]) for n in nests] + [1])
    step = max(1, CHUNK_ELEMENTS // widest)
    if chunked and threaded:
        block.chunks = Chunks(step, True)
        for n in nests:
            n.chunks, n.in_block = block.chunks, True
    elif chunked:
        # the serial variant: each member reducing across rows chunks itself alike
        for n in nests:
            if reductions_across_rows(n.region):
                n.chunks = Chunks(step, False)


def _reads(record):
    """The values a nest or a call reads."""
    eqns = record.region.eqns if type(record) is Nest else [record.eqn]
    return {v for eqn in eqns for v in eqn.invars if type(v) is Var}


def _note_reads_after(sched):
    """For each row block, the values the steps after it read (``_chunk_row_block``)."""
    seen = set()
    for step in reversed(sched.steps):
        if type(step) is RowBlock:
            step.read_later = frozenset(seen)
        for member in (step.members + step.tail if type(step) is RowBlock else [step]):
            seen |= _reads(member)


def trailing_level(axes, rank):
    """The loop depth a reduction over the trailing ``axes`` of the space starts at, or
    None when it reduces other axes (then it accumulates into its output array)."""
    k = len(axes)
    return rank - k if k and tuple(axes) == tuple(range(rank - k, rank)) else None


def carried_reductions(nest):
    """The reductions whose accumulator the innermost loop carries: full ones (to a
    scalar) and those over trailing axes, unless chunks of rows add into partials of
    their own (a reduction across the chunked axis)."""
    rank = len(nest.region.space)
    out = []
    for e in nest.region.eqns:
        if not is_reduction(e):
            continue
        if not e.outvars[0].aval.shape:
            out.append(e)
        elif not (nest.chunks is not None and 0 in e.params["axes"]) and \
                trailing_level(e.params["axes"], rank) is not None:
            out.append(e)
    return tuple(out)


def _split_carried_reductions(sched):
    """A reduction whose accumulator the innermost loop carries (a row sum, a full sum)
    keeps LLVM from vectorizing that loop without reassociating the sum. With other work
    in the region, the innermost loop is split in two: one computes the row into buffers
    (vectorizable: exp, tanh ...), one accumulates it in order (whole rows by the
    ``vreduce`` helpers where they apply)."""
    for nest in _own_nests(sched):
        if nest.form != "loops":
            continue
        region = nest.region
        carried = carried_reductions(nest)
        others = [e for e in region.eqns if e not in carried]
        split = len(region.space) >= 1 and bool(carried) and (
            bool(others) or all(fusion(e).extreme for e in carried)
            or any(row_helper(e) for e in carried))
        if not split:
            continue
        nest.split, nest.carried = True, carried
        scratch = []        # in the order the carried reductions first need them
        for e in carried:
            x = e.invars[0]
            if type(x) is Var and x in region.defined and ("row", x) not in scratch:
                scratch.append(("row", x))
            dt = e.outvars[0].aval.dtype
            if row_helper(e) == "sum" and ("sum", dt) not in scratch:
                scratch.append(("sum", dt))
        nest.scratch = tuple(scratch)
        # whole rows by a ``vreduce`` helper where one computes the same bits and the
        # operand is a row (not a scalar); max/min of the others with four accumulators
        nest.by_row = tuple(e for e in carried if row_helper(e) and (
            ("row", e.invars[0]) in scratch
            or type(e.invars[0]) is Var and e.invars[0].aval.shape))
        rest = [e for e in carried if e not in nest.by_row]
        nest.four_accumulators = bool(rest) and all(fusion(e).extreme for e in rest)
        # a prange chunk allocates its own; inside a loop, once before it
        if nest.chunks is not None and nest.chunks.threaded:
            nest.scratch_at = "chunk"
        elif (nest.chunks is None and sched.context.in_loop
              and sched.context.dims.writable(region.space[-1:])):
            nest.scratch_at = "hoisted"


def _own_nests(sched):
    """The nests of this schedule itself (bodies are scheduled in their own context)."""
    for step in sched.steps:
        if type(step) is Nest:
            yield step
        elif type(step) is RowBlock:
            yield from (s for s in step.members if type(s) is Nest)


def _allocate_body_arrays_once(sched):
    """A loop body's arrays are allocated once, before the outermost loop, when their
    shapes can be written there, and every iteration reuses them: the loop rules copy
    whatever outlives an iteration (``control``)."""
    if sched.context.in_loop:
        writable = sched.context.dims.writable
        sched.hoisted = frozenset(v for e in sched.program.eqns for v in e.outvars
                                  if v.aval.shape and writable(v.aval.shape))


def _hold_elements_in_scalars(sched):
    """The values whose elements later steps read from scalars rather than from their
    arrays: in a loop body, the inputs its loop loads and the arrays unrolled regions
    write; anywhere, what a step whose rule ``holds_elements`` makes of them (or of a
    scalar: a 0-d value reshaped)."""
    held = set(sched.loaded)
    for step in sched.steps:
        if type(step) is Nest and step.form == "unrolled":
            held.update(v for v in step.region.materialize if v.aval.shape)
        elif type(step) is Call and lowering_of(step.eqn).holds_elements(
                step.eqn, held, sched.context):
            held.add(step.eqn.outvars[0])
    sched.scalars = frozenset(held)


def _place_in_workspace(sched):
    """Top-level arrays no output can reach, not even as a view, come from the kernel's
    workspace, which outlives the call (``workspace``): the materialized values of
    nests, the accumulators of reductions over trailing axes, and the outputs of calls
    whose rule allocates them."""
    if not sched.context.top or sched.context.in_loop:
        return
    sched.workspace = frozenset(private_values(sched.program) & _allocated_arrays(sched))
    # a call that is the only reader of an array the kernel allocated for itself may
    # write its result into that array (a scatter into its operand's last use). Not any
    # private value: a reshape's is a view of an array that others may still read.
    readers = collections.Counter(v for e in sched.program.eqns for v in e.invars
                                  if type(v) is Var)
    for record in sched.steps:
        if type(record) is Call and lowering_of(record.eqn).reuses_operand:
            v = record.eqn.invars[0]
            record.overwrites = v in sched.workspace and readers[v] == 1


def _allocated_arrays(sched):
    """The top-level arrays the kernel's own steps allocate (``Emitter.allocate``): the
    materialized values of nests, the accumulators of reductions over trailing axes, and
    the outputs of calls whose rule allocates them."""
    allocated = set()
    for record in sched.steps:
        for r in (record.members + record.tail if type(record) is RowBlock else [record]):
            if type(r) is Call:
                if r.allocates:
                    allocated.update(v for v in r.eqn.outvars if v.aval.shape)
                continue
            region, rank = r.region, len(r.region.space)
            for e in region.eqns:
                v = e.outvars[0]
                if not v.aval.shape:
                    continue
                if type(fusion(e)) is Reduction:
                    across = r.chunks is not None and 0 in e.params["axes"]
                    if not across and trailing_level(e.params["axes"], rank) is not None:
                        allocated.add(v)
                elif v in region.materialize:
                    allocated.add(v)
    return allocated


def _write_outputs_into_given_arrays(sched):
    """Of the outputs the caller offers arrays for (``given``: values its plan keeps
    between calls, which no output of the plan reaches), those a step of the kernel
    allocates are written into the arrays, passed as parameters, instead of allocated
    and returned: a returned array costs numba an allocation and a box, about as much as
    a small region's work."""
    if not sched.given:
        return
    outs = [v for v in sched.program.outvars if type(v) is Var]
    allocated = _allocated_arrays(sched)
    sched.given = tuple(v for v in dict.fromkeys(outs)
                        if v in sched.given and v in allocated and outs.count(v) == 1)


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


# The passes, in the order they run on each schedule (a body's runs when its call is
# decided, inside the ``_record`` of the kernel's schedule).
PASSES = (
    ("unroll tiny regions in loop bodies", _unroll_tiny_regions),
    ("reads after each row block", _note_reads_after),
    ("chunk large regions and row blocks", _chunk_large_regions),
    ("split carried reductions", _split_carried_reductions),
    ("place private arrays in the workspace", _place_in_workspace),
    ("write outputs into given arrays", _write_outputs_into_given_arrays),
    ("allocate loop bodies' arrays once", _allocate_body_arrays_once),
    ("hold tiny values' elements in scalars", _hold_elements_in_scalars),
)
