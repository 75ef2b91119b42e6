"""The cache of transformed programs behind the un-jitted transforms (``grad(f)(x)``).

An un-jitted transform traces the user's function on every call (so Python control flow
and closures see this call's values), then looks the traced program up here by its
structure: primitives, parameters, wiring and input types, not the values of its inputs
or of its top-level constants (those are inputs of a traced program, see
``api.TracedFunction``). Two calls that trace to the same structure share the
transformed, simplified program, and a call whose ``if`` took the other branch traces
to another structure, so it can never be served a program for the wrong branch.

``structure_key`` differs from ``Program.fingerprint`` (a process-independent hash of
everything, data included, for the disk cache): it is an in-process tuple, arrays inside
sub-programs and parameters are keyed by identity (the entry holds them, so the identity
cannot be reused while it is cached) and it costs a few hundred nanoseconds an equation.
"""
import collections
import threading

import numpy as np

from ..core.ir import Literal, Program, ShapedArray, is_plain
from ..core.shapes import Sym

MAX_ENTRIES = 512
MAX_BYTES = 256 << 20       # of constants the cached programs hold (a rule's zeros, ...)

_ATOMS = (int, str, type(None), np.dtype, ShapedArray, Sym, bytes)


def _param_key(value, held):
    kind = type(value)
    if kind in _ATOMS or isinstance(value, np.dtype):
        return value
    if kind is tuple:
        if is_plain(value):        # dimension numbers, shapes, axes: their own key
            return value
        return tuple([_param_key(x, held) for x in value])
    if kind is list:
        return tuple([_param_key(x, held) for x in value])
    if kind is bool:
        return (bool, value)                # True == 1 as a dict key
    if kind is float or isinstance(value, np.generic):
        return (type(value), np.asarray(value).tobytes())   # NaN keys equal to NaN
    if kind is Program:
        return structure_key(value, held)
    if kind is dict:
        return tuple((k, _param_key(v, held)) for k, v in value.items())
    if kind is np.ndarray:
        held.append(value)
        return ("array", id(value))
    try:
        hash(value)
    except TypeError:
        held.append(value)
        return ("object", id(value))
    return value        # functions and other hashable objects: by their own equality


def structure_key(program, held):
    """A hashable key equal for programs that differ only in their variables' identities
    (and in the data of arrays that are top-level inputs). Source lines are part of it:
    a cached program's errors name the lines of the code that traced to it. Objects keyed
    by identity are appended to ``held``; keep them alive as long as the key is used."""
    numbering = {}
    for v in program.invars:
        numbering[v] = len(numbering)
    parts = [tuple([v.aval for v in program.invars])]
    for v, value in program.consts:
        numbering[v] = len(numbering)
        held.append(value)
        parts.append(("const", v.aval, id(value)))

    def ref(v):
        if type(v) is Literal:
            return (v.aval, v.value.tobytes())
        return numbering[v]

    for eqn in program.eqns:
        params = eqn.params
        parts.append((eqn.prim,
                      tuple([(k, _param_key(p, held)) for k, p in params.items()])
                      if params else (),
                      tuple([(v.aval, v.value.tobytes()) if type(v) is Literal
                             else numbering[v] for v in eqn.invars]), eqn.source))
        for v in eqn.outvars:
            numbering[v] = len(numbering)
    parts.append(tuple([ref(v) for v in program.outvars]))
    if program.guards:
        parts.append(tuple((repr(g.lhs), g.relation, repr(g.rhs)) for g in program.guards))
    return tuple(parts)


def _symbols(programs, found=None):
    """The symbolic dims in the avals of ``programs`` (a Program, or a tuple holding
    some) and of their sub-programs."""
    found = set() if found is None else found
    for program in programs if type(programs) is tuple else (programs,):
        if type(program) is not Program:
            continue
        for v in program.invars:
            found.update(d for d in v.aval.shape if type(d) is not int)
        for eqn in program.eqns:
            for v in eqn.outvars:
                found.update(d for d in v.aval.shape if type(d) is not int)
            for p in eqn.params.values():
                if type(p) is Program:
                    _symbols(p, found)
                elif type(p) is tuple and p and type(p[0]) is Program:
                    _symbols(p, found)
    return found


def _const_bytes(programs):
    return sum(np.asarray(value).nbytes
               for program in (programs if type(programs) is tuple else (programs,))
               if type(program) is Program for _, value in program.consts)


class TransformCache:
    """A bounded LRU map from (transform, structure key) to what the transform built:
    at most ``max_entries`` entries holding at most ``max_bytes`` of constants."""

    def __init__(self, max_entries=MAX_ENTRIES, max_bytes=MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._entries = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        self.bytes = 0

    def get_or_build(self, kind, program, build):
        """``build(program)``, or its cached result for a program of the same structure
        under the same ``kind`` (a hashable tuple naming the transform and its options)."""
        held = []
        key = (kind, structure_key(program, held))
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[0]
            self.misses += 1
        result = build(program)
        if _symbols(result) - _symbols(program):
            # the transform made fresh symbolic lengths (a reverse-mode while_loop's trip
            # count): two uses of one program would claim two loops' trip counts equal
            return result
        size = _const_bytes(result)
        if size > self.max_bytes:
            return result
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (result, held, size)
                self.bytes += size
            while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
                self.bytes -= self._entries.popitem(last=False)[1][2]
        return result

    def info(self):
        return dict(entries=len(self._entries), hits=self.hits, misses=self.misses)

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = self.bytes = 0


TRANSFORMS = TransformCache()
