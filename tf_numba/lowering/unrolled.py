"""Tiny fused regions inside loop bodies, written element by element as scalar code.

A loop body over small arrays (an ODE's 3-vector state, a 2 x 2 rotation) spends its time
moving values through memory, not computing: a region stores its output array and the next
step loads it back, and LLVM keeps neither in registers, since it cannot prove two arrays
distinct. A region whose iteration space has at most ``MAX_ELEMENTS`` elements is written
here one element at a time, each element a local scalar; the schedule records which
values have their elements in scalars (``Schedule.scalars``) so that later steps (tiny
regions, slices, reshapes, concatenations) read them instead of the array, and
``em.elements`` their names. The arrays are still written, for every other reader.
"""
import itertools
import math

from ..core.ir import Literal
from ..ops import layout
from ..kernel_vocab.rules import fusion
from ..kernel_vocab.scalar_exprs import literal

MAX_ELEMENTS = 16


def tiny(shape):
    """Is ``shape`` concrete and at most ``MAX_ELEMENTS`` elements?"""
    return all(type(d) is int for d in shape) and math.prod(shape) <= MAX_ELEMENTS


def positions(shape):
    """The multi-indices of ``shape`` in C order (the order of ``em.elements``)."""
    return list(itertools.product(*(range(d) for d in shape)))


def flat(position, shape):
    index = 0
    for p, d in zip(position, shape):
        index = index * d + p
    return index


def element(em, v, position, local=None):
    """Source of ``v`` at ``position``: a scalar when one holds it, else an array read."""
    if type(v) is Literal:
        return literal(v.value, v.aval.dtype)
    known = (local or {}).get(v) or em.elements.get(v)
    if known is not None:
        return known[flat(position, v.aval.shape)]
    if not v.aval.shape:
        return em.names[v]
    return f"{em.names[v]}[{', '.join(map(str, position))}]"


def load_elements(em, v):
    """Read a tiny array ``v`` into scalars once (a loop's carry at the top of an iteration)."""
    names = []
    for position in positions(v.aval.shape):
        names.append(em.fresh("e"))
        em.emit(f"{names[-1]} = {em.names[v]}[{', '.join(map(str, position))}]")
    em.elements[v] = names


def store_elements(em, target, v, names):
    """Write the scalars ``names`` of ``v`` into the array ``target``; remember them."""
    for position, name in zip(positions(v.aval.shape), names):
        em.emit(f"{target}[{', '.join(map(str, position))}] = {name}")
    em.elements[v] = names


def emit_region(em, region):
    """Write ``region`` element by element (the schedule chose it: a tiny region of
    elementwise ops and broadcasts inside a loop, where its cost repeats)."""
    local = {}
    for eqn in region.eqns:
        v = eqn.outvars[0]
        names = []
        for position in positions(region.space):
            if eqn.prim is layout.broadcast_in_dim_p:
                expr = _broadcast_element(em, eqn, position, local)
            else:
                expr = fusion(eqn).expression(
                    eqn, [element(em, a, position, local) for a in eqn.invars],
                    one_element=True)
            names.append(em.fresh("s"))
            em.emit(f"{names[-1]} = {expr}")
        local[v] = names
        if v in region.materialize:
            if v.aval.shape:
                array = em.define(v, "a")
                em.allocate(array, v, em.shape(v.aval.shape))
                store_elements(em, array, v, names)
            else:
                em.names[v] = names[0]


def _broadcast_element(em, eqn, position, local):
    x = eqn.invars[0]
    out_shape = eqn.outvars[0].aval.shape
    at = tuple(0 if x.aval.shape[k] == 1 and out_shape[d] != 1 else position[d]
               for k, d in enumerate(eqn.params["broadcast_dimensions"]))
    return element(em, x, at, local)
