"""Composite operations for models (activations, softmax, normalization, losses), as
``jax.nn``: each is a short program of primitives, so it traces, differentiates to every
order and compiles under ``jit`` like any user function.

Numerically stable throughout: softmax and logsumexp shift by the row maximum (held out of
the derivative: the result does not depend on it), softplus never overflows, and masked or
all ``-inf`` rows give finite values and finite derivatives. Where a function has a branch
that is invalid on the other side (``expm1`` of a large input, ``log`` of zero) the branch
is fed a harmless value there ("double where"), so its derivative is never ``0 * inf``.

>>> import numpy as np, tf_numba as tf, tf_numba.nn as nn, tf_numba.numpy as tnp
>>> nn.softmax(np.array([1.0, 2.0, 3.0]))
array([0.09003057, 0.24472847, 0.66524096])
>>> tf.grad(lambda x: tnp.sum(nn.gelu(x, approximate=False)))(np.zeros(2))
array([0.5, 0.5])

Integer and bool inputs are converted to float64; complex inputs are rejected.
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import Sym
from ..errors import ArgumentError, DTypeError, ShapeError, UnsupportedError
from ..numpy import _promote as P
from ..numpy.reductions import _count
from ..ops import elementwise as ew
from ..ops import layout

__all__ = ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "sigmoid", "log_sigmoid",
           "silu", "swish", "softplus", "soft_sign", "hard_tanh", "hard_sigmoid", "gelu",
           "glu", "softmax", "log_softmax", "logsumexp", "layer_norm", "rms_norm",
           "standardize", "one_hot", "softmax_cross_entropy",
           "binary_cross_entropy_with_logits", "mean_squared_error", "huber_loss", "conv",
           "max_pool", "avg_pool", "initializers", "identity", "tanh", "mish", "hard_silu",
           "hard_swish", "squareplus", "sparse_plus", "sparse_sigmoid", "log1mexp",
           "logmeanexp", "dot_product_attention"]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# ---------------------------------------------------------------- operands

def floats(name, *operands):
    """Operands as one real float dtype (NumPy promotion; ints and bools become float64),
    broadcast to one shape. Rank-0 operands stay rank 0."""
    xs = [P.asarray(x) for x in operands]
    dt = P.result_type(*xs)
    if dtypes.is_complex(dt):
        raise DTypeError(f"needs real operands, got {dt.name}", op=name)
    if not dtypes.is_inexact(dt):
        dt = dtypes.float64
    xs = [np.asarray(x, dt) if P.is_weak(x) else P.cast(x, dt) for x in xs]
    return P.broadcast_all(name, xs)


def _float(x, name):
    return floats(name, x)[0]


def _dt(x):
    return aval_of(x).dtype


def _shape(x):
    return tuple(aval_of(x).shape)


def _stop(x):
    return ew.stop_gradient(x)


def _finite_shift(m):
    """A row maximum to shift by: 0 where it is infinite or NaN, and no derivative."""
    return _stop(tnp.where(tnp.isfinite(m), m, 0))


# ---------------------------------------------------------------- activations

def relu(x):
    """``max(x, 0)`` with derivative 0 at 0, as ``jax.nn.relu``; NaN stays NaN.

    >>> nn.relu(np.array([-1.0, 0.0, 2.0]))
    array([0., 0., 2.])
    """
    x = _float(x, "relu")
    return tnp.where(x <= 0, 0, x)


def relu6(x):
    """``min(max(x, 0), 6)``, derivative 0 at both kinks (as ``jax.nn.relu6``).

    >>> nn.relu6(np.array([-1.0, 3.0, 7.0]))
    array([0., 3., 6.])
    """
    x = _float(x, "relu6")
    return tnp.where(x <= 0, 0, tnp.where(x >= 6, 6, x))


def leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x >= 0`` else ``negative_slope * x``.

    >>> nn.leaky_relu(np.array([-2.0, 3.0]), 0.1)
    array([-0.2,  3. ])
    """
    x = _float(x, "leaky_relu")
    return tnp.where(x >= 0, x, x * negative_slope)


