"""Tracing: run a Python function on Tracers and record the primitives it binds as a Program.

There is one kind of trace. Builders form a stack; ``bind`` stages into the innermost one,
or runs the NumPy impl when no trace is active. A Tracer of an outer builder used inside an
inner trace is captured as an extra input of the inner program (closure conversion), which
is what keeps nested transforms (``grad`` of a closure over another ``grad``'s variable)
free of perturbation confusion.

A builder made with ``known_values=True`` (the un-jitted transforms' traces) also knows the
concrete value of each of its inputs, so ``bool(x > 0)``, ``float(x)`` or ``range(n)`` on
one of its tracers works as under autograd: the value is computed on demand, by running
the NumPy impls of just the equations it depends on, and the program recorded is the one
for the branch taken. Other builders (``jit``, ``vmap``, loop bodies) have no values, and
there the same calls raise ``ConcretizationError``.
"""
import operator
import os
import sys
import threading

import numpy as np

from . import dtypes
from . import primitive as _primitive_module
from . import rng_watch
from .ir import Eqn, Guard, Literal, Program, ShapedArray, Var, aval_of_value, is_plain
from ..errors import (ConcretizationError, TfNumbaError, TracerArrayConversionError,
                      TracerLeakError)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class SourceInfo(tuple):
    """(file, line, function) of the user's code that emitted an equation."""
    __slots__ = ()

    def __str__(self):
        return f"{self[0]}:{self[1]} (in {self[2]})"


def user_source():
    """The innermost stack frame outside the tf_numba package."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return None
    return SourceInfo((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))


class _TraceState(threading.local):
    def __init__(self):
        self.builders = []


_state = _TraceState()


def current_builder():
    builders = _state.builders
    return builders[-1] if builders else None


# NumPy ufuncs that Python operators on an ndarray call (``ndarray + tracer`` is
# ``np.add(ndarray, tracer)``): they run as the tnp function of the same name
_OPERATOR_UFUNCS = frozenset((
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power", "matmul",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "divmod",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))


def _numpy_on_tracer(name, tracer):
    """The error for a NumPy function given a traced value: name tnp's function."""
    found = Tracer._tnp
    for part in name.split("."):
        found = getattr(found, part, None)
    advice = (f"use tnp.{name} instead (import tf_numba.numpy as tnp)" if found is not None
              else f"tf_numba.numpy has no {name}: compute it with tnp functions")
    return TracerArrayConversionError(
        f"numpy.{name} was called on a traced {tracer.aval} value, and NumPy functions "
        f"compute on concrete arrays only: {advice}.", op=f"np.{name}", source=user_source())


