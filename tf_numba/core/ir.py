"""The one IR: typed SSA programs ``outs = prim[params](ins)``, their printer and fingerprint.

``ShapedArray`` is the abstract value (dtype + shape) of every variable. A ``Program`` holds
its inputs, constants, equations and outputs; transforms build new programs and never
mutate an existing one.
"""
import hashlib
import itertools
import re

import numpy as np

from . import dtypes
from .shapes import Sym
from ..errors import DTypeError


class ShapedArray:
    """Abstract value: a shape (ints or ``Sym``) and a supported dtype. Interned, so
    equality is identity (object's own ``==`` and hash, which cost no Python call).
    ``concrete``: every dim is an int."""
    __slots__ = ("shape", "dtype", "concrete")
    _interned = {}

    def __new__(cls, shape, dtype):
        try:
            found = cls._interned.get((shape, dtype))
        except TypeError:       # an unhashable shape (a list)
            found = None
        if found is not None:
            return found
        shape = tuple(d if type(d) is int or isinstance(d, Sym) else int(d) for d in shape)
        key = (shape, dtype)
        found = cls._interned.get(key)
        if found is not None:
            return found
        self = object.__new__(cls)
        self.shape = shape
        self.dtype = dtype
        self.concrete = all(type(d) is int for d in shape)
        cls._interned[key] = self
        return self

    @property
    def ndim(self):
        return len(self.shape)

    def __reduce__(self):
        return (ShapedArray, (self.shape, self.dtype))

    def __repr__(self):
        return f"{dtypes.SHORT_NAMES[self.dtype]}[{','.join(map(str, self.shape))}]"


def is_plain(items):
    """Is ``items`` a tuple of ints, strings, None and such tuples? Such a parameter is
    its own dict key (2, 2.0 and True are equal keys, so floats and bools are not plain).
    """
    pending = [items]       # a stack, not recursion: dimension numbers nest three deep
    while pending:
        for x in pending.pop():
            kind = type(x)
            if kind is int or kind is str or x is None:
                continue
            if kind is tuple:
                pending.append(x)
                continue
            return False
    return True


def aval_of_value(x):
    """The ShapedArray of a concrete value (NumPy array, NumPy scalar or Python scalar)."""
    if type(x) is np.ndarray:   # the common case, first: ShapedArray interns (shape, dtype)
        return ShapedArray(x.shape, dtypes.canonical(x.dtype, what="input dtype"))
    if isinstance(x, dtypes.WEAK_SCALAR_TYPES):
        return ShapedArray((), dtypes.of_scalar(x))
    dt = getattr(x, "dtype", None)
    if dt is None:
        x = np.asarray(x)
        dt = x.dtype
    if dt.kind in "USOV":
        value = repr(x.item() if getattr(x, "ndim", 1) == 0 else x)
        kind = {"U": "string", "S": "bytes", "O": "Python object"}.get(dt.kind, "structured")
        raise DTypeError(
            f"a {kind} argument ({value[:40]}) cannot be traced: only numbers are. Under "
            "jit, mark it static (jit(f, static_argnums=...) or static_argnames=...) so that "
            "each value gets its own program; for vmap, bind it first (functools.partial); "
            "un-jitted grad, jvp and vjp pass an argument they do not differentiate to f "
            "as it is", source=_caller())
    return ShapedArray(tuple(np.shape(x)), dtypes.canonical(dt, what="input dtype"))


def _caller():
    from .trace import user_source     # trace imports this module
    return user_source()


_var_ids = itertools.count()


class Var:
    """An SSA variable. Identity is the object; ``id`` only orders them for debugging."""
    __slots__ = ("aval", "id")

    def __init__(self, aval):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self):
        return f"Var{self.id}:{self.aval}"


class Literal:
    """A scalar constant written inline in an equation."""
    __slots__ = ("value", "aval")

    def __init__(self, value, aval):
        self.value = value
        self.aval = aval

    def __repr__(self):
        v = self.value.item() if hasattr(self.value, "item") else self.value
        return repr(v)


class Eqn:
    """``outvars = prim[params](invars)``, with the user's source line for errors."""
    __slots__ = ("prim", "invars", "outvars", "params", "source")

    def __init__(self, prim, invars, outvars, params, source=None):
        self.prim = prim
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.source = source

    def __repr__(self):
        return f"Eqn({self.prim.name}, {self.invars} -> {self.outvars})"


