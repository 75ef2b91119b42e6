"""Primitives and the per-role rule tables that transforms look them up in.

A primitive is declared once with its abstract-evaluation rule and NumPy impl; each
transform role (``jvp``, ``transpose``, ``batch``, ``lower``, ``partial_eval``) has its own
table keyed by primitive. ``partial_eval`` is for primitives carrying sub-programs (loops,
conditionals, checkpoints), whose JVP mixes primal and tangent work in one equation. A missing rule raises ``MissingRuleError`` naming the primitive and role.

``REGISTRY`` maps each name to its primitive and the module that declared it, so a program
travels to another process with its primitives named, not pickled (``core/serialize.py``).
"""
import importlib
import sys

from ..errors import MissingRuleError, UnsupportedError

ROLES = ("jvp", "transpose", "batch", "lower", "partial_eval")
RULES = {role: {} for role in ROLES}
REGISTRY = {}       # name -> (Primitive, name of the module that declared it)
# primitives run for what they do (``debug.print``), not for their outputs: simplification
# never drops or merges their equations
EFFECTFUL = set()


class Primitive:
    """An operation of the IR. ``bind`` stages it into the current trace or runs it eagerly.

    ``abstract_eval(*avals, **params)`` returns the output ShapedArray (a tuple of them when
    ``multiple_results``); ``impl(*arrays, **params)`` computes with NumPy.
    """
    __slots__ = ("name", "abstract_eval", "impl", "multiple_results", "family")

    def __init__(self, name, abstract_eval, impl, *, multiple_results=False, family=None):
        self.name = name
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.multiple_results = multiple_results
        self.family = family
        # the caller's module: a family op's is its family's module (ext/__init__ calls)
        module = sys._getframe(1).f_globals.get("__name__")
        if family is not None:
            from ..ext import FAMILIES
            module = FAMILIES[family].module if family in FAMILIES else module
        REGISTRY.setdefault(name, (self, module))

    def bind(self, *args, **params):
        return _bind(self, args, params)

    def __repr__(self):
        return self.name

    def __reduce__(self):
        found = REGISTRY.get(self.name)
        if found is None or found[0] is not self:
            raise UnsupportedError(
                f"primitive {self.name!r} cannot be pickled by name: another primitive was "
                "registered under that name first; give each primitive a unique name",
                op=self.name)
        return lookup, (self.name, found[1])


def lookup(name, module=None):
    """The primitive registered as ``name``, importing ``module`` (its declaring module)
    first if it is not loaded yet: how an unpickled program finds its primitives."""
    found = REGISTRY.get(name)
    if found is None and module is not None:
        importlib.import_module(module)
        found = REGISTRY.get(name)
    if found is None:
        raise UnsupportedError(f"no primitive named {name!r} is registered in this process "
                               f"(it was declared in {module}); import the module that "
                               "declares it", op=name)
    return found[0]


def _bind(prim, args, params):
    """Replaced by ``trace.bind`` when the trace module loads (it imports this one)."""
    raise RuntimeError("tf_numba.core.trace is not loaded")


def register(role, prim, rule):
    RULES[role][prim] = rule
    return rule


def rule(role, prim):
    """The ``role`` rule of ``prim``, or MissingRuleError naming both."""
    found = RULES[role].get(prim)
    if found is None:
        raise MissingRuleError(prim.name, role, prim.family)
    return found
