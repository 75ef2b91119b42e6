"""Split a program into fused regions and library steps, in an order that runs correctly.

A ``FusedRegion`` is a maximal run of elementwise equations (including broadcasts and
dtype conversions) over one iteration space, optionally ending in reductions over it: it
becomes one loop nest, one pass over memory. Everything else (contractions, layout
changes, gathers, sorts, ...) is a ``LibraryStep``. A library step whose inputs do not come
from the open region is scheduled before it, so the region keeps growing past it.
"""
import math

from ..core import dtypes
from ..core.ir import Var
from ..ops import layout
from ..kernel_vocab.rules import Elementwise, IndexMap, Reduction, fusion, is_reduction


class FusedRegion:
    def __init__(self, space):
        self.space = space          # iteration shape (concrete dims)
        self.eqns = []
        self.defined = set()        # vars computed inside as loop scalars
        self.reduced = set()        # reduction outputs: ready only after the loop
        self.materialize = set()    # region values also needed outside the loop

    def __repr__(self):
        return f"FusedRegion(space={self.space}, {len(self.eqns)} eqns)"


class RowGroup:
    """Consecutive regions over the same rows (the first axis of their spaces), run a chunk
    of rows at a time: each region does its part of a chunk before the next one starts, so
    one prange covers them all (a region alone may be too small to pay for one) and a
    chunk's rows stay on one core. A member reads what an earlier member made only at its
    own row, and nothing a member made is read across rows until the group has run.
    ``steps`` are the member regions and the row-preserving reshapes between them (views,
    made before the rows run)."""

    def __init__(self, rows, first):
        self.rows = rows
        self.steps = [first]
        self.made = set(first.defined | first.reduced)      # readable at the same row
        self.totals = reductions_across_rows(first)     # readable after the group

    def regions(self):
        return [s for s in self.steps if type(s) is FusedRegion]

    def __repr__(self):
        return f"RowGroup(rows={self.rows}, {self.steps})"


class LibraryStep:
    def __init__(self, eqn):
        self.eqn = eqn

    def __repr__(self):
        return f"LibraryStep({self.eqn.prim.name})"


def reads_through_index_map(eqn):
    """Fusible equations that read an operand at other positions than the loop's own
    (the operand must be a materialized array or a scalar, never a loop value), or that
    compute from the position itself (``iota``: a triangular mask is then a compare of
    two loop indices, not two index arrays written out and read back)."""
    return type(fusion(eqn)) is IndexMap


def _space(eqn):
    """The iteration space of a fusible equation, or None if it is not fusible."""
    kind = type(fusion(eqn))
    if kind is Reduction:
        return eqn.invars[0].aval.shape
    if kind is Elementwise or kind is IndexMap:
        return eqn.outvars[0].aval.shape
    return None


def is_fusible(eqn):
    """Does ``eqn`` run inside a fused region (its array output then freshly written)."""
    return fusion(eqn) is not None


def _fits(region, eqn):
    """Can ``eqn`` join ``region``: its region-made inputs must be loop scalars of this space."""
    if reads_through_index_map(eqn):
        return not any(type(v) is Var and (v in region.reduced
                                           or (v in region.defined and v.aval.shape))
                       for v in eqn.invars)
    for v in eqn.invars:
        if type(v) is Var and v in region.reduced:
            return False
    return True


def partition(program):
    """The steps of ``program`` in execution order; regions know what to materialize."""
    steps = []
    region = None
    for eqn in program.eqns:
        space = _space(eqn)
        if space is not None:
            if region is None or region.space != space or not _fits(region, eqn):
                region = FusedRegion(space)
                steps.append(region)
            region.eqns.append(eqn)
            if is_reduction(eqn):
                region.reduced.update(eqn.outvars)
            else:
                region.defined.update(eqn.outvars)
            continue
        step = LibraryStep(eqn)
        depends = region is not None and any(
            type(v) is Var and (v in region.defined or v in region.reduced) for v in eqn.invars)
        if region is not None and not depends:
            steps.insert(steps.index(region), step)
        else:
            steps.append(step)
            region = None
    _mark_materialized(steps, program)
    return steps


def _mark_materialized(steps, program):
    owner = {}
    for step in steps:
        if type(step) is FusedRegion:
            for v in step.defined:
                owner[v] = step
    for step in steps:
        eqns = step.eqns if type(step) is FusedRegion else [step.eqn]
        for eqn in eqns:
            for v in eqn.invars:
                home = owner.get(v) if type(v) is Var else None
                if home is None:
                    continue
                if home is not step or (reads_through_index_map(eqn) and v.aval.shape):
                    home.materialize.add(v)
    for v in program.outvars:
        home = owner.get(v) if type(v) is Var else None
        if home is not None:
            home.materialize.add(v)