class Guard:
    """A shape constraint met while tracing with symbolic dims: ``lhs == rhs``."""
    __slots__ = ("lhs", "rhs", "op", "source", "relation")

    def __init__(self, lhs, rhs, op, source, relation="=="):
        self.lhs, self.rhs, self.op, self.source = lhs, rhs, op, source
        self.relation = relation

    def holds(self, lhs, rhs):
        return lhs == rhs if self.relation == "==" else lhs >= rhs

    def __repr__(self):
        return f"{self.lhs} {self.relation} {self.rhs}"


class Program:
    """A closed, typed SSA program.

    ``invars``: inputs in call order; ``consts``: (Var, array) pairs bound at build time;
    ``eqns``: equations in dependency order; ``outvars``: outputs (Var or Literal);
    ``guards``: shape constraints between symbolic dims, checked when it is prepared;
    ``input_names`` / ``input_defaults``: optional per input (a default is the data a
    leaf was made from, used when ``Runtime.prepare`` is given no value for it).
    """
    __slots__ = ("invars", "consts", "eqns", "outvars", "guards", "input_names",
                 "input_defaults", "_fingerprint", "_source_key", "_schedule")

    def __init__(self, invars, consts, eqns, outvars, guards=(), input_names=None,
                 input_defaults=None):
        self.invars = tuple(invars)
        self.consts = tuple(consts)
        self.eqns = tuple(eqns)
        self.outvars = tuple(outvars)
        self.guards = tuple(guards)
        self.input_names = tuple(input_names) if input_names is not None else None
        self.input_defaults = tuple(input_defaults) if input_defaults is not None else None
        self._fingerprint = None
        self._source_key = None
        self._schedule = None        # how the interpreter runs it (interpreter._schedule)

    def replace(self, **changes):
        """A copy with some fields replaced (guards, names and defaults carried along)."""
        fields = dict(invars=self.invars, consts=self.consts, eqns=self.eqns,
                      outvars=self.outvars, guards=self.guards, input_names=self.input_names,
                      input_defaults=self.input_defaults)
        fields.update(changes)
        return Program(**fields)

    @property
    def in_avals(self):
        return tuple(v.aval for v in self.invars)

    @property
    def out_avals(self):
        return tuple(v.aval for v in self.outvars)

    def input_index(self, leaf):
        """Position of an input: by name, by Var, or by the Tracer it was traced as."""
        if isinstance(leaf, str):
            if self.input_names is None or leaf not in self.input_names:
                raise KeyError(f"no input named {leaf!r}; inputs are {self.input_names}")
            return self.input_names.index(leaf)
        var = getattr(leaf, "ir_var", leaf)
        return self.invars.index(var)

    def __len__(self):
        return len(self.eqns)

    def fingerprint(self):
        """A structural hash: ignores variable names, stable across processes."""
        if self._fingerprint is None:
            self._fingerprint = _fingerprint(self)
        return self._fingerprint

    def source_key(self):
        """A hash of the user's lines that this program's equations (nested programs'
        too) came from. ``fingerprint`` leaves them out, so that equal programs share
        kernels; a cache of plans keys by both, or a plan built from one function would
        name its lines in another function's errors (an index out of range found when
        the plan runs). Python's ``hash`` of the file names: valid in this process only
        (each process computes its own), never to be shipped or written to disk."""
        if self._source_key is None:
            self._source_key = hash(tuple(_sources(self)))
        return self._source_key

    def __str__(self):
        return pretty(self)

    __repr__ = __str__

    def __reduce__(self):
        # compact and process-independent: vars by index, primitives by name
        from .serialize import program_from_state, program_state
        return program_from_state, (program_state(self),)


# ---------------------------------------------------------------- printing

def _var_name(n):
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    while True:
        name = letters[n % 26] + name
        n = n // 26
        if n == 0:
            return name
        n -= 1


def _format_param(value, names, indent):
    if isinstance(value, Program):
        return "{\n" + pretty(value, indent + 4) + "\n" + " " * indent + "}"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.ndarray):
        return f"array({dtypes.SHORT_NAMES.get(value.dtype, value.dtype)}{list(value.shape)})"
    if callable(value):
        return getattr(value, "__qualname__", repr(value))
    return repr(value)


