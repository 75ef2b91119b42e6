"""Program simplification: constant folding, exact algebraic identities, CSE, then DCE.

Only rewrites that are exact for every input are applied (``x * 1 -> x`` yes, ``x + 0 -> x``
no: it changes ``-0.0``). One forward pass and one backward pass: linear in program size.
"""
import numpy as np

from ..core.ir import Literal, ShapedArray, Var
from ..core.primitive import EFFECTFUL


class _Known:
    """What the pass knows of the values so far: ``fill`` maps a var to the scalar it is
    filled with (a broadcast of a literal), ``made_by`` a var to the kept one-output equation
    that computes it."""
    __slots__ = ("fill", "made_by")

    def __init__(self):
        self.fill, self.made_by = {}, {}


def _literal_scalar(v, known):
    """The scalar a value is known to equal everywhere (a literal or a broadcast of one)."""
    if type(v) is Literal:
        return v.value
    return known.fill.get(v)


def _is_one(v, known):
    value = _literal_scalar(v, known)
    return value is not None and bool(value == 1)


def _identity_if_one(one_at):
    """``prim(x, 1) -> x`` when the result has x's type (mul, div)."""
    def rewrite(eqn, ins, known):
        for i in one_at:
            other = ins[1 - i]
            if _is_one(ins[i], known) and other.aval is eqn.outvars[0].aval:
                return other
        return None
    return rewrite


def _reshape_undone(eqn, ins, known):
    """``reshape(reshape(x, s), x.shape) -> x``: a keepdims reduction's gradient reshapes
    the cotangent to the kept shape and its reader back (each a call in the interpreter)."""
    made = known.made_by.get(ins[0])
    if made is None or made.prim is not eqn.prim:
        return None
    x = made.invars[0]
    return x if type(x) is Var and x.aval.shape == eqn.params["new_sizes"] else None


def _select_known(eqn, ins, known):
    """``select(True, a, b) -> a`` when the predicate is a literal and a has the result type."""
    pred = ins[0]
    if type(pred) is not Literal:
        return None
    chosen = ins[1] if bool(pred.value) else ins[2]
    return chosen if chosen.aval is eqn.outvars[0].aval else None


REWRITES = {
    "mul": _identity_if_one((0, 1)),
    "div": _identity_if_one((1,)),
    "pow": _identity_if_one((1,)),      # pow(x, 1) == x for every x, NaN included
    "select": _select_known,
    "reshape": _reshape_undone,
}


# Tables of primitives that ``ops/elementwise.py`` fills (transforms sit below ops).
# Operands that may swap places: x + y and x * y are the same bits in either order (a
# gradient of x * x or x ** 2 otherwise keeps both g * x and x * g). Not max/min: which
# zero they return for -0.0 and 0.0 depends on the order.
COMMUTATIVE = set()
# The elementwise primitives, which broadcast rank-0 operands.
SCALAR_BROADCASTING = set()


def _operand_key(v):
    return v if type(v) is Var else (v.aval, v.value.tobytes())


def _hashable_params(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _fold(eqn, ins):
    """Evaluate an equation whose inputs are all literals and whose output is a scalar."""
    if eqn.prim.multiple_results or eqn.outvars[0].aval.shape or not eqn.invars:
        return None
    if not all(type(v) is Literal for v in ins):
        return None
    value = np.asarray(eqn.prim.impl(*[v.value for v in ins], **eqn.params),
                       eqn.outvars[0].aval.dtype)
    return Literal(value, eqn.outvars[0].aval)


def _fill_as_literal(eqn, ins, known_fill):
    """Elementwise ops broadcast rank-0 operands, so an operand that is a broadcast of a
    scalar can be that scalar, when another operand still carries the output shape."""
    if not known_fill or not any(v in known_fill for v in ins if type(v) is Var):
        return ins
    shape = eqn.outvars[0].aval.shape
    if not any(type(v) is Var and v not in known_fill and v.aval.shape == shape for v in ins):
        return ins
    out = []
    for v in ins:
        fill = known_fill.get(v) if type(v) is Var else None
        if fill is not None:
            v = Literal(np.asarray(fill, v.aval.dtype), ShapedArray((), v.aval.dtype))
        out.append(v)
    return out


def simplify(program):
    """A smaller program computing the same outputs (bit for bit)."""
    subst = {}
    known = _Known()
    seen = {}           # CSE key -> outvars
    eqns = []

    def read(v):
        return subst.get(v, v) if type(v) is Var else v

    for eqn in program.eqns:
        ins = [read(v) for v in eqn.invars]
        if eqn.prim in SCALAR_BROADCASTING:
            ins = _fill_as_literal(eqn, ins, known.fill)
        folded = _fold(eqn, ins)
        if folded is not None:
            subst[eqn.outvars[0]] = folded
            continue
        rewrite = REWRITES.get(eqn.prim.name)
        if rewrite is not None:
            replacement = rewrite(eqn, ins, known)
            if replacement is not None:
                subst[eqn.outvars[0]] = replacement
                continue
        params_key = _hashable_params(eqn.params)
        key = None
        if params_key is not None and eqn.prim not in EFFECTFUL:
            operands = tuple(map(_operand_key, ins))
            key = (eqn.prim, params_key,
                   frozenset(operands) if eqn.prim in COMMUTATIVE else operands)
            found = seen.get(key)
            if found is not None:
                subst.update(zip(eqn.outvars, found))
                continue
        if ins != list(eqn.invars):
            eqn = type(eqn)(eqn.prim, tuple(ins), eqn.outvars, eqn.params, eqn.source)
        if key is not None:
            seen[key] = eqn.outvars
        if eqn.prim.name == "broadcast_in_dim" and type(ins[0]) is Literal:
            known.fill[eqn.outvars[0]] = ins[0].value
        if len(eqn.outvars) == 1:       # (an effect has none)
            known.made_by[eqn.outvars[0]] = eqn
        eqns.append(eqn)

    outvars = [read(v) for v in program.outvars]
    return dead_code_elimination(program.replace(eqns=eqns, outvars=outvars))


def dead_code_elimination(program):
    live = {v for v in program.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(program.eqns):
        if eqn.prim in EFFECTFUL or any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(v for v in eqn.invars if type(v) is Var)
    kept.reverse()
    consts = [(v, c) for v, c in program.consts if v in live]
    return program.replace(consts=consts, eqns=kept)