def row_helper(eqn):
    """"sum" / "extreme" when a ``vreduce`` row helper computes this reduction exactly:
    real floats and ints (integer sums are exact in any order; NumPy's complex sums pair
    differently, and bools are logical reductions)."""
    dt = eqn.outvars[0].aval.dtype
    if dtypes.is_bool(dt) or dtypes.is_complex(dt) or eqn.invars[0].aval.dtype != dt:
        return None
    helper = fusion(eqn).row_helper
    return None if helper == "extreme" and dtypes.is_integer(dt) else helper


def cuts_into_row_chunks(region):
    """Can the region's outermost axis be cut into chunks that run independently: a
    reduction across that axis (a full sum, or a bias gradient's sum over all but the
    channels) has each chunk compute a partial of its own; a 1-D region is cut into pieces
    of its only row, so its full reductions must be row helpers; a scalar (rank-0) value
    computed in the loop cannot leave it."""
    space = region.space
    if not space or not all(type(d) is int for d in space):
        return False
    for eqn in region.eqns:
        v = eqn.outvars[0]
        if is_reduction(eqn):
            x = eqn.invars[0]
            if not v.aval.shape and len(space) == 1 and not (
                    row_helper(eqn) and type(x) is Var and x.aval.shape):
                return False
        elif not v.aval.shape and v in region.materialize:
            return False
    return True


def reductions_across_rows(region):
    """The region's reductions over its outermost axis, to a scalar or not (ready only
    after its whole loop)."""
    return {e.outvars[0] for e in region.eqns
            if is_reduction(e) and (not e.outvars[0].aval.shape or 0 in e.params["axes"])}


def _reads_own_row(group, region):
    """Does every read of a value the group made happen at the reading loop's own row?"""
    for eqn in region.eqns:
        for x in eqn.invars:
            if type(x) is not Var or x not in group.made:
                continue
            if x in group.totals or not x.aval.shape or x.aval.shape[0] != group.rows:
                return False
            if eqn.prim is layout.broadcast_in_dim_p:
                if eqn.params["broadcast_dimensions"][0] != 0:
                    return False
            elif reads_through_index_map(eqn) or x.aval.shape != region.space:
                return False
    return True


def _groups(region):
    """May ``region`` be a member of a row group: chunked by rows, and reducing across
    them only to scalars (a group's rules were measured without vector partials)."""
    return cuts_into_row_chunks(region) and not any(
        is_reduction(e) and e.outvars[0].aval.shape and 0 in e.params["axes"]
        for e in region.eqns)


def _joins(group, step):
    if type(step) is FusedRegion:
        return (step.space and step.space[0] == group.rows and _groups(step)
                and _reads_own_row(group, step))
    eqn = step.eqn
    return (eqn.prim is layout.reshape_p and eqn.invars[0].aval.shape[:1] == (group.rows,)
            and eqn.outvars[0].aval.shape[:1] == (group.rows,)
            and eqn.invars[0] not in group.totals)


def group_rows(steps):
    """``steps`` with runs of row-aligned regions made ``RowGroup``s (top-level code only:
    a group's chunks are a loop of their own). A library step that reads nothing a group
    made runs before the group, which then keeps growing past it. Groups of one region,
    or of regions one element wide, stay plain regions."""
    out, group = [], None

    def flush():
        tail = []
        while type(group.steps[-1]) is not FusedRegion:    # trailing views run after it
            tail.insert(0, group.steps.pop())
        regions = group.regions()
        if len(regions) >= 2 and any(math.prod(r.space[1:]) > 1 for r in regions):
            out.append(group)
        else:
            out.extend(group.steps)
        out.extend(tail)

    for step in steps:
        if group is not None:
            if _joins(group, step):
                group.steps.append(step)
                if type(step) is FusedRegion:
                    group.made.update(step.defined | step.reduced)
                    group.totals.update(reductions_across_rows(step))
                else:
                    group.made.update(step.eqn.outvars)
                continue
            if type(step) is LibraryStep and not any(
                    type(v) is Var and v in group.made for v in step.eqn.invars):
                out.append(step)
                continue
            flush()
            group = None
        if (type(step) is FusedRegion and len(step.space) >= 1 and step.space[0] != 1
                and _groups(step)):
            group = RowGroup(step.space[0], step)
        else:
            out.append(step)
    if group is not None:
        flush()
    return out