class Tracer:
    """A traced array value. Operators and methods are attached by ``tf_numba.numpy``, which
    also puts itself in ``_tnp`` (core imports nothing above it): the NumPy ufuncs that
    Python operators call on a tracer run its functions."""
    __slots__ = ("builder", "ir_var", "aval")   # aval: the var's, read on every op
    __array_priority__ = 1000
    _tnp = None

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        # `ndarray += tracer` passes out=(ndarray,): Python binds the name to the result
        in_place = out is None or (len(out) == 1 and out[0] is inputs[0])
        if (method == "__call__" and ufunc.__name__ in _OPERATOR_UFUNCS and not kwargs
                and in_place):
            return getattr(self._tnp, ufunc.__name__)(*inputs)
        raise _numpy_on_tracer(ufunc.__name__ if method == "__call__"
                               else f"{ufunc.__name__}.{method}", self)

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's own implementation: np.sum / np.reshape / ... call the tracer's methods;
        # the functions that need a NumPy array get the error naming tnp's function
        try:
            return func._implementation(*args, **kwargs)
        except TracerArrayConversionError as err:
            if err.op != "np.asarray":
                raise
        module = getattr(func, "__module__", "") or ""
        prefix = module[len("numpy."):] + "." if module.startswith("numpy.") else ""
        raise _numpy_on_tracer(prefix + func.__name__, self) from None

    def __init__(self, builder, var):
        self.builder = builder
        self.ir_var = var
        self.aval = var.aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n = n * d
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of an unsized (0-d) traced value")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.shape[0]))

    def concrete_value(self, what):
        """The NumPy value of this tracer where its trace knows it (an un-jitted
        transform); ConcretizationError under ``jit``, ``vmap`` and loop bodies."""
        value = self.builder.value_of(self.ir_var)
        if value is _UNKNOWN:
            raise ConcretizationError(
                f"a traced {self.aval} value was used where Python needs a concrete {what}. "
                "Under jit (and vmap, and inside lax loop bodies) traced values have no value "
                "yet: use tnp.where(cond, a, b) to choose between values, lax.cond(pred, "
                "true_fun, false_fun, *operands) to run one of two functions (lax.while_loop "
                "or lax.fori_loop for a loop), or pass the argument as static "
                "(jit(..., static_argnums=... or static_argnames=...)).",
                op=f"{what}(tracer)", source=user_source())
        return value

    def __bool__(self):
        return bool(self.concrete_value("bool"))

    def __int__(self):
        return int(self.concrete_value("int"))

    def __float__(self):
        return float(self.concrete_value("float"))

    def __complex__(self):
        return complex(self.concrete_value("complex"))

    def __index__(self):
        return operator.index(self.concrete_value("index"))


    def __array__(self, *args, **kwargs):
        raise TracerArrayConversionError(
            f"a traced {self.aval} value cannot become a NumPy array (np.asarray, np.array "
            "or a NumPy function on it): compute with tnp functions, and return the value "
            "from the traced function to get an array.", op="np.asarray", source=user_source())

    def __repr__(self):
        return f"Tracer<{self.aval}>"

    __hash__ = object.__hash__


_UNKNOWN = object()   # a value_of answer: this trace does not know the value


