"""Statistics of samples: ``entropy`` and ``sem`` (differentiable), ``mode`` (its value
differentiates as the element it picks) and ``rankdata`` (piecewise constant: no
derivative), with SciPy's signatures.

>>> import numpy as np
>>> from tf_numba.scipy.stats import entropy, rankdata
>>> entropy(np.array([0.5, 0.5]), base=2)
np.float64(1.0)
>>> rankdata(np.array([10, 20, 20, 30]))
array([1. , 2.5, 2.5, 4. ])
"""
import math
from typing import NamedTuple

import numpy as np

import tf_numba.numpy as tnp

from ... import api, nn
from ...core import dtypes
from ...errors import ArgumentError, UnsupportedError
from ...numpy import _promote as P
from .. import special as sc

RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def entropy(pk, qk=None, base=None, axis=0, *, nan_policy="propagate", keepdims=False):
    """The Shannon entropy of ``pk`` (``-sum(pk log pk)``), or with ``qk`` the relative
    entropy ``sum(pk log(pk / qk))``, along ``axis``, each normalized to sum to 1 first;
    divided by ``log(base)``. As ``scipy.stats.entropy``; differentiable in ``pk`` and
    ``qk`` (the derivative is infinite at a zero entry of ``pk``).

    >>> entropy(np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.25, 0.5]))
    np.float64(0.17328679513998632)
    """
    _propagate_only(nan_policy, "entropy")
    ops = nn.floats("entropy", pk) if qk is None else nn.floats("entropy", pk, qk)
    ops = [tnp.broadcast_to(v, P.broadcast_shapes_of("entropy", *ops)) for v in ops]
    with np.errstate(all="ignore"):
        ps = [v / tnp.sum(v, axis=axis, keepdims=True) for v in ops]
        terms = sc.entr(ps[0]) if qk is None else sc.rel_entr(ps[0], ps[1])
        out = tnp.sum(terms, axis=axis, keepdims=keepdims)
        if base is not None:
            out = out / math.log(base)
    return P.scalar_result(out)


def _propagate_only(nan_policy, name):
    if nan_policy != "propagate":
        raise UnsupportedError(f"nan_policy={nan_policy!r}; only 'propagate' is "
                               "supported", op=name)


def _along_last(a, axis):
    """``a`` as an array with the reduced axis last (flattened for ``axis=None``)."""
    x = P.asarray(a)
    if P.is_weak(x):
        x = np.asarray(x)
    if axis is None:
        return tnp.reshape(x, (-1,)), None
    return tnp.moveaxis(x, axis, -1), axis


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)`` along ``axis``
    (all of ``a`` for None), as ``scipy.stats.sem``; differentiable.

    >>> sem(np.array([1.0, 2.0, 3.0, 4.0]))
    np.float64(0.6454972243679028)
    """
    _propagate_only(nan_policy, "sem")
    x = P.asarray(a)
    n = P.shape_of(x)[axis] if axis is not None else int(np.prod(P.shape_of(x)))
    out = tnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims) / math.sqrt(n)
    return P.scalar_result(out)


class ModeResult(NamedTuple):
    """``mode`` and ``count``, as ``scipy.stats``' result."""
    mode: object
    count: object


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` (all of ``a`` for None) and how often it occurs,
    ``ModeResult(mode, count)``, as ``scipy.stats.mode``: the smallest of equally common
    values; NaNs count as one value, larger than all others. Every value is compared with
    every other (``n**2`` work per slice), so it compiles and batches as products do.

    >>> mode(np.array([3, 1, 3, 2, 1]))
    ModeResult(mode=np.int64(1), count=np.int64(2))
    """
    _propagate_only(nan_policy, "mode")
    x, axis_ = _along_last(a, axis)
    if P.shape_of(x)[-1] == 0:
        raise ArgumentError("the mode of an empty axis is undefined", op="mode")
    s = tnp.sort(x, axis=-1)
    same = s[..., :, None] == s[..., None, :]
    if dtypes.is_inexact(P.dtype_of(s)):
        same = same | (tnp.isnan(s)[..., :, None] & tnp.isnan(s)[..., None, :])
    counts = tnp.sum(same, axis=-1)
    first = tnp.argmax(counts, axis=-1)[..., None]       # the first maximum: the smallest
    value = tnp.take_along_axis(s, first, axis=-1)
    count = tnp.take_along_axis(counts, first, axis=-1)
    if keepdims:
        if axis_ is None:
            shape = (1,) * tnp.ndim(a)
            value, count = tnp.reshape(value, shape), tnp.reshape(count, shape)
        else:
            value, count = tnp.moveaxis(value, -1, axis_), tnp.moveaxis(count, -1, axis_)
    else:
        value, count = value[..., 0], count[..., 0]
    return ModeResult(P.scalar_result(value), P.scalar_result(tnp.astype(count, np.int64)))


def _ranks(x, method):
    """Ranks of the 1-D ``x``: ties by ``searchsorted`` on the sorted copy (``min`` is
    the count below, ``max`` the count at or below), ``ordinal`` the inverse of a stable
    argsort, ``dense`` the count of distinct values up to each."""
    if method == "ordinal":
        return tnp.argsort(tnp.argsort(x)) + 1
    s = tnp.sort(x)
    if method == "dense":
        new = tnp.concatenate([tnp.ones((1,), bool), s[1:] != s[:-1]])
        return tnp.take(tnp.cumsum(new), tnp.searchsorted(s, x, side="left"))
    low = tnp.searchsorted(s, x, side="left") + 1
    high = tnp.searchsorted(s, x, side="right")
    return {"min": low, "max": high, "average": (low + high) * 0.5}[method]


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of ``a`` from 1, ties resolved by ``method`` ('average', 'min', 'max',
    'dense', 'ordinal'), over the flattened array or along ``axis``, as
    ``scipy.stats.rankdata``; a slice holding NaN ranks as all NaN ('propagate').

    Dtypes: float64 for 'average'; int64 for the others on integer and bool input, float64
    on float input (SciPy's is int64 unless NaN is present, a decision a traced function
    cannot make). Ranks are piecewise constant: the derivative is zero.

    >>> rankdata(np.array([[3, 1], [1, 3]]), method="min", axis=1)
    array([[2, 1],
           [1, 2]])
    """
    if method not in RANK_METHODS:
        raise ArgumentError(f"method must be one of {RANK_METHODS}, got {method!r}",
                            op="rankdata")
    _propagate_only(nan_policy, "rankdata")
    x = P.asarray(a)
    if P.is_weak(x):
        x = np.asarray(x)
    floating = dtypes.is_inexact(P.dtype_of(x))
    if axis is None:
        x = tnp.reshape(x, (-1,))
        axis = 0
    x = tnp.moveaxis(x, axis, -1)
    shape = tuple(P.shape_of(x))
    rows = tnp.reshape(x, (-1, shape[-1])) if shape[-1] else x
    if not shape[-1]:
        out = tnp.astype(rows, np.float64)
    else:
        out = api.vmap(lambda r: _ranks(r, method))(rows)
        if floating or method == "average":
            out = tnp.astype(out, np.float64)
        if floating:
            has_nan = tnp.any(tnp.isnan(rows), axis=-1, keepdims=True)
            out = tnp.where(has_nan, np.nan, out)
        out = tnp.reshape(out, shape)
    return tnp.moveaxis(out, -1, axis)
