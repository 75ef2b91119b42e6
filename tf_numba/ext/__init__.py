"""Extension op families: groups of primitives kept outside the core, each with a family id.

A ``Family`` names a group of ops (``tf_numba.linalg.v1``), the module that implements
them, and owns their declarations. Its ops are ordinary primitives whose ``family`` is the
id: their rules go in the same per-role tables as the core's (``core/primitive.py``), so
every transform treats them alike, and a missing rule raises ``MissingRuleError`` naming
the family id, the op and the role when the transform is applied.

| family id | module | ops |
| --- | --- | --- |
| ``tf_numba.einsum.v1`` | ``ext/einsum.py`` | none: pairwise ``dot_general`` plus layout ops |
| ``tf_numba.linalg.v1`` | ``ext/linalg.py`` | LAPACK-backed factorizations and solves |
| ``tf_numba.fft.v1`` | ``ext/fft.py`` | fft, ifft, rfft, irfft over any axes |

Each op also states how it lowers under ``jit``: ``lowering="host"`` runs its NumPy impl
between compiled kernels (a LAPACK or FFT call gains nothing from being inside one), a
callable is a kernel ``lower`` rule, and ``None`` means "no lowering": ``jit`` then refuses
the op when it prepares the program. A host op that calls BLAS or LAPACK says which
library (``blas=NUMPY_BLAS``: NumPy's, behind ``np.linalg``; ``SCIPY_BLAS``: SciPy's, behind
``scipy.linalg`` and numba's ``np.dot``): a plan runs that library as wide as the caller's
engine and puts its own products there (``lowering/blas_threads.py``), as two BLAS pools
both wide on two cores spin against each other. ``README.md`` beside this file walks
through adding a family.
"""
import re

from ..core.primitive import RULES, Primitive, register
from ..errors import MissingRuleError, TfNumbaError
from ..kernel_vocab.rules import Library
from ..transforms.batching import axis_size_of, bdim_to

FAMILIES = {}
NUMPY_BLAS, SCIPY_BLAS = "numpy", "scipy"
HOST_BLAS = {}      # primitive -> the BLAS library its host impl calls (Family.op's blas=)
_ID = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+\.v\d+$")


class Family:
    """A named group of extension ops: ``Family("mylib.toy.v1", module=__name__)``.

    ``family.op(name, abstract_eval, impl)`` declares an op (a ``Primitive``); register its
    rules with ``family.jvp``, ``family.transpose`` and ``family.batch`` (or the helpers in
    ``core/linear.py``). ``family.rules()`` tabulates which roles each op has.
    """

    def __init__(self, id, *, module, doc=""):
        if not _ID.match(id):
            raise TfNumbaError(f"family id {id!r} must look like 'owner.name.v1' (dotted "
                               "names, then a version)")
        if id in FAMILIES:
            raise TfNumbaError(f"family id {id!r} is already registered by "
                               f"{FAMILIES[id].module}; bump the version for a new one")
        self.id = id
        self.module = module
        self.doc = doc
        self.ops = {}
        FAMILIES[id] = self

    def op(self, name, abstract_eval, impl, *, multiple_results=False, lowering="host",
           blas=None):
        """Declare an op of this family; returns its ``Primitive`` (named ``short.name``).
        ``blas``: the BLAS library a host impl calls (``NUMPY_BLAS``, ``SCIPY_BLAS``), if any."""
        if blas not in (None, NUMPY_BLAS, SCIPY_BLAS):
            raise TfNumbaError(f"blas of {self.id}'s op {name!r} must be None, "
                               f"{NUMPY_BLAS!r} or {SCIPY_BLAS!r}, got {blas!r}")
        if name in self.ops:
            raise TfNumbaError(f"family {self.id!r} already has an op {name!r}")
        short = self.id.split(".")[-2]
        prim = Primitive(f"{short}.{name}", abstract_eval, impl,
                         multiple_results=multiple_results, family=self.id,
                         module=self.module)
        self.ops[name] = prim
        if blas is not None:
            HOST_BLAS[prim] = blas
        if callable(lowering):
            register("lower", prim, Library(lowering))
        elif lowering is None:
            register("lower", prim, Library(_refuse_lowering(prim), refuses=True))
        elif lowering != "host":
            raise TfNumbaError(f"lowering of {prim.name} must be 'host', a lower rule or None")
        return prim

    def jvp(self, prim):
        """Decorator registering ``rule(primals, tangents, **params) -> (out, tangent_out)``."""
        prim = self._own(prim)
        return lambda rule: register("jvp", prim, rule)

    def transpose(self, prim):
        """Decorator registering ``rule(ct, *args, **params) -> [ct per arg or None]``."""
        prim = self._own(prim)
        return lambda rule: register("transpose", prim, rule)

    def batch(self, prim):
        """Decorator registering ``rule(args, dims, **params) -> (out, out_dim)``."""
        prim = self._own(prim)
        return lambda rule: register("batch", prim, rule)

    def _own(self, prim):
        if self.ops.get(prim.name.split(".", 1)[-1]) is not prim:
            raise TfNumbaError(f"{prim.name} is not an op of family {self.id!r}")
        return prim

    def rules(self):
        """``{op name: {role: bool}}``: which rules each op has (``lower`` is False only
        for ops declared with ``lowering=None``)."""
        table = {}
        for name, prim in self.ops.items():
            roles = {role: prim in RULES[role] for role in ("jvp", "transpose", "batch")}
            rule = RULES["lower"].get(prim)
            roles["lower"] = rule is None or not rule.refuses
            table[name] = roles
        return table

    def __repr__(self):
        return f"Family({self.id!r}, ops={sorted(self.ops)})"


def _refuse_lowering(prim):
    # plan.py runs a rule-less primitive on its NumPy impl, which is right for core ops; a
    # family op must say how it lowers, so "none" is a rule that fails when jit reaches it.
    def lower(em, ins, outs, eqn):
        raise MissingRuleError(prim.name, "lower", prim.family)
    return lower


def family(id):
    """The registered family with this id (``KeyError`` lists the known ones)."""
    found = FAMILIES.get(id)
    if found is None:
        raise KeyError(f"no extension family {id!r}; known: {sorted(FAMILIES)}")
    return found


def batch_leading(prim, core_ranks):
    """Register a batching rule for an op batched over leading dims: each operand ``i`` has
    ``core_ranks[i]`` trailing core dims, and the outputs put the batch dims first."""
    def rule(args, dims, **params):
        size = axis_size_of(args, dims)
        moved = [bdim_to(a, d, 0, size) for a, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    register("batch", prim, rule)
    return rule
