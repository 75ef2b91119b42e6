"""Primitives and the per-role rule tables that transforms look them up in.

A primitive is declared once with its abstract-evaluation rule and NumPy impl; each
transform role (``jvp``, ``transpose``, ``batch``, ``lower``, ``partial_eval``) has its own
table keyed by primitive. ``partial_eval`` is for primitives carrying sub-programs (loops,
conditionals, checkpoints), whose JVP mixes primal and tangent work in one equation. A missing rule raises ``MissingRuleError`` naming the primitive and role.
"""
from ..errors import MissingRuleError

ROLES = ("jvp", "transpose", "batch", "lower", "partial_eval")
RULES = {role: {} for role in ROLES}


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

    def bind(self, *args, **params):
        return _bind(self, args, params)

    def __repr__(self):
        return self.name


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
