"""How a primitive lowers, as one record in the ``lower`` rule table keyed by the primitive.

The module that declares a primitive states its lowering beside it (``ops/`` for the
fused kinds, ``lowering/library.py`` and ``lowering/control.py`` for the library rules,
an ``ext`` family's ``op(..., lowering=)``); the compiler asks ``fusion(eqn)`` and
``lowerable(eqn)`` and never tests a primitive's name. The kinds:

- ``Elementwise``: fuses into a loop nest as one scalar expression per element;
- ``Reduction``: ends a loop nest, folding its operand into an accumulator;
- ``IndexMap``: fuses, reading its operand at other positions than the loop's own
  (a broadcast) or computing from the position itself (``iota``);
- ``Library``: a step of its own between loop nests, whose ``emit`` writes kernel lines.

This module imports nothing heavy: ``ops`` imports it at ``import tf_numba``.
"""
from ..core import dtypes
from ..core.primitive import RULES


def _no_complex_operand(eqn):
    return not any(dtypes.is_complex(v.aval.dtype) for v in eqn.invars)


class Lowering:
    """What every kind answers; a kind overrides what differs."""
    __slots__ = ()
    math = False            # it calls a math function
    writes_fresh = False    # a library step whose output is never a view of an operand
    refuses = False         # an ``ext`` op declared with no lowering

    def fusion(self, eqn):
        return self

    def supports(self, eqn):
        return True


class Elementwise(Lowering):
    """``template(args, in_dtype, out_dtype) -> source``, operands given as sources of the
    primitive's input dtype. ``math``: it calls a math function (a loop of them pays for
    threads at fewer elements); ``complex=False``: numba has no NumPy-compatible version
    for complex operands (NumPy 2's complex sign, lexicographic order), so such an
    equation runs its NumPy impl between kernels. ``one_element``: the template for code
    written one element at a time, where it differs (a call, not numba's inlining of the
    function at every element)."""
    __slots__ = ("template", "math", "complex", "one_element")

    def __init__(self, template, *, math=False, complex=True, one_element=None):
        self.template, self.math, self.complex = template, math, complex
        self.one_element = one_element or template

    def supports(self, eqn):
        return self.complex or _no_complex_operand(eqn)

    def expression(self, eqn, args, one_element=False):
        """Source of the scalar result of ``eqn`` on operand sources ``args`` (in code
        written one element at a time: ``one_element``)."""
        template = self.one_element if one_element else self.template
        return template(args, eqn.invars[-1].aval.dtype, eqn.outvars[0].aval.dtype)


class Reduction(Lowering):
    """An accumulator started at ``init(dtype)`` (source) and advanced by ``step``, a
    format of ``{acc}`` and ``{x}``. ``row_helper``: the ``vreduce`` helper family that
    computes it over a whole row with the same bits ("sum", "extreme"), if any;
    ``extreme``: "max" or "min" for the reductions whose result does not depend on the
    order of the elements (any order of a compare-and-select gives the same bits)."""
    __slots__ = ("init", "step", "row_helper", "extreme", "complex")

    def __init__(self, init, step, *, row_helper=None, extreme=None, complex=True):
        self.init, self.step = init, step
        self.row_helper, self.extreme, self.complex = row_helper, extreme, complex

    def supports(self, eqn):
        return self.complex or _no_complex_operand(eqn)


class IndexMap(Lowering):
    """``read(name, eqn, idx) -> source``: the value at loop indices ``idx`` (sources),
    where ``name(v)`` is the source of an operand (an array's name, or a scalar's source).
    ``when(eqn)``, if given, says which equations of a library primitive fuse this way."""
    __slots__ = ("read", "when")

    def __init__(self, read, *, when=None):
        self.read, self.when = read, when

    def fusion(self, eqn):
        return self if self.when is None or self.when(eqn) else None


class Library(Lowering):
    """``emit(em, ins, outs, eqn)`` writes the step's lines: ``ins`` are sources of the
    operands (rank-0 operands are scalars), ``outs`` the names to assign. ``supports(eqn)``
    may decline an equation (a dtype numba cannot handle there): it then runs its NumPy
    impl between kernels. ``writes_fresh``: the output is always a new array, never a view
    of an operand. ``index_map``: the equations that fuse instead (an ``IndexMap`` with a
    ``when``). ``refuses``: an ``ext`` op declared with no lowering.
    ``decide(eqn, context) -> schedule.Call``: the step's choices (a product's helper and
    BLAS, a threaded helper, its bodies' schedules), taken before any line is written;
    ``emit`` reads them off ``em.call``. ``allocates(eqn)``: the
    step writes its output into an array it allocates (``Emitter.allocate``), which may
    then come from the kernel's workspace (default: ``writes_fresh`` steps with an array
    output). ``reuses_operand``: the step may write its result into its first operand's
    array when the schedule finds it its last reader (``Call.overwrites``).
    ``holds_elements(eqn, held, context)``: the step's output has its elements in scalars
    when the values in ``held`` do (``Schedule.scalars``; ``context`` says where it runs)."""
    __slots__ = ("emit", "check", "writes_fresh", "index_map", "refuses", "decide",
                 "_allocates", "reuses_operand", "_holds_elements")

    def __init__(self, emit, *, supports=None, writes_fresh=False, index_map=None,
                 refuses=False, decide=None, allocates=None, reuses_operand=False,
                 holds_elements=None):
        self.emit, self.check, self.writes_fresh = emit, supports, writes_fresh
        self.index_map, self.refuses, self.decide = index_map, refuses, decide
        self._allocates, self.reuses_operand = allocates, reuses_operand
        self._holds_elements = holds_elements

    def holds_elements(self, eqn, held, context):
        return self._holds_elements is not None and self._holds_elements(eqn, held, context)

    def fusion(self, eqn):
        return self.index_map.fusion(eqn) if self.index_map is not None else None

    def supports(self, eqn):
        return self.check is None or self.check(eqn)

    def allocates(self, eqn):
        if self._allocates is not None:
            return self._allocates(eqn)
        return self.writes_fresh and any(v.aval.shape for v in eqn.outvars)


def lowering_of(eqn):
    """The ``lower`` record of ``eqn``'s primitive, or None."""
    return RULES["lower"].get(eqn.prim)


def fusion(eqn):
    """How ``eqn`` joins a loop nest (its ``Elementwise``, ``Reduction`` or ``IndexMap``
    record), or None when it is a step of its own or has no lowering."""
    rule = RULES["lower"].get(eqn.prim)
    return rule.fusion(eqn) if rule is not None else None


def is_elementwise(eqn):
    return type(fusion(eqn)) is Elementwise


def is_reduction(eqn):
    return type(fusion(eqn)) is Reduction


def numba_types(eqn):
    """Does numba have every dtype ``eqn`` reads and writes? It has no float16 on a CPU
    (neither arrays nor arithmetic), so a float16 equation runs its NumPy impl between
    kernels, which computes in float32 and stores float16, as NumPy's half loops do."""
    return not any(v.aval.dtype == dtypes.float16 for vs in (eqn.invars, eqn.outvars)
                   for v in vs)


def lowerable(eqn):
    """Can ``eqn`` run inside a compiled kernel (else it is a NumPy step between kernels)?"""
    rule = RULES["lower"].get(eqn.prim)
    return rule is not None and numba_types(eqn) and rule.supports(eqn)