def elu(x, alpha=1.0):
    """``x`` where ``x > 0`` else ``alpha * (exp(x) - 1)``.

    >>> nn.elu(np.array([-1.0, 1.0]))
    array([-0.63212056,  1.        ])
    """
    x = _float(x, "elu")
    pos = x > 0
    # expm1 only sees x <= 0: large positive x never overflows into the untaken branch
    return tnp.where(pos, x, tnp.expm1(tnp.where(pos, 0, x)) * alpha)


def selu(x):
    """``scale * elu(x, alpha)`` with the self-normalizing constants of Klambauer et al. 2017.

    >>> nn.selu(np.array([1.0]))
    array([1.05070099])
    """
    return elu(x, SELU_ALPHA) * SELU_SCALE


def celu(x, alpha=1.0):
    """``x`` where ``x > 0`` else ``alpha * (exp(x / alpha) - 1)``.

    >>> nn.celu(np.array([-1.0, 1.0]), 2.0)
    array([-0.78693868,  1.        ])
    """
    x = _float(x, "celu")
    pos = x > 0
    return tnp.where(pos, x, tnp.expm1(tnp.where(pos, 0, x) / alpha) * alpha)


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))``; 0 or 1 (never NaN) far out.

    >>> nn.sigmoid(np.array([0.0, -1000.0]))
    array([0.5, 0. ])
    """
    return ew.logistic(_float(x, "sigmoid"))


def _softplus(x):
    # log(1 + e^x) = max(x, 0) + log1p(e^-|x|), with max and |.| as selects on x > 0 so that
    # every derivative at 0 is that of the smooth left branch log1p(e^x) (1/2, 1/4, ...).
    pos = x > 0
    return tnp.where(pos, x, 0) + tnp.log1p(tnp.exp(-tnp.where(pos, x, -x)))


def softplus(x):
    """``log(1 + exp(x))`` without overflow.

    >>> nn.softplus(np.array([0.0, 1000.0, -1000.0]))
    array([6.93147181e-01, 1.00000000e+03, 0.00000000e+00])
    """
    return _softplus(_float(x, "softplus"))


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, accurate for large ``|x|``.

    >>> nn.log_sigmoid(np.array([0.0, -1000.0]))
    array([-6.93147181e-01, -1.00000000e+03])
    """
    return -_softplus(-_float(x, "log_sigmoid"))


def silu(x):
    """``x * sigmoid(x)`` (also ``swish``).

    >>> nn.silu(np.array([1.0]))
    array([0.73105858])
    """
    x = _float(x, "silu")
    return x * ew.logistic(x)


swish = silu


def soft_sign(x):
    """``x / (|x| + 1)``.

    >>> nn.soft_sign(np.array([-3.0, 1.0]))
    array([-0.75,  0.5 ])
    """
    x = _float(x, "soft_sign")
    return x / (tnp.abs(x) + 1)


def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``, derivative 0 outside the open interval.

    >>> nn.hard_tanh(np.array([-2.0, 0.5, 2.0]))
    array([-1. ,  0.5,  1. ])
    """
    x = _float(x, "hard_tanh")
    return tnp.where(x > 1, 1, tnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``.

    >>> nn.hard_sigmoid(np.array([0.0]))
    array([0.5])
    """
    return relu6(_float(x, "hard_sigmoid") + 3) / 6


def gelu(x, approximate=True):
    """The Gaussian error linear unit ``x * Phi(x)``, as ``jax.nn.gelu`` (whose default,
    ``approximate=True``, this keeps).

    ``approximate=False``: exact, ``x/2 * erfc(-x/sqrt 2)`` (erfc keeps the left tail
    accurate). ``approximate=True``: the tanh form of Hendrycks & Gimpel 2016,
    ``x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``, computed as the equal
    ``x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x**3))``, which does not cancel for x < 0.

    >>> nn.gelu(np.array([1.0]), approximate=False)
    array([0.84134475])
    """
    x = _float(x, "gelu")
    if approximate:
        inner = (x + x * x * x * 0.044715) * (2 * math.sqrt(2 / math.pi))
        return x * ew.logistic(inner)
    return x * ew.erfc(x * -math.sqrt(0.5)) * 0.5