class ProgramBuilder:
    """Collects the equations of one trace and turns them into a Program.

    With ``known_values``, ``new_input`` takes each input's value (an array, or a tracer
    of an outer trace, itself asked when needed) and ``value_of`` answers for every var.
    """

    def __init__(self, known_values=False):
        self.level = len(_state.builders)
        self.alive = True
        self.eqns = []
        self.invars = []
        self.consts = {}        # id(array) -> (Var, array)
        self.captured = {}      # id(outer tracer) -> (outer tracer, Var)
        self.guards = []
        self.source_override = None
        # known_values: Var -> computed value, Var -> the eqn that makes it, Var -> the
        # outer tracer an input or a captured var stands for
        self.known = {} if known_values else None
        self.producers = {}
        self.outer = {}

    def __enter__(self):
        self.level = len(_state.builders)
        # an outermost trace watches np.random's global generator (see rng_watch)
        self.rng_mark = rng_watch.mark() if not _state.builders else None
        _state.builders.append(self)
        return self

    def __exit__(self, *exc):
        popped = _state.builders.pop()
        assert popped is self, "trace stack corrupted"
        self.alive = False
        if self.known is not None:  # a tracer that outlives the trace keeps no arrays alive
            self.known, self.producers, self.outer = {}, {}, {}
        if self.rng_mark is not None:
            rng_watch.check(self.rng_mark, user_source)

    def inherit(self, program):
        """Adopt the guards of a program whose equations are being replayed into this one."""
        for g in program.guards:
            if g not in self.guards:
                self.guards.append(g)

    def new_input(self, aval, value=None):
        var = Var(aval)
        self.invars.append(var)
        if self.known is not None:
            if type(value) is Tracer:
                self.outer[var] = value
            elif value is not None:
                self.known[var] = value
        return Tracer(self, var)

    def value_of(self, var):
        """The concrete value of ``var`` (``_UNKNOWN`` if this trace cannot know it).

        Runs, with no trace active, the NumPy impls of the not yet computed equations
        ``var`` depends on, and keeps their values for the next question.
        """
        known = self.known
        if known is None:
            return _UNKNOWN
        if var in known:
            return known[var]
        saved, _state.builders = _state.builders, []
        try:
            return self._compute(var)
        finally:
            _state.builders = saved

    def _compute(self, target):
        known, producers = self.known, self.producers
        stack = [target]
        while stack:
            v = stack[-1]
            if v in known:
                stack.pop()
                continue
            eqn = producers.get(v)
            if eqn is None:     # an input, or a captured tracer, of an outer trace
                outer = self.outer.get(v)
                value = _UNKNOWN if outer is None else outer.builder.value_of(outer.ir_var)
                if value is _UNKNOWN:
                    return _UNKNOWN
                known[v] = value
                stack.pop()
                continue
            missing = [u for u in eqn.invars if type(u) is Var and u not in known]
            if missing:
                stack.extend(missing)
                continue
            out = eqn.prim.impl(*[u.value if type(u) is Literal else known[u]
                                  for u in eqn.invars], **eqn.params)
            if not eqn.prim.multiple_results:
                out = (out,)
            for o, value in zip(eqn.outvars, out):
                known[o] = _as_dtype(np.asarray(value), o.aval)
            stack.pop()
        return known[target]

    def to_var(self, x):
        """The Var or Literal standing for ``x`` in this trace."""
        if type(x) is Tracer:
            if x.builder is self:
                return x.ir_var
            return self._capture(x)
        if isinstance(x, dtypes.WEAK_SCALAR_TYPES):
            dt = dtypes.of_scalar(x)
            return Literal(np.asarray(x, dt), ShapedArray((), dt))
        aval = aval_of_value(x)
        if not aval.shape:
            return Literal(np.asarray(x, aval.dtype), aval)
        found = self.consts.get(id(x))
        if found is None:
            found = self.consts[id(x)] = (Var(aval), np.asarray(x, aval.dtype))
            if self.known is not None:
                self.known[found[0]] = found[1]
        return found[0]

    def _capture(self, tracer):
        if not tracer.builder.alive or tracer.builder.level > self.level:
            raise TracerLeakError(
                f"a traced {tracer.aval} value escaped the function that created it (it was "
                "stored in a global, a closure or an attribute) and is used after that trace "
                "ended. Return it from the function instead.", source=user_source())
        found = self.captured.get(id(tracer))
        if found is None:
            found = self.captured[id(tracer)] = (tracer, Var(tracer.aval))
            if self.known is not None:
                self.outer[found[1]] = tracer
        return found[1]

    def add_eqn(self, prim, args, params):
        invars = tuple([a.ir_var if type(a) is Tracer and a.builder is self else self.to_var(a)
                        for a in args])
        source = self.source_override or user_source()
        avals = [v.aval for v in invars]
        key = _eval_key(prim, avals, params)
        out = None if key is None else _KNOWN_EVALS.get(key)
        if out is None:
            try:
                out = prim.abstract_eval(*avals, **params)
            except TfNumbaError as err:
                err.locate(prim.name, source)
                raise
            if key is not None:
                if len(_KNOWN_EVALS) >= 8192:
                    _KNOWN_EVALS.clear()
                _KNOWN_EVALS[key] = out
        if prim.multiple_results:
            outvars = tuple(Var(a) for a in out)
        else:
            outvars = (Var(out),)
        eqn = Eqn(prim, invars, outvars, params, source)
        self.eqns.append(eqn)
        if self.known is not None:
            for v in outvars:
                self.producers[v] = eqn
        if prim.multiple_results:
            return [Tracer(self, v) for v in outvars]
        return Tracer(self, outvars[0])

    def build(self, outs):
        """The Program with outputs ``outs``; captured outer tracers become trailing inputs.

        Returns (program, captured_tracers): pass the captured tracers after the explicit
        arguments when evaluating the program in the outer trace.
        """
        outvars = [self.to_var(o) for o in outs]
        captured = [t for t, _ in self.captured.values()]
        invars = self.invars + [v for _, v in self.captured.values()]
        program = Program(invars, list(self.consts.values()), self.eqns, outvars, self.guards)
        return program, captured


