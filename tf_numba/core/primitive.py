"""Primitives and the per-role rule tables that transforms look them up in.

A primitive is declared once with its abstract-evaluation rule and NumPy impl; each
transform role (``jvp``, ``transpose``, ``batch``, ``lower``, ``partial_eval``) has its own
table keyed by primitive. ``partial_eval`` is for primitives carrying sub-programs (loops,
conditionals, checkpoints), whose JVP mixes primal and tangent work in one equation. A
missing rule raises ``MissingRuleError`` naming the primitive and role. ``SITES`` records
where each rule was stated, which ``rules_table()`` reports (``docs/primitives.md``).

``REGISTRY`` maps each name to its primitive and the module that declared it, so a program
travels to another process with its primitives named, not pickled (``core/serialize.py``).
"""
import importlib
import os
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
    ``multiple_results``); ``impl(*arrays, **params)`` computes with NumPy. ``module``: the
    module that declares it (imported to unpickle it), if not the caller's.
    """
    __slots__ = ("name", "abstract_eval", "impl", "multiple_results", "family")

    def __init__(self, name, abstract_eval, impl, *, multiple_results=False, family=None,
                 module=None):
        self.name = name
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.multiple_results = multiple_results
        self.family = family
        if module is None:
            module = sys._getframe(1).f_globals.get("__name__")
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


# where each rule was stated: role -> primitive -> (file, line) of the registering call in
# the module that states it (the helpers that register on a module's behalf are skipped)
SITES = {role: {} for role in ROLES}
_REGISTERING = ("core/primitive.py", "core/linear.py", "ext/__init__.py")


def register(role, prim, rule):
    RULES[role][prim] = rule
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.replace(
            "\\", "/").endswith(_REGISTERING):
        frame = frame.f_back
    SITES[role][prim] = (frame.f_code.co_filename, frame.f_lineno)
    return rule


def rules_table():
    """What tf_numba knows of each of its primitives, for reading (``docs/primitives.md``):
    ``{name: {"module": declaring module, role: "path:line" | None, ...}}``, paths relative
    to the package. Only the primitives of loaded modules: import ``tf_numba.lowering.plan``
    first for the library steps' lowerings."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    table = {}
    for name, (prim, module) in sorted(REGISTRY.items()):
        if not (module or "").startswith("tf_numba"):
            continue
        row = table[name] = {"module": module}
        for role in ROLES:
            site = SITES[role].get(prim)
            row[role] = None if site is None else \
                f"{os.path.relpath(site[0], package)}:{site[1]}".replace(os.sep, "/")
    return table


def rule(role, prim):
    """The ``role`` rule of ``prim``, or MissingRuleError naming both."""
    found = RULES[role].get(prim)
    if found is None:
        raise MissingRuleError(prim.name, role, prim.family)
    return found
