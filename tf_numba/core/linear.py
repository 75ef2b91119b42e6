"""Values AD rules exchange: symbolic zeros and undefined (linear) primals, and rule helpers.

``Zero(aval)`` is a tangent or cotangent known to be zero; it is never materialized unless a
rule asks for it with ``instantiate``. ``UndefinedPrimal(aval)`` marks the linear inputs of
an equation being transposed.
"""
from . import dtypes
from .ir import aval_of_value
from .primitive import register


# The ops that rules and transforms build arrays with, by name: ``full``, ``broadcast_in_dim``,
# ``transpose`` and ``add``. ``ops`` declares them and fills this table when it is imported,
# since core imports nothing above it.
ARRAY_OPS = {}


class Zero:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    # custom rules with symbolic_zeros=True see Zero as JAX's SymbolicZero, which has these
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    def __repr__(self):
        return f"Zero({self.aval})"


class UndefinedPrimal:
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_zero(x):
    return type(x) is Zero


def is_undefined(x):
    return type(x) is UndefinedPrimal


def has_tangent(aval):
    """Only inexact (float/complex) values carry tangents; ints and bools have none."""
    return dtypes.is_inexact(aval.dtype)


def instantiate(t):
    """A real array for a tangent that may be a symbolic Zero."""
    if type(t) is Zero:
        return ARRAY_OPS["full"](t.aval.shape, 0, t.aval.dtype)
    return t


def defjvp(prim, *partials):
    """JVP from one function per input, ``partial(g, ans, *primals, **params)``, summed.

    A ``None`` partial means the output does not depend smoothly on that input.
    Zero tangents contribute nothing; if every tangent is zero the result is Zero.
    """
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out = None
        for fn, t in zip(partials, tangents):
            if fn is None or type(t) is Zero:
                continue
            term = fn(t, ans, *primals, **params)
            out = term if out is None else add_tangents(out, term)
        out_aval = aval_of(ans)
        if out is None or not has_tangent(out_aval):
            return ans, Zero(out_aval)
        return ans, broadcast_to_aval(out, out_aval)
    register("jvp", prim, jvp)
    return jvp


def defzero(prim):
    """The output of ``prim`` is piecewise constant or non-differentiable-valued: zero tangent."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if prim.multiple_results:
            return ans, [Zero(aval_of(a)) for a in ans]
        return ans, Zero(aval_of(ans))
    register("jvp", prim, jvp)


def deflinear(prim, transpose):
    """``prim`` is linear in all its array inputs: its JVP is itself applied to the tangents.

    ``transpose(ct, *args, **params)`` returns one cotangent per input.
    """
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            if prim.multiple_results:
                return ans, [Zero(aval_of(a)) for a in ans]
            return ans, Zero(aval_of(ans))
        return ans, prim.bind(*[instantiate(t) for t in tangents], **params)
    register("jvp", prim, jvp)
    register("transpose", prim, transpose)


def aval_of(x):
    """The ShapedArray of a tracer or a concrete value."""
    aval = getattr(x, "aval", None)
    return aval if aval is not None else aval_of_value(x)


def broadcast_to_aval(x, aval):
    """Widen a rank-0 tangent term to ``aval``'s shape (elementwise ops broadcast scalars)."""
    if aval_of(x).shape == aval.shape:
        return x
    return ARRAY_OPS["broadcast_in_dim"](x, aval.shape, ())


def add_tangents(a, b):
    """The sum of two tangents (or cotangents) of one aval."""
    return ARRAY_OPS["add"](a, b)