# (primitive, input avals, params) -> output aval(s). An un-jitted transform traces the
# same operations on every call; their abstract evaluation is a function of these alone
# where every dim is an int (symbolic dims record guards on the trace) and the params are
# plain (not sub-programs, callables or floats, whose keys would be identities or collide).
_KNOWN_EVALS = {}


def _eval_key(prim, avals, params):
    for a in avals:
        if not a.concrete:
            return None
    if not params:
        return (prim, *avals)
    values = tuple(params.values())
    if not is_plain(values):
        return None
    return (prim, *avals, *params, *values)


def record_guard(a, b, op, relation="=="):
    """Record ``a == b`` (or ``a >= b``) on the current trace (see ``shapes.same_dim``)."""
    builder = current_builder()
    if builder is None:
        return False
    for g in builder.guards:
        if g.relation == relation and ((g.lhs is a and g.rhs is b)
                                       or (relation == "==" and g.lhs is b and g.rhs is a)):
            return True
    builder.guards.append(Guard(a, b, op, builder.source_override or user_source(), relation))
    return True


def bind(prim, args, params):
    builder = current_builder()
    if builder is not None:
        return builder.add_eqn(prim, args, params)
    return _run_now(prim, args, params)


def _run_now(prim, args, params):
    """Run ``prim`` on concrete ``args`` with its NumPy impl (no trace is active)."""
    for a in args:
        if type(a) is Tracer:
            builder_alive = a.builder.alive
            raise TracerLeakError(
                f"a traced {a.aval} value is used outside of any trace"
                + ("" if builder_alive else " (it escaped the function that created it)")
                + ". Return traced values from the traced function instead of storing them.",
                op=prim.name, source=user_source())
    try:
        out_aval = prim.abstract_eval(*(aval_of_value(a) for a in args), **params)
    except TfNumbaError as err:
        err.locate(prim.name, user_source())
        raise
    out = prim.impl(*args, **params)
    if prim.multiple_results:
        return [_as_dtype(o, a) for o, a in zip(out, out_aval)]
    return _as_dtype(out, out_aval)


_primitive_module._bind = bind


class _RunConstantsNow:
    """Stands on top of the trace stack within ``compile_time_eval``: an operation whose
    operands are all concrete runs at once; one on a traced value goes to the trace
    below, which it stands for in every other respect."""

    def __init__(self, below):
        self.below = below

    def add_eqn(self, prim, args, params):
        for a in args:
            if type(a) is Tracer:
                return self.below.add_eqn(prim, args, params)
        return _run_now(prim, args, params)

    def __getattr__(self, name):
        return getattr(self.below, name)


class compile_time_eval:
    """Within the block, operations on concrete values (NumPy arrays, Python numbers) run
    at once even inside a trace, so their results are concrete (usable in Python ``if``
    and as shapes), as ``jax.ensure_compile_time_eval``; operations on traced values are
    traced as before."""

    def __enter__(self):
        builders = _state.builders
        self.pushed = bool(builders)
        if self.pushed:
            builders.append(_RunConstantsNow(builders[-1]))
        return self

    def __exit__(self, *exc):
        if self.pushed:
            popped = _state.builders.pop()
            assert type(popped) is _RunConstantsNow, "trace stack corrupted"
        return False


def _as_dtype(value, aval):
    if value.dtype != aval.dtype:
        return value.astype(aval.dtype)
    return value


def trace(fn, in_avals):
    """Trace ``fn`` on fresh inputs of ``in_avals``: returns (program, captured_tracers).

    ``fn`` takes and returns flat lists of arrays.
    """
    with ProgramBuilder() as builder:
        ins = [builder.new_input(a) for a in in_avals]
        outs = fn(*ins)
        return builder.build(outs)
