"""Every choice a product makes, in one place: its form, the helper that runs it, the BLAS
library it calls and whether it shares itself out among threads.

``library._dot_general`` prints what ``decide`` chose here; the plan reads the choices off
the schedule (``Schedule.blas``, ``.serial_products``). The library products call is
the plan's (``products_on_numpy``): one library, run as wide as the engine, does all of
a plan's BLAS work.
"""
import math

from ..core import dtypes
from ..ext import NUMPY_BLAS, SCIPY_BLAS
from . import loops, numpy_blas
from .schedule import Call


def products_on_numpy(lapack):
    """Do a plan's products call NumPy's BLAS (``loops.gemm_into``), rather than numba's
    (SciPy's: ``loops.dot_into``)? NumPy's, unless the plan's host steps call LAPACK on
    SciPy's (then its products join them there) or NumPy's BLAS exports no usable gemm."""
    return SCIPY_BLAS not in lapack and numpy_blas.AVAILABLE


# In a plan's parallel variant a product of at least this many multiply-adds (~40 us of
# one core's BLAS) runs across the threads (``loops.product_by_rows``,
# ``product_by_depth``); one split by its contraction adds a partial output per chunk, so
# only an output this small is.
SPLIT_MIN_MACS = 1 << 21
SPLIT_MAX_OUTPUT = 1 << 14


class Product:
    """How one ``dot_general`` runs. ``form``: "dot" (vector times vector), "matvec" /
    "vecmat" (a small matrix and a vector, as loops), "batched_matvec" (a loop of those),
    "batched" (a loop of BLAS products), "matrix" (one BLAS product). ``helper``: the
    ``loops`` function called (per batch for the batched forms). ``blas``: the library it
    calls, if any. ``serial``: a large product left on one thread in a parallel kernel
    (the plan then runs serially, BLAS wide). ``vector``: a matrix times a vector (gemv),
    which a helper shared out among threads is told. ``transposed``: per operand, BLAS
    reads it through a transpose; ``copied``: per operand, its axes are in neither order
    and it is copied first."""
    __slots__ = ("form", "helper", "blas", "serial", "vector", "transposed", "copied")

    def __init__(self, form, helper, blas=None, serial=False, vector=False,
                 transposed=(False, False), copied=(False, False)):
        self.form, self.helper, self.blas, self.serial = form, helper, blas, serial
        self.vector, self.transposed, self.copied = vector, transposed, copied

    def __repr__(self):
        on = f" on {self.blas}" if self.blas else ""
        reads = [f"{side} {'copied' if c else 'transposed' if t else 'as stored'}"
                 for side, t, c in zip(("lhs", "rhs"), self.transposed, self.copied)]
        return (f"product {self.form} by loops.{self.helper}{on} ({', '.join(reads)})"
                + (", one thread in a parallel kernel" if self.serial else ""))


def decide(eqn, context):
    """The ``schedule.Call`` of a ``dot_general`` equation in ``context``."""
    product = choose(eqn, context.target.products_on_numpy, context.threads)
    return Call(eqn, product=product, blas=product.blas)


def choose(eqn, on_numpy, threads):
    """The ``Product`` for ``eqn``; ``threads``: may it share itself out among threads."""
    form = matvec_form(eqn)
    if form is not None:
        m, axis = form
        kind = "dot" if m is None else "matvec" if axis == 1 else "vecmat"
        return Product(kind, kind)
    blas = NUMPY_BLAS if on_numpy else SCIPY_BLAS
    into = "gemm_into" if on_numpy else "dot_into"
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    la, ra = (v.aval for v in eqn.invars)
    copied = (False, False)
    if la.ndim == ra.ndim == 2 and len(lc) == 1 and not lb:
        lt, rt = lc == (0,), rc == (1,)
    else:
        lf = tuple(i for i in range(la.ndim) if i not in lc and i not in lb)
        rf = tuple(i for i in range(ra.ndim) if i not in rc and i not in rb)
        groups = ((la.ndim, (lb, lf, lc)), (ra.ndim, (rb, rc, rf)))
        lt, rt = (reads_transposed(n, g) for n, g in groups)
        copied = tuple(not t and sum(g, ()) != tuple(range(n))
                       for t, (n, g) in zip((lt, rt), groups))
        if lb and batched_matvec(eqn, lf, rf):
            return Product("batched_matvec", "matvec", None, transposed=(lt, rt),
                           copied=copied)
        if lb:
            return Product("batched", into, blas, transposed=(lt, rt), copied=copied)
        if on_numpy and real_matrix_times_vector(eqn):
            into = "matvec_into"
    helper, serial = _across_threads(eqn, into, lt, rt, on_numpy, threads)
    return Product("matrix", helper, blas, serial, vector=into == "matvec_into",
                   transposed=(lt, rt), copied=copied)