def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves ``a, b`` of ``x`` along
    ``axis`` (its length must be even).

    >>> nn.glu(np.array([1.0, 2.0, 0.0, 0.0]))
    array([0.5, 1. ])
    """
    x = _float(x, "glu")
    axis = P.axis_arg(axis, len(_shape(x)), "glu")
    n = _shape(x)[axis]
    if isinstance(n, Sym):
        raise UnsupportedError(f"axis {axis} of shape {_shape(x)} is symbolic; glu needs its "
                               "length to halve it", op="glu")
    if n % 2:
        raise ShapeError(f"axis {axis} of shape {_shape(x)} must have even length", op="glu")
    a, b = tnp.split(x, 2, axis=axis)
    return a * ew.logistic(b)


def identity(x):
    """``x`` itself (``jax.nn.identity``), as an array."""
    return P.asarray(x)


def tanh(x):
    """The hyperbolic tangent (``jax.nn.tanh``, ``tnp.tanh``)."""
    return tnp.tanh(_float(x, "tanh"))


def mish(x):
    """``x * tanh(softplus(x))`` (Misra 2019).

    >>> nn.mish(np.array([0.0, 1.0]))
    array([0.        , 0.86509839])
    """
    x = _float(x, "mish")
    return x * tnp.tanh(_softplus(x))


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also ``hard_swish``; Howard et al. 2019).

    >>> nn.hard_silu(np.array([-4.0, 1.0, 4.0]))
    array([-0.        ,  0.66666667,  4.        ])
    """
    x = _float(x, "hard_silu")
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU (Barron 2021).

    >>> nn.squareplus(np.array([0.0]))
    array([1.])
    """
    x, b = floats("squareplus", x, b)
    return (x + tnp.sqrt(x * x + b)) / 2


def sparse_plus(x):
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)**2 / 4`` between (sparsemax's
    softplus, Martins & Astudillo 2016).

    >>> nn.sparse_plus(np.array([-2.0, 0.0, 2.0]))
    array([0.  , 0.25, 2.  ])
    """
    x = _float(x, "sparse_plus")
    return tnp.where(x <= -1, 0, tnp.where(x >= 1, x, (x + 1) ** 2 / 4))


def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``, the derivative of ``sparse_plus``.

    >>> nn.sparse_sigmoid(np.array([-2.0, 0.0, 2.0]))
    array([0. , 0.5, 1. ])
    """
    x = _float(x, "sparse_sigmoid")
    return tnp.clip(x + 1, 0, 2) / 2


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x > 0``, accurate at both ends: ``log(-expm1(-x))``
    below ``log 2`` and ``log1p(-exp(-x))`` above (Mächler 2012).

    >>> nn.log1mexp(np.array([1e-20, 50.0]))
    array([-4.60517019e+01, -1.92874985e-22])
    """
    x = _float(x, "log1mexp")
    small = x < math.log(2)
    return tnp.where(small, tnp.log(-tnp.expm1(-tnp.where(small, x, 1.0))),
                     tnp.log1p(-tnp.exp(-tnp.where(small, 1.0, x))))


# ---------------------------------------------------------------- softmax and logsumexp

def _shifted(x, axis, where):
    """``x - max``: ``x`` with excluded entries at -inf, shifted by its finite maximum.

    Excluded entries are replaced by -inf before anything reads them, so neither their
    value nor their derivative reaches the result (the "double where").
    """
    if where is not None:
        x = tnp.where(where, x, -np.inf)
    return x - _finite_shift(tnp.max(x, axis=axis, keepdims=True, initial=-np.inf))