def var_names(program):
    """The names ``pretty`` gives ``program``'s values (a, b, ..., in order of first
    appearance), for other views of the program to speak of them alike."""
    names = {}
    order = [v for v, _ in program.consts] + list(program.invars)
    order += [v for eqn in program.eqns for v in (*eqn.invars, *eqn.outvars)]
    for v in order + list(program.outvars):
        if type(v) is not Literal and v not in names:
            names[v] = _var_name(len(names))
    return names


def pretty(program, indent=0):
    """Render like a jaxpr: ``{ lambda consts ; inputs. let eqns in (outputs) }``."""
    names = var_names(program)

    def name(v):
        if type(v) is Literal:
            return repr(v)
        if v not in names:
            names[v] = _var_name(len(names))
        return names[v]

    def decl(v):
        return f"{name(v)}:{v.aval}"

    pad = " " * indent
    consts = " ".join(decl(v) for v, _ in program.consts)
    ins = " ".join(decl(v) for v in program.invars)
    lines = [f"{pad}{{ lambda {consts}; {ins}. let"]
    for eqn in program.eqns:
        args = " ".join(name(v) for v in eqn.invars)
        params = ", ".join(f"{k}={_format_param(v, names, indent + 4)}"
                           for k, v in eqn.params.items())
        outs = " ".join(decl(v) for v in eqn.outvars)
        head = eqn.prim.name + (f"[{params}]" if params else "")
        lines.append(f"{pad}    {outs} = {head} {args}".rstrip())
    outs = ", ".join(name(v) for v in program.outvars)
    lines.append(f"{pad}  in ({outs}{',' if len(program.outvars) == 1 else ''}) }}")
    if program.guards:
        lines.append(f"{pad}  guards: " + ", ".join(f"{g!r} ({g.op})"
                                                    for g in program.guards))
    return "\n".join(lines)


# ---------------------------------------------------------------- fingerprint

def _canon(value):
    """A process-independent text for a parameter value."""
    if isinstance(value, Program):
        return "P" + value.fingerprint()
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canon(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_canon(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, np.ndarray):
        return f"A{value.dtype.name}{value.shape}" + hashlib.blake2b(
            np.ascontiguousarray(value).tobytes(), digest_size=16).hexdigest()
    if isinstance(value, Sym):
        return "S" + value.name
    if isinstance(value, (int, float, complex, bool, str, type(None), np.generic)):
        return repr(value)
    if callable(value):
        fingerprint = getattr(value, "fingerprint", None)
        if fingerprint is not None:
            return fingerprint()
        return f"F{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
    return repr(value)


def _sources(program):
    for eqn in program.eqns:
        yield eqn.source
        for value in eqn.params.values():
            for nested in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(nested, Program):
                    yield nested.source_key()


def _fingerprint(program):
    numbering = {}
    parts = []

    def define(v):
        numbering[v] = len(numbering)
        return f"{len(numbering) - 1}:{v.aval!r}"

    def ref(v):
        if type(v) is Literal:
            return f"L{_canon(np.asarray(v.value))}"
        return str(numbering[v])

    parts.append("in " + " ".join(define(v) for v in program.invars))
    for v, value in program.consts:
        parts.append(f"const {define(v)} {_canon(np.asarray(value))}")
    for eqn in program.eqns:
        params = ",".join(f"{k}={_canon(v)}" for k, v in sorted(eqn.params.items()))
        parts.append(f"{eqn.prim.name}[{params}] {' '.join(ref(v) for v in eqn.invars)} -> "
                     + " ".join(define(v) for v in eqn.outvars))
    parts.append("out " + " ".join(ref(v) for v in program.outvars))
    parts.append("guards " + " ".join(f"{_canon(g.lhs)}{g.relation}{_canon(g.rhs)}"
                                      for g in program.guards))
    return hashlib.sha256(_canonical_trips("\n".join(parts)).encode()).hexdigest()


_TRIPS = re.compile(r"trips\d+\b")


def _canonical_trips(text):
    """Number the while-loop trip-count symbols (``trips<counter>``, fresh per trace) by
    first appearance, so the same program traced twice, or in another process, hashes the
    same."""
    names = {}
    return _TRIPS.sub(lambda m: names.setdefault(m.group(0), f"trips#{len(names)}"), text)
