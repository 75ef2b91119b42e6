"""``dot_general``: batched tensor contraction, the one primitive behind dot, matmul and einsum.

Output dims are ordered as in XLA: batch dims, then the lhs free dims, then the rhs free
dims (each in operand order). The NumPy impl permutes both operands into a batched
matrix product, so float and complex products go to BLAS and float32 stays float32.
"""
import enum
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, has_tangent, is_undefined
from ..core.primitive import Primitive, register
from ..core.shapes import same_dim
from ..errors import ArgumentError, DTypeError, ShapeError
from ..kernel_vocab.rules import IndexMap
from ..kernel_vocab.scalar_exprs import typed
from . import elementwise as ew
from . import layout
from .layout import located

PRIMS = {}


class Precision(enum.Enum):
    """How precisely a product runs, as ``jax.lax.Precision``: a speed/accuracy choice of
    TPUs and GPUs (bfloat16 passes, tensorfloat32). On a CPU every product runs in its
    operands' dtype, so each value is accepted and means the same. Strings name them as
    JAX's: ``'default'``/``'fastest'``/``'bfloat16'``, ``'high'``/``'tensorfloat32'``/
    ``'bfloat16_3x'``, ``'highest'``/``'float32'``.

    >>> tnp.dot(a, b, precision=lax.Precision.HIGHEST)
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_NAMES.get(value)

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
                    "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
                    "tensorfloat32": Precision.HIGH, "bfloat16_3x": Precision.HIGH,
                    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}


def check_precision(precision, op):
    """``precision`` as JAX takes it (None, a ``Precision``, its name, or a pair of them,
    one per operand), or a ``ValueError`` naming ``op``: accepted and otherwise ignored."""
    pair = precision if isinstance(precision, (tuple, list)) and len(precision) == 2 \
        else (precision,)
    for p in pair:
        if p is None or isinstance(p, Precision) or (isinstance(p, str)
                                                     and p in _PRECISION_NAMES):
            continue
        raise ArgumentError(f"precision must be None, a lax.Precision, one of "
                            f"{sorted(_PRECISION_NAMES)} or a pair of those, got "
                            f"{precision!r}", op=op)


def _free(rank, contracting, batch):
    return tuple(i for i in range(rank) if i not in contracting and i not in batch)


def _check_dims(name, dims, aval):
    if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
        raise ShapeError(f"{name} dims {dims} must be distinct axes of the operand of shape "
                         f"{aval.shape}", op="dot_general")


def _dot_general_eval(a, b, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    if a.dtype != b.dtype:
        raise DTypeError(f"operands need one dtype, got {a.dtype.name} and {b.dtype.name} "
                         "(tnp.matmul/dot promote; the op does not)", op="dot_general")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"contracting dims {lc} / {rc} and batch dims {lb} / {rb} must pair "
                         "up one to one", op="dot_general")
    _check_dims("lhs", lc + lb, a)
    _check_dims("rhs", rc + rb, b)
    for kind, ldims, rdims in (("contracting", lc, rc), ("batch", lb, rb)):
        for i, j in zip(ldims, rdims):
            if not same_dim(a.shape[i], b.shape[j], "dot_general"):
                raise ShapeError(
                    f"{kind} dims {ldims} of lhs shape {a.shape} and {rdims} of rhs shape "
                    f"{b.shape} differ in size: lhs dim {i} is {a.shape[i]}, rhs dim {j} is "
                    f"{b.shape[j]}", op="dot_general")
    out_dtype = a.dtype if preferred_element_type is None else preferred_element_type
    # an integer product may accumulate in any float (as JAX's int8 x int8 -> float32);
    # otherwise the preferred type must hold the operands' values
    if preferred_element_type is not None and not np.can_cast(a.dtype, out_dtype, "safe") \
            and not (dtypes.is_inexact(out_dtype) and not dtypes.is_inexact(a.dtype)):
        raise DTypeError(f"preferred_element_type {out_dtype.name} cannot hold "
                         f"{a.dtype.name} products", op="dot_general")
    shape = (tuple(a.shape[i] for i in lb) + tuple(a.shape[i] for i in _free(a.ndim, lc, lb))
             + tuple(b.shape[j] for j in _free(b.ndim, rc, rb)))
    return ShapedArray(shape, out_dtype)


def _dot_general_impl(a, b, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    a, b = np.asarray(a), np.asarray(b)
    if preferred_element_type is not None:
        a, b = a.astype(preferred_element_type), b.astype(preferred_element_type)
    if not lb and len(lc) == 1 and a.ndim <= 2 and b.ndim <= 2 and a.shape[lc[0]] != 1:
        # a product of matrices or vectors: each read in place (transposed so that it
        # contracts its last axis, the other its first), as one gemm, gemv or dot; the
        # general path's batched form made a matrix-vector product 2.5x slower
        lhs = a if lc[0] == a.ndim - 1 else a.T
        rhs = b if rc[0] == 0 else b.T
        out = np.matmul(lhs, rhs)
        return out if type(out) is np.ndarray else np.asarray(out)    # (vector . vector)
    lf, rf = _free(a.ndim, lc, lb), _free(b.ndim, rc, rb)
    batch = tuple(a.shape[i] for i in lb)
    lfree, rfree = tuple(a.shape[i] for i in lf), tuple(b.shape[j] for j in rf)
    k = math.prod(a.shape[i] for i in lc)
    lhs = np.transpose(a, lb + lf + lc).reshape(math.prod(batch), math.prod(lfree), k)
    rhs = np.transpose(b, rb + rc + rf).reshape(math.prod(batch), k, math.prod(rfree))
    if k == 1:
        # an outer product (the gradient of a matrix-vector product): the same products
        # with nothing to sum, and OpenBLAS's gemm takes 2-4x NumPy's multiply for them
        return np.multiply(lhs, rhs).reshape(batch + lfree + rfree)
    return np.matmul(lhs, rhs).reshape(batch + lfree + rfree)


dot_general_p = Primitive("dot_general", _dot_general_eval, _dot_general_impl)
PRIMS["dot_general"] = dot_general_p


def is_outer_product(eqn):
    """A ``dot_general`` whose contracted dims all have length 1 is a broadcast multiply:
    as a loop it is one pass writing the output, where BLAS gemm with k = 1 costs ~1.5x
    that and a call. (The length is concrete here; another length gets other source.)"""
    (lc, rc), _ = eqn.params["dimension_numbers"]
    shape = eqn.invars[0].aval.shape
    return all(shape[d] == 1 for d in lc)


def _outer_product_read(name, eqn, idx):
    """out[batch, lhs free, rhs free] = lhs[...] * rhs[...], contracted (length-1) axes at 0."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    out_dtype = eqn.outvars[0].aval.dtype
    position = iter(range(len(lb), len(idx)))
    reads = []
    for v, contracted, batch in zip(eqn.invars, (lc, rc), (lb, rb)):
        if not v.aval.shape:
            reads.append(typed(name(v), out_dtype))
            continue
        index = ["0" if d in contracted else idx[batch.index(d)] if d in batch
                 else idx[next(position)] for d in range(v.aval.ndim)]
        reads.append(typed(f"{name(v)}[{', '.join(index)}]", out_dtype))
    return typed(f"({reads[0]} * {reads[1]})", out_dtype)


