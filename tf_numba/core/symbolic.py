"""Binding symbolic dims to concrete inputs: check shapes and guards, and specialize.

``bind_dims`` reads the value of every symbol off the inputs and checks each guard, so a
bad input is reported, naming the input, axis, operation and source line, before anything
runs. ``specialize`` substitutes the values into a program (for the NumPy interpreter,
whose impls need concrete shapes).
"""
from .ir import Eqn, Program, ShapedArray, Var
from .shapes import Sym
from ..errors import DTypeError, ShapeError


def bind_dims(program, args, what="input"):
    """{atom name: int} from the inputs' shapes; ShapeError on any inconsistency."""
    values = {}
    for i, (v, x) in enumerate(zip(program.invars, args)):
        aval = v.aval
        dtype = getattr(x, "dtype", None)
        if dtype is not None and dtype != aval.dtype:
            raise DTypeError(f"{what} {i} has dtype {dtype.name}, the program takes "
                             f"{aval.dtype.name}")
        shape = getattr(x, "shape", ())
        if len(shape) != len(aval.shape):
            raise ShapeError(f"{what} {i} has rank {len(shape)} (shape {tuple(shape)}), the "
                             f"program takes rank {len(aval.shape)} ({aval})")
        for axis, (d, n) in enumerate(zip(aval.shape, shape)):
            if type(d) is int:
                if d != n:
                    raise ShapeError(f"{what} {i} axis {axis} is {n}, the program was traced "
                                     f"with {d} there")
                continue
            if len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1:
                name = d.terms[0][0][0]
                if values.setdefault(name, n) != n:
                    raise ShapeError(f"{what} {i} axis {axis} gives {name} = {n}, but an "
                                     f"earlier input gave {name} = {values[name]}")
    for v in program.invars:
        for d in v.aval.shape:
            if isinstance(d, Sym) and not d.atoms() <= values.keys():
                raise ShapeError(f"the input dim {d} is not a plain symbol, so its symbols "
                                 "cannot be read off the inputs")
    for i, (v, x) in enumerate(zip(program.invars, args)):
        for axis, d in enumerate(v.aval.shape):
            if isinstance(d, Sym) and d.evaluate(values) != x.shape[axis]:
                raise ShapeError(f"{what} {i} axis {axis} is {x.shape[axis]}, but {d} = "
                                 f"{d.evaluate(values)}")
    for g in program.guards:
        lhs, rhs = evaluate(g.lhs, values), evaluate(g.rhs, values)
        if not g.holds(lhs, rhs):
            raise ShapeError(f"needs {g!r}, but the inputs give {g.lhs} = {lhs} and "
                             f"{g.rhs} = {rhs}", op=g.op, source=g.source)
    return values


def evaluate(d, values):
    """``d`` with the symbols of ``values`` substituted; a dim with other symbols (a loop's
    trip count, known only when the loop has run) stays symbolic."""
    if not isinstance(d, Sym):
        return d
    return d.evaluate(values) if d.atoms() <= values.keys() else d


def substitute(value, values):
    """``value`` (a param: dims, tuples, dicts, programs) with every Sym evaluated."""
    if isinstance(value, Sym):
        return evaluate(value, values)
    if isinstance(value, tuple):
        return tuple(substitute(v, values) for v in value)
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, Program):
        return specialize(value, values)
    return value


def is_symbolic(program):
    return any(isinstance(d, Sym) for v in program.invars for d in v.aval.shape)


def specialize(program, values):
    """``program`` with its symbols replaced by ``values`` (a new, concrete program)."""
    mapping = {}

    def var(v):
        if type(v) is not Var:
            return v
        found = mapping.get(v)
        if found is None:
            aval = ShapedArray(tuple(evaluate(d, values) for d in v.aval.shape), v.aval.dtype)
            found = mapping[v] = v if aval is v.aval else Var(aval)
        return found

    eqns = [Eqn(e.prim, tuple(var(v) for v in e.invars), tuple(var(v) for v in e.outvars),
                substitute(e.params, values), e.source) for e in program.eqns]
    return program.replace(invars=[var(v) for v in program.invars],
                           consts=[(var(v), c) for v, c in program.consts], eqns=eqns,
                           outvars=[var(v) for v in program.outvars], guards=())
