"""Split a program into fused regions and library steps, in an order that runs correctly.

A ``FusedRegion`` is a maximal run of elementwise equations (including broadcasts and
dtype conversions) over one iteration space, optionally ending in reductions over it: it
becomes one loop nest, one pass over memory. Everything else (contractions, layout
changes, gathers, sorts, ...) is a ``LibraryStep``. A library step whose inputs do not come
from the open region is scheduled before it, so the region keeps growing past it.
"""
from ..core.ir import Var
from .scalar_exprs import is_elementwise

REDUCTIONS = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
              "reduce_or"}


class FusedRegion:
    def __init__(self, space):
        self.space = space          # iteration shape (concrete dims)
        self.eqns = []
        self.defined = set()        # vars computed inside as loop scalars
        self.reduced = set()        # reduction outputs: ready only after the loop
        self.materialize = set()    # region values also needed outside the loop

    def __repr__(self):
        return f"FusedRegion(space={self.space}, {len(self.eqns)} eqns)"


class LibraryStep:
    def __init__(self, eqn):
        self.eqn = eqn

    def __repr__(self):
        return f"LibraryStep({self.eqn.prim.name})"


def is_outer_product(eqn):
    """A ``dot_general`` whose contracted dims all have length 1 is a broadcast multiply:
    as a loop it is one pass writing the output, where BLAS gemm with k = 1 costs ~1.5x
    that and a call. (The length is concrete here; another length gets other source.)"""
    if eqn.prim.name != "dot_general":
        return False
    (lc, rc), _ = eqn.params["dimension_numbers"]
    shape = eqn.invars[0].aval.shape
    return all(shape[d] == 1 for d in lc)


def reads_through_index_map(eqn):
    """Fusible equations that read an operand at other positions than the loop's own
    (the operand must be a materialized array or a scalar, never a loop value), or that
    compute from the position itself (``iota``: a triangular mask is then a compare of
    two loop indices, not two index arrays written out and read back)."""
    return eqn.prim.name in ("broadcast_in_dim", "iota") or is_outer_product(eqn)


def _space(eqn):
    """The iteration space of a fusible equation, or None if it is not fusible."""
    name = eqn.prim.name
    if name in REDUCTIONS:
        return eqn.invars[0].aval.shape
    if is_elementwise(eqn) or reads_through_index_map(eqn):
        return eqn.outvars[0].aval.shape
    return None


def is_fusible(eqn):
    """Does ``eqn`` run inside a fused region (its array output then freshly written)."""
    return _space(eqn) is not None


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
            if eqn.prim.name in REDUCTIONS:
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