# in a loop nest (the rest of its lowering is a library rule: lowering/library.py)
OUTER_PRODUCT = IndexMap(_outer_product_read, when=is_outer_product)


def _dims_tuple(dims):
    if type(dims) is tuple:
        for d in dims:
            if type(d) is not int:
                break
        else:
            return dims
    return tuple(operator.index(d) for d in dims)


@located
def dot_general(a, b, dimension_numbers, preferred_element_type=None):
    """Contract ``a`` and ``b``: ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``; output dims are batch, lhs free, rhs free.

    >>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_dims_tuple(lc), _dims_tuple(rc)), (_dims_tuple(lb), _dims_tuple(rb)))
    pref = None
    if preferred_element_type is not None:
        pref = dtypes.canonical(preferred_element_type)
        if pref == aval_of(a).dtype:
            pref = None
    return dot_general_p.bind(a, b, dimension_numbers=dims, preferred_element_type=pref)


def _dot_general_jvp(primals, tangents, *, dimension_numbers, preferred_element_type):
    (a, b), (ta, tb) = primals, tangents
    params = dict(dimension_numbers=dimension_numbers,
                  preferred_element_type=preferred_element_type)
    ans = dot_general_p.bind(a, b, **params)
    if not has_tangent(aval_of(ans)) or (type(ta) is Zero and type(tb) is Zero):
        return ans, Zero(aval_of(ans))
    out = None if type(ta) is Zero else dot_general_p.bind(ta, b, **params)
    if type(tb) is not Zero:
        term = dot_general_p.bind(a, tb, **params)
        out = term if out is None else ew.add(out, term)
    return ans, out


def _argsort(src):
    return tuple(src.index(d) for d in range(len(src)))


def _transpose_lhs(ct, b, a_aval, dimension_numbers):
    # ct has dims (batch, lhs free, rhs free). Contracting ct's rhs-free dims with b's free
    # dims leaves (batch, lhs free, b's contracting dims in b's order); permute into a's.
    (lc, rc), (lb, rb) = dimension_numbers
    b_rank = len(aval_of(b).shape)
    a_free, b_free = _free(len(a_aval.shape), lc, lb), _free(b_rank, rc, rb)
    nb, ct_rank = len(lb), len(lb) + len(a_free) + len(b_free)
    dims = ((tuple(range(nb + len(a_free), ct_rank)), b_free), (tuple(range(nb)), rb))
    out = dot_general(ct, ew.convert_element_type(b, aval_of(ct).dtype), dims)
    src = list(lb) + list(a_free) + [lc[rc.index(j)] for j in sorted(rc)]
    return ew.convert_element_type(layout.transpose(out, _argsort(src)), a_aval.dtype)


def _transpose_rhs(ct, a, b_aval, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    a_rank = len(aval_of(a).shape)
    a_free, b_free = _free(a_rank, lc, lb), _free(len(b_aval.shape), rc, rb)
    nb = len(lb)
    dims = ((a_free, tuple(range(nb, nb + len(a_free)))), (lb, tuple(range(nb))))
    out = dot_general(ew.convert_element_type(a, aval_of(ct).dtype), ct, dims)
    src = list(rb) + [rc[lc.index(i)] for i in sorted(lc)] + list(b_free)
    return ew.convert_element_type(layout.transpose(out, _argsort(src)), b_aval.dtype)


def _dot_general_transpose(ct, a, b, *, dimension_numbers, preferred_element_type):
    if is_undefined(a) and is_undefined(b):
        raise NotImplementedError("dot_general is bilinear: it transposes in one operand "
                                  "at a time, not both")
    ct_a = _transpose_lhs(ct, b, a.aval, dimension_numbers) if is_undefined(a) else None
    ct_b = _transpose_rhs(ct, a, b.aval, dimension_numbers) if is_undefined(b) else None
    return [ct_a, ct_b]


register("jvp", dot_general_p, _dot_general_jvp)
register("transpose", dot_general_p, _dot_general_transpose)


# ---------------------------------------------------------------- batching

def _dot_general_batch(args, dims, *, dimension_numbers, preferred_element_type):
    # A batch axis on both operands becomes a leading dot_general batch dim (one batched
    # BLAS loop); on one operand only it is just another free dim of that operand.
    (a, b), (da, db) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes, d):
        return tuple(x + (d is not None and x >= d) for x in axes)

    lc2, lb2, rc2, rb2 = shift(lc, da), shift(lb, da), shift(rc, db), shift(rb, db)
    params = dict(preferred_element_type=preferred_element_type)
    if da is not None and db is not None:
        dn = ((lc2, rc2), ((da,) + lb2, (db,) + rb2))
        return dot_general_p.bind(a, b, dimension_numbers=dn, **params), 0
    dn = ((lc2, rc2), (lb2, rb2))
    out = dot_general_p.bind(a, b, dimension_numbers=dn, **params)
    if da is not None:
        lfree = _free(len(aval_of(a).shape), lc2, lb2)
        return out, len(lb) + lfree.index(da)
    lfree = _free(len(aval_of(a).shape), lc2, lb2)
    rfree = _free(len(aval_of(b).shape), rc2, rb2)
    return out, len(lb) + len(lfree) + rfree.index(db)


register("batch", dot_general_p, _dot_general_batch)