def _across_threads(eqn, into, lt, rt, on_numpy, threads):
    """(helper, serial) of one matrix product ``lhs @ rhs`` (``lt``/``rt``: BLAS reads
    that operand through a transpose). In a plan's parallel variant a large product runs
    across the threads: by rows of the output when the left operand is read as stored,
    else, for a small output, by the contraction, each part on NumPy's BLAS. A large one
    that is neither (or of unknown size, or on numba's BLAS) stays one call on one thread
    and is marked ``serial``. A split product does not make the kernel a parallel one: a
    plan whose only threaded work is its products runs them on BLAS as wide as the
    engine, which does as well as the split."""
    macs = _macs(eqn)
    split = macs is not None and on_numpy     # (numba's BLAS: never split)
    if not threads or (macs is not None and macs < SPLIT_MIN_MACS):
        return into, False
    if split and not lt:
        return "product_by_rows", False
    if split and not rt and _size(eqn.outvars[0].aval.shape) <= SPLIT_MAX_OUTPUT:
        return "product_by_depth", False
    return into, True


def reads_transposed(ndim, groups):
    """Does BLAS read an operand with (batch, rows, cols) axes ``groups``, copied C-ordered
    into 3-D, through a transpose: its axes are (batch, cols, rows) in storage order."""
    batch, rows, cols = groups
    identity = tuple(range(ndim))
    return batch + rows + cols != identity and batch + cols + rows == identity


def _size(shape):
    return math.prod(shape) if all(type(d) is int for d in shape) else None


def _macs(eqn):
    """Multiply-adds of a product (None when a length is symbolic)."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    out = _size(eqn.outvars[0].aval.shape)
    depth = _size(tuple(eqn.invars[0].aval.shape[i] for i in lc))
    return None if out is None or depth is None else out * depth


def batched_matvec(eqn, lf, rf):
    """A batch of matrix-vector products, each matrix small enough for ``loops``: a loop
    reads each matrix once at memory speed, where a gemv call per batch costs more than
    its work. Sizes must be concrete, as for ``matvec_form``."""
    (lc, _), _ = eqn.params["dimension_numbers"]
    shapes = [v.aval.shape for v in eqn.invars]
    if (lf and rf) or not all(type(d) is int for s in shapes for d in s):
        return False
    matrix, free = (0, lf) if not rf else (1, rf)
    size = math.prod(shapes[0][i] for i in lc) * math.prod(shapes[matrix][i] for i in free)
    return size <= loops.MATVEC_MAX_ELEMENTS


def matvec_form(eqn):
    """``(m, axis)`` when the contraction is matrix operand ``m`` (contracted on ``axis``)
    times a vector, ``(None, None)`` when it is vector times vector, small enough to run
    as loops (``loops.matvec``, ``loops.vecmat``, ``loops.dot``) rather than BLAS; else
    None. The sizes must be concrete: another size gets other source."""
    (lc, rc), (lb, _) = eqn.params["dimension_numbers"]
    shapes = [v.aval.shape for v in eqn.invars]
    if lb or len(lc) != 1 or not all(type(d) is int for s in shapes for d in s):
        return None
    ranks = [len(s) for s in shapes]
    if ranks == [1, 1]:
        return None, None
    for m, contracted in ((0, lc), (1, rc)):
        if (ranks[m] == 2 and ranks[1 - m] == 1
                and shapes[m][0] * shapes[m][1] <= loops.MATVEC_MAX_ELEMENTS):
            return m, contracted[0]
    return None


def real_matrix_times_vector(eqn):
    """Is ``eqn`` a real matrix times a 1-D vector (NumPy's matmul: gemv)?"""
    ranks = sorted(len(v.aval.shape) for v in eqn.invars)
    dt = eqn.outvars[0].aval.dtype
    return ranks == [1, 2] and dtypes.is_inexact(dt) and not dtypes.is_complex(dt)


# A window product (a convolution's input gradient) runs its matrix part on NumPy's BLAS
# through ``loops.gemm_into``, whichever library the plan's products call.
WINDOW_PRODUCT_BLAS = NUMPY_BLAS