def _safe_log(s):
    """``(log s, s == 0)`` with ``log 1`` standing in where ``s == 0``, so the derivative
    there is 0 rather than ``0 / 0``."""
    empty = s == 0
    return tnp.log(tnp.where(empty, 1, s)), empty


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` (an int, a tuple, or None for all axes).

    ``where`` (bool, broadcast against ``x``): entries where it is False are left out of
    the sum and get 0. A row with nothing left (all excluded, or all ``-inf``) is all zeros
    with a zero derivative; JAX gives NaN there.

    >>> nn.softmax(np.array([[0.0, 1.0], [2.0, -np.inf]]))
    array([[0.26894142, 0.73105858],
           [1.        , 0.        ]])
    """
    x = _float(x, "softmax")
    shifted = _shifted(x, axis, where)
    e = tnp.exp(shifted)
    s = tnp.sum(e, axis=axis, keepdims=True)
    return e / tnp.where(s == 0, 1, s)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``; entries excluded by ``where`` are ``-inf``,
    and a row with nothing left is all ``-inf`` with a zero derivative.

    >>> nn.log_softmax(np.array([0.0, 0.0]))
    array([-0.69314718, -0.69314718])
    """
    x = _float(x, "log_softmax")
    shifted = _shifted(x, axis, where)
    lse, _ = _safe_log(tnp.sum(tnp.exp(shifted), axis=axis, keepdims=True))
    out = shifted - lse
    return out if where is None else tnp.where(where, out, -np.inf)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` along ``axis``, as ``scipy.special.logsumexp`` (and
    ``jax.nn.logsumexp``: ``where`` leaves entries out, like ``b == 0``).

    Shifted by the maximum of the included entries, so it does not overflow. An empty sum
    is ``-inf`` with a zero derivative. With ``return_sign=True`` returns
    ``(log|sum|, sign(sum))``; without it a negative sum gives NaN, as SciPy.

    >>> nn.logsumexp(np.array([1000.0, 1000.0]))
    np.float64(1000.6931471805599)
    """
    if b is None:
        a = _float(a, "logsumexp")
        x = a if where is None else tnp.where(where, a, -np.inf)
        m = _finite_shift(tnp.max(x, axis=axis, keepdims=True, initial=-np.inf))
        e = tnp.exp(x - m)
    else:
        a, b = floats("logsumexp", a, b)
        keep = b != 0     # b == 0 leaves the entry out of the maximum (as SciPy)
        included = keep if where is None else tnp.logical_and(where, keep)
        m = _finite_shift(tnp.max(tnp.where(included, a, -np.inf), axis=axis, keepdims=True,
                                  initial=-np.inf))
        d = (a if where is None else tnp.where(where, a, -np.inf)) - m
        # an entry with b == 0 keeps its exponent while exp of it is finite, so its term is
        # 0 (never 0 * inf or 0 * NaN) and d/db there is exp(a - max) / sum
        finite = d < math.log(np.finfo(_dt(d)).max)
        e = b * tnp.exp(tnp.where(tnp.logical_or(keep, finite), d, 0))
    shape = _shape(a)
    s = tnp.sum(e, axis=axis, keepdims=True)
    if return_sign:
        sign = tnp.sign(s)
        s = tnp.abs(s)
    log_s, empty = _safe_log(s)
    out = tnp.where(empty, -np.inf, log_s + m)
    if not keepdims:
        axes = P.axes_arg(axis, len(shape), "logsumexp")
        out = tnp.squeeze(out, axis=axes) if axes else out
        if return_sign:
            sign = tnp.squeeze(sign, axis=axes) if axes else sign
    out = P.scalar_result(out)
    return (out, P.scalar_result(sign)) if return_sign else out


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` along ``axis`` without overflow: ``logsumexp`` less the log of
    the number of entries (those ``where`` keeps).

    >>> nn.logmeanexp(np.array([1000.0, 1000.0]))
    np.float64(1000.0)
    """
    x = _float(x, "logmeanexp")
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    if where is None:
        axes = P.axes_arg(axis, len(_shape(x)), "logmeanexp")
        count = math.prod(_shape(x)[a] for a in axes) if axes else 1
        return lse - math.log(count)
    count = tnp.sum(tnp.broadcast_to(where, _shape(x)), axis=axis, keepdims=keepdims)
    return P.scalar_result(lse - tnp.log(count.astype(_dt(x))))


# ---------------------------------------------------------------- normalization

