"""Programs that travel: a compact pickled form that unpickles, in another process and
without the user's source, into a program with the same fingerprint.

``pickle.dumps(program)`` stores variables by index (a variable is its aval where it is
defined and an int wherever it is read), primitives by name (``core/primitive.REGISTRY``,
looked up when loading), constants, literals and input defaults as arrays, symbolic dims
as their interned terms and guards as (lhs, rhs, relation, op, source). Avals, dims and
source strings are shared objects, which pickle stores once and refers to after that.

>>> blob = pickle.dumps(tf.make_program(lambda x: tnp.sin(x) * 2)(tf.symbolic(("n",))))
>>> pickle.loads(blob).fingerprint()          # the same hash, in any process

Custom derivative rules (``custom_jvp``/``custom_vjp`` calls) are Python functions, and
stay behind: the call keeps its traced body, which is all that running it needs, and its
rule becomes a ``DetachedRule`` with the same fingerprint, which raises a clear
``UnsupportedError`` if the unpickled program is differentiated again. Differentiate
first, then ship the derivative program (``tf_numba.dask`` does).
"""
import types

import numpy as np

from .ir import Eqn, Guard, Literal, Program, ShapedArray, Var, _canon
from .primitive import Primitive
from .trace import SourceInfo
from ..errors import UnsupportedError

FORMAT = 1      # bumped when the layout below changes; loading another format is refused


def program_state(program):
    """The picklable state of ``program`` (plain tuples, arrays, avals and primitives)."""
    index = {}

    def define(v):
        index[v] = len(index)
        return v.aval

    def ref(v):
        if type(v) is Literal:
            return (v.value, v.aval)
        return index[v]

    invars = tuple(define(v) for v in program.invars)
    consts = tuple((define(v), np.asarray(c)) for v, c in program.consts)
    eqns = []
    for e in program.eqns:
        ins = tuple(ref(v) for v in e.invars)
        params = {k: _param_state(val, e.prim, k) for k, val in e.params.items()}
        eqns.append((e.prim, ins, tuple(define(v) for v in e.outvars), params,
                     _source_state(e.source)))
    guards = tuple((g.lhs, g.rhs, g.relation, g.op, _source_state(g.source))
                   for g in program.guards)
    return (FORMAT, invars, consts, tuple(eqns), tuple(ref(v) for v in program.outvars),
            guards, program.input_names, program.input_defaults)


def program_from_state(state):
    """The Program that ``program_state`` described (fresh variables, same fingerprint)."""
    if state[0] != FORMAT:
        raise UnsupportedError(f"this program was pickled in format {state[0]}; this "
                               f"tf_numba reads format {FORMAT}: use the same tf_numba "
                               "version on both sides")
    _, invars, consts, eqns, outvars, guards, names, defaults = state
    vars_ = []

    def define(aval):
        v = Var(aval)
        vars_.append(v)
        return v

    def ref(r):
        return vars_[r] if type(r) is int else Literal(r[0], r[1])

    ins = [define(a) for a in invars]
    const_pairs = [(define(a), c) for a, c in consts]
    body = []
    for prim, refs, outs, params, source in eqns:
        invs = tuple(ref(r) for r in refs)
        body.append(Eqn(prim, invs, tuple(define(a) for a in outs), params,
                        _source(source)))
    return Program(ins, const_pairs, body, [ref(r) for r in outvars],
                   [Guard(lhs, rhs, op, _source(src), relation)
                    for lhs, rhs, relation, op, src in guards], names, defaults)


def _source_state(source):
    return None if source is None else tuple(source)


def _source(state):
    return None if state is None else SourceInfo(state)


# ---------------------------------------------------------------- parameters

# What a parameter may hold, pickled as it is: data, dims, avals, sub-programs (their own
# __reduce__), primitives (by name), classes (pytree node kinds, by reference) and pytree
# structures.
_DATA = (type(None), bool, int, float, complex, str, bytes, np.generic, np.ndarray,
         np.dtype, ShapedArray, Program, Primitive, type, slice)


def _param_state(value, prim, key):
    from .pytree import TreeDef
    from .shapes import Sym
    if isinstance(value, (tuple, list)):
        return type(value)(_param_state(v, prim, key) for v in value)
    if isinstance(value, dict):
        return {k: _param_state(v, prim, key) for k, v in value.items()}
    if isinstance(value, (_DATA, Sym, TreeDef)):
        return value
    return detach_rule(value, f"{prim.name}[{key}]")


# ---------------------------------------------------------------- custom rules

class DetachedRule:
    """A custom derivative rule left behind when its program was pickled.

    It keeps the rule's fingerprint and name, so the program hashes the same and runs the
    same (running a ``custom_jvp``/``custom_vjp`` call evaluates its traced body); asking
    it for a derivative rule raises ``UnsupportedError`` saying to differentiate first.
    """
    __slots__ = ("canon", "module", "qualname")

    def __init__(self, canon, module, qualname):
        self.canon, self.module, self.qualname = canon, module, qualname

    @property
    def fun(self):          # names for messages (and vmap's fingerprint of a rule)
        return types.SimpleNamespace(__module__=self.module, __qualname__=self.qualname)

    def fingerprint(self):
        return self.canon

    def __call__(self, *args, **kwargs):
        self._refuse()

    def __getattr__(self, name):        # jvp, fwd, bwd, ...: the rule's Python code
        if name.startswith("__"):
            raise AttributeError(name)
        self._refuse()

    def _refuse(self):
        raise UnsupportedError(
            f"the custom derivative rule of {self.module}.{self.qualname} stayed in the "
            "process that pickled this program: a pickled program carries traced bodies, "
            "not Python functions. Differentiate before pickling (transform the function, "
            "then make_program), or trace it again here")

    def __reduce__(self):
        return DetachedRule, (self.canon, self.module, self.qualname)

    def __repr__(self):
        return f"DetachedRule({self.module}.{self.qualname})"


def detach_rule(value, where):
    """``value`` as a ``DetachedRule`` when it is a custom derivative rule (anything with
    Python code behind it: a callable or an object with a ``fingerprint``);
    UnsupportedError naming the parameter for anything else."""
    if isinstance(value, DetachedRule):
        return value
    if not (callable(value) or hasattr(value, "fingerprint")):
        raise UnsupportedError(
            f"the parameter {where} holds a {type(value).__name__}, which a pickled program "
            "cannot carry (parameters are data, dims, sub-programs and custom rules)")
    fun = value
    for attr in ("owner", "inner", "fun"):       # a bound or vmapped rule, then its function
        fun = getattr(fun, attr, fun)
    return DetachedRule(_canon(value), getattr(fun, "__module__", "?"),
                        getattr(fun, "__qualname__", type(value).__name__))