def _reduced_axes(x, axis, name):
    return P.axes_arg(axis, len(_shape(x)), name)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``, as ``jax.nn.standardize``.

    The mean and variance are computed (over entries where ``where`` is True) unless given.
    A computed variance is, as JAX's, ``mean(x**2) - mean**2`` clipped at 0 with
    ``algorithm="fast"`` (JAX's default; it loses digits when the mean is large against
    the spread) and the mean squared deviation with ``algorithm="stable"``.

    >>> nn.standardize(np.array([1.0, 3.0]), epsilon=0.0)
    array([-1.,  1.])
    """
    if algorithm not in ("fast", "stable"):
        raise ArgumentError(f"algorithm={algorithm!r}: 'fast' or 'stable'",
                            op="standardize")
    x = _float(x, "standardize")
    axes = _reduced_axes(x, axis, "standardize")
    kw = dict(axis=axes, keepdims=True) if where is None else \
        dict(axis=axes, keepdims=True, where=where)
    if mean is None:
        mean = tnp.mean(x, **kw)
    centered = x - mean
    if variance is None:
        if algorithm == "stable":
            variance = tnp.mean(centered * centered, **kw)
        else:
            variance = tnp.maximum(tnp.mean(x * x, **kw) - mean * mean, 0)
    return centered * ew.rsqrt(floats("standardize", variance + epsilon)[0])


def layer_norm(x, scale=None, bias=None, *, axis=-1, epsilon=1e-5):
    """Layer normalization (Ba et al. 2016): ``standardize(x, axis) * scale + bias``.

    ``scale`` and ``bias`` broadcast against ``x`` (usually of the normalized axes' shape).

    >>> nn.layer_norm(np.array([[1.0, 3.0]]), np.array([2.0, 2.0]), epsilon=0.0)
    array([[-2.,  2.]])
    """
    y = standardize(x, axis, epsilon=epsilon, algorithm="stable")
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


def rms_norm(x, scale=None, *, axis=-1, epsilon=1e-6):
    """RMS normalization (Zhang & Sennrich 2019): ``x / sqrt(mean(x**2) + epsilon) * scale``.

    >>> nn.rms_norm(np.array([3.0, 4.0]), epsilon=0.0) * np.sqrt(12.5)
    array([3., 4.])
    """
    x = _float(x, "rms_norm")
    axes = _reduced_axes(x, axis, "rms_norm")
    ms = tnp.mean(x * x, axis=axes, keepdims=True)
    y = x * ew.rsqrt(ms + epsilon)
    return y if scale is None else y * scale


def one_hot(x, num_classes, *, dtype=np.float64, axis=-1):
    """``x[..., None] == arange(num_classes)`` as ``dtype``, the new axis at ``axis``;
    an index outside ``[0, num_classes)`` gives a row of zeros (as ``jax.nn.one_hot``).

    >>> nn.one_hot(np.array([2, 0]), 3)
    array([[0., 0., 1.],
           [1., 0., 0.]])
    """
    hot = _one_hot_mask(x, num_classes, axis, "one_hot")
    return ew.convert_element_type(hot, dtypes.canonical(dtype))


def _one_hot_mask(labels, num_classes, axis, name):
    labels = P.asarray(labels)
    if P.is_weak(labels):
        labels = np.asarray(labels, dtypes.of_scalar(labels))
    if not dtypes.is_integer(_dt(labels)):
        raise DTypeError(f"class indices must be integers, got {_dt(labels).name}", op=name)
    num_classes = P.concrete_int(num_classes, name, "num_classes")
    shape = _shape(labels)
    rank = len(shape) + 1
    axis = P.axis_arg(axis, rank, name)
    out_shape = shape[:axis] + (num_classes,) + shape[axis:]
    classes = layout.broadcast_in_dim(layout.iota(_dt(labels), (num_classes,), 0),
                                      out_shape, (axis,))
    spread = layout.broadcast_in_dim(labels, out_shape,
                                     tuple(i for i in range(rank) if i != axis))
    return ew.eq(spread, classes)


# ---------------------------------------------------------------- losses

def softmax_cross_entropy(logits, labels, *, axis=-1):
    """Cross-entropy of ``softmax(logits)`` against ``labels``, one value per example
    (reduce it yourself, e.g. ``tnp.mean``).

    ``labels`` are either integer class indices (``logits``' shape without ``axis``; a label
    outside ``[0, n)`` gives NaN, not a silently wrong loss) or probabilities of
    ``logits``' shape. Zero-probability classes contribute nothing, even where the logit
    is ``-inf``.

    >>> nn.softmax_cross_entropy(np.array([[0.0, 0.0]]), np.array([1]))
    array([0.69314718])
    """
    logits = _float(logits, "softmax_cross_entropy")
    rank = len(_shape(logits))
    axis = P.axis_arg(axis, rank, "softmax_cross_entropy")
    labels = P.asarray(labels)
    if P.is_weak(labels):
        labels = np.asarray(labels, dtypes.of_scalar(labels))
    if dtypes.is_integer(_dt(labels)):
        if _shape(labels) != _shape(logits)[:axis] + _shape(logits)[axis + 1:]:
            raise ShapeError(f"integer labels need the logits' shape {_shape(logits)} without "
                             f"axis {axis}, got {_shape(labels)}", op="softmax_cross_entropy")
        # the class count as a value (a traced one when the axis is symbolic)
        valid = tnp.logical_and(labels >= 0, labels < _count(_shape(logits), (axis,), "n"))
        # a gather of one logit per example (not a one-hot mask: one pass less); invalid
        # labels read class 0 and their loss is NaN
        index = tnp.expand_dims(tnp.where(valid, labels, 0), axis)
        picked = tnp.squeeze(tnp.take_along_axis(logits, index, axis=axis), axis)
        return tnp.where(valid, logsumexp(logits, axis=axis) - picked, np.nan)
    logp = log_softmax(logits, axis=axis)
    labels = P.cast(labels, _dt(logits)) if not P.is_weak(labels) else labels
    nothing = labels == 0
    return -tnp.sum(labels * tnp.where(nothing, 0, logp), axis=axis)


def binary_cross_entropy_with_logits(logits, labels):
    """``-labels log sigmoid(logits) - (1 - labels) log(1 - sigmoid(logits))`` elementwise,
    computed as ``max(x, 0) - x * labels + log1p(exp(-|x|))`` (never overflows).

    >>> nn.binary_cross_entropy_with_logits(np.array([0.0]), np.array([1.0]))
    array([0.69314718])
    """
    x, z = floats("binary_cross_entropy_with_logits", logits, labels)
    pos = x > 0
    return (tnp.where(pos, x, 0) - x * z) + tnp.log1p(tnp.exp(-tnp.where(pos, x, -x)))


def mean_squared_error(predictions, targets, axis=None):
    """The mean of ``(predictions - targets)**2`` over ``axis`` (None: all axes).

    >>> nn.mean_squared_error(np.array([1.0, 2.0]), np.array([1.0, 4.0]))
    np.float64(2.0)
    """
    p, t = floats("mean_squared_error", predictions, targets)
    d = p - t
    return tnp.mean(d * d, axis=axis)


def huber_loss(predictions, targets, delta=1.0):
    """Huber's loss elementwise: ``d**2 / 2`` where ``|d| <= delta``, else
    ``delta * (|d| - delta / 2)``, for ``d = predictions - targets``.

    >>> nn.huber_loss(np.array([0.5, 3.0]), np.array([0.0, 0.0]))
    array([0.125, 2.5  ])
    """
    p, t = floats("huber_loss", predictions, targets)
    d = p - t
    a = tnp.abs(d)
    return tnp.where(a <= delta, d * d * 0.5, (a - delta * 0.5) * delta)


# ---------------------------------------------------------------- convolution and pooling
# Channel-last, as flax.linen and TensorFlow: inputs (batch..., spatial..., features).

def conv(x, kernel, strides=1, padding="SAME", *, lhs_dilation=None, rhs_dilation=None,
         feature_group_count=1):
    """Convolve the channel-last ``x`` (N, spatial..., C) with ``kernel``
    (spatial..., C / feature_group_count, O): ``lax.conv_general_dilated`` with
    ``NHWC``/``HWIO`` dimension numbers; ``strides`` an int or one per spatial dim.

    >>> nn.conv(np.ones((1, 5, 5, 2)), np.ones((3, 3, 2, 4))).shape
    (1, 5, 5, 4)
    """
    from ..lax import windows
    rank = len(_shape(x))
    letters = "HWDABEFGJKLMPQRSTUVXYZ"[:rank - 2]
    n_sp = rank - 2
    strides = (strides,) * n_sp if isinstance(strides, int) else tuple(strides)
    dn = ("N" + letters + "C", letters + "IO", "N" + letters + "C")
    return windows.conv_general_dilated(x, kernel, strides, padding, lhs_dilation,
                                        rhs_dilation, dn, feature_group_count)


def _pool(x, window_shape, strides, padding, name):
    """Window, strides and padding of a channel-last pool over all of ``x``'s axes: the
    leading (batch) axes and the last (features) have windows of 1."""
    window_shape = tuple(window_shape)
    rank, n_sp = len(_shape(x)), len(window_shape)
    if rank < n_sp + 1:
        raise ShapeError(f"an input of shape {_shape(x)} has no {n_sp} spatial axes before "
                         "its features axis", op=name)
    strides = window_shape if strides is None else (
        (strides,) * n_sp if isinstance(strides, int) else tuple(strides))
    lead = rank - n_sp - 1
    window = (1,) * lead + window_shape + (1,)
    steps = (1,) * lead + strides + (1,)
    if not isinstance(padding, str):
        padding = ((0, 0),) * lead + tuple(tuple(p) for p in padding) + ((0, 0),)
    return window, steps, padding


def max_pool(x, window_shape, strides=None, padding="VALID"):
    """The maximum of each window of the channel-last ``x`` (batch..., spatial..., C), as
    ``flax.linen.max_pool``; ``strides`` default to the window (non-overlapping).

    >>> nn.max_pool(np.arange(16.0).reshape(1, 4, 4, 1), (2, 2))[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    from ..lax import windows
    window, steps, padding = _pool(x, window_shape, strides, padding, "max_pool")
    x = P.asarray(x)
    lowest = -np.inf if dtypes.is_inexact(_dt(x)) else np.iinfo(_dt(x)).min
    return windows.reduce_window(x, lowest, "max", window, steps, padding)


def avg_pool(x, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """The mean of each window of the channel-last ``x``, as ``flax.linen.avg_pool``:
    padded elements count as zeros unless ``count_include_pad=False``.

    >>> nn.avg_pool(np.arange(16.0).reshape(1, 4, 4, 1), (2, 2))[0, :, :, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    from ..lax import windows
    window, steps, padding = _pool(x, window_shape, strides, padding, "avg_pool")
    x = _float(x, "avg_pool")
    total = windows.reduce_window(x, 0.0, "add", window, steps, padding)
    if count_include_pad or padding == "VALID":
        return total / math.prod(window)
    ones = tnp.ones(_shape(x), _dt(x))
    return total / windows.reduce_window(ones, 0.0, "add", window, steps, padding)


# ---------------------------------------------------------------- attention

def _as_4d(t):
    return tnp.reshape(t, (1,) * (4 - P.ndim_of(t)) + P.shape_of(t)) if P.ndim_of(t) < 4 else t


def _grouped(t, K, G, what):
    """A (B, N, T, S) bias or mask as (B, K, G, T, S), query head ``k * G + g`` reading
    key head ``k`` as JAX groups them; one head (N = 1) broadcasts to all."""
    tB, tN, tT, tS = P.shape_of(t)
    if tN == 1:
        return tnp.reshape(t, (tB, 1, 1, tT, tS))
    if tN != K * G:
        raise ShapeError(f"{what} has {tN} heads on axis -3; give 1 or the query's {K * G}",
                         op="dot_product_attention")
    return tnp.reshape(t, (tB, K, G, tT, tS))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """``softmax(query @ key^T * scale + bias, masked) @ value`` per head, as
    ``jax.nn.dot_product_attention``.

    ``query`` is (B, T, N, H) or (T, N, H), ``key`` and ``value`` (B, S, K, H): N query
    heads share K key/value heads in groups of N // K (grouped-query attention). ``bias``
    and the boolean ``mask`` broadcast to (B, N, T, S); ``is_causal`` lets query t see
    keys up to t, ``local_window_size=(left, right)`` keys within that band,
    ``query_seq_lengths``/``key_value_seq_lengths`` (B,) only the first so many. Masked
    logits become JAX's large negative number (a row masked throughout averages all
    values, as JAX's). ``scale`` defaults to ``1/sqrt(H)``. ``return_residual=True`` also
    returns the rows' logsumexp (B, T, N). The softmax runs in the inputs' dtype (JAX
    casts to float32 there: float64 inputs keep float64 here).

    >>> q = k = v = np.ones((1, 3, 2, 4))
    >>> nn.dot_product_attention(q, k, v, is_causal=True).shape
    (1, 3, 2, 4)
    """
    op = "dot_product_attention"
    if implementation not in (None, "xla"):
        raise UnsupportedError(f"implementation={implementation!r}: tf_numba has one "
                               "implementation (None or 'xla')", op=op)
    out_shape = P.shape_of(query)
    query, key, value = (_as_4d(P.asarray(t)) for t in (query, key, value))
    B, S, K, H = P.shape_of(key)
    if P.shape_of(value) != (B, S, K, H):
        raise ShapeError(f"value has shape {P.shape_of(value)}; the key's is {(B, S, K, H)}",
                         op=op)
    Bq, T, N, Hq = P.shape_of(query)
    if (Bq, Hq) != (B, H):
        raise ShapeError(f"query of shape {P.shape_of(query)} does not fit key of shape "
                         f"{(B, S, K, H)} (batch and head size must agree)", op=op)
    if N % K:
        raise ShapeError(f"the {N} query heads must be a multiple of the {K} key/value "
                         "heads", op=op)
    G = N // K
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    q = tnp.reshape(query, (B, T, K, G, H))
    logits = tnp.einsum("btkgh,bskh->bkgts", q, key) * scale
    if bias is not None:
        logits = logits + _grouped(_as_4d(P.asarray(bias)), K, G, "bias")
    keep = None

    def both(a, b):
        return b if a is None else tnp.logical_and(a, b)
    if mask is not None:
        keep = _grouped(_as_4d(P.asarray(mask)), K, G, "mask")
    t_pos, s_pos = np.arange(T)[:, None], np.arange(S)[None, :]
    if is_causal:
        keep = both(keep, t_pos >= s_pos)
    if local_window_size is not None:
        left, right = (local_window_size, local_window_size) \
            if isinstance(local_window_size, int) else local_window_size
        keep = both(keep, (t_pos <= s_pos + left) & (t_pos >= s_pos - right))
    if query_seq_lengths is not None:
        lengths = tnp.reshape(P.asarray(query_seq_lengths), (B, 1, 1, 1, 1))
        keep = both(keep, np.arange(T)[:, None] < lengths)
    if key_value_seq_lengths is not None:
        lengths = tnp.reshape(P.asarray(key_value_seq_lengths), (B, 1, 1, 1, 1))
        keep = both(keep, np.arange(S)[None, :] < lengths)
    if keep is not None:
        dt = P.dtype_of(logits)
        large_negative = -0.7 * min(np.finfo(dt).max, np.finfo(np.float32).max)
        logits = tnp.where(keep, logits, np.asarray(large_negative, dt))
    probs = softmax(logits, axis=-1)
    encoded = tnp.einsum("bkgts,bskh->btkgh", probs, value)
    if query_seq_lengths is not None:
        rows = np.arange(T)[None, :, None, None, None] < tnp.reshape(
            P.asarray(query_seq_lengths), (B, 1, 1, 1, 1))
        encoded = encoded * rows.astype(P.dtype_of(encoded))
    encoded = tnp.reshape(encoded, out_shape)
    if not return_residual:
        return encoded
    lse = tnp.transpose(logsumexp(logits, axis=-1), (0, 3, 1, 2))     # (B, T, K, G)
    return encoded, ew.stop_gradient(tnp.reshape(lse, out_shape[:-1]))


from . import initializers  # noqa: E402  (tf.nn.initializers, as jax.nn.initializers)
from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
