"""Counter-based random numbers as ``jax.random``: Threefry-2x32 keys, split, fold_in and
samplers, the same bits as JAX's default generator.

A key is a plain ``(2,)`` int64 array holding two 32-bit words (tf_numba has no uint32;
``np.asarray(jax_key)`` is accepted and ``key.astype(np.uint32)`` is JAX's key data). A
sampler is a pure function of its key: the same key gives the same numbers eagerly, under
``jit`` (where Threefry is one elementwise primitive, ``ops.threefry``, fused into the
kernel) and under
``vmap`` over keys: the same bits for keys, ``bits``, ``uniform`` and the integer samplers;
samplers that take a ``log`` may differ in the last bit between eager and ``jit`` (NumPy's
``log`` against the compiled one, within an ulp). Reuse of a key gives the same numbers
again: ``split`` it.

>>> k = random.key(0)
>>> k, sub = random.split(k)
>>> x = random.normal(sub, (3,))          # float64 by default, as NumPy
>>> keys = random.split(k, 8)             # a (8, 2) array of keys; vmap over it

Keys, ``bits``, ``uniform`` on [0, 1), ``bernoulli``, ``randint``, ``permutation``,
``shuffle`` and ``choice`` give JAX's values to the bit (float64 as JAX with
``jax_enable_x64``, float32 as JAX's default); ``uniform`` on other bounds (XLA may fuse its
multiply-add), ``normal``, ``truncated_normal``, ``exponential``, ``gumbel``, ``laplace`` and
``logistic`` agree with JAX to an ulp or two (NumPy's ``log`` against XLA's), and
``categorical`` with it but where that ulp decides an argmax; ``gamma``, ``beta``,
``dirichlet``, ``t`` and ``poisson`` run rejection loops of their own.
The samplers JAX differentiates (uniform's bounds, the normal family, gamma and what is
built on it, by implicit differentiation) are differentiable.
"""
import functools
import math
import operator

import numpy as np

from . import numpy as tnp
from .core import dtypes
from .core.trace import Tracer
from .errors import ArgumentError, DTypeError, ShapeError
from .ops.bits import shift_right_logical
from .ops.elementwise import erf
from .ops.special import erf_inv, gammainc, lgamma
from .ops.threefry import threefry2x32

__all__ = ["PRNGKey", "ball", "bernoulli", "beta", "binomial", "bits", "categorical",
           "cauchy", "chisquare", "choice", "clone", "dirichlet", "double_sided_maxwell",
           "exponential", "f", "fold_in", "gamma", "generalized_normal", "geometric", "gumbel",
           "key", "key_data", "key_impl", "laplace", "loggamma", "logistic", "lognormal",
           "maxwell", "multinomial", "multivariate_normal", "normal", "orthogonal", "pareto",
           "permutation", "poisson", "rademacher", "randint", "rayleigh", "shuffle", "split",
           "t", "triangular", "truncated_normal", "uniform", "wald", "weibull_min",
           "wrap_key_data"]

_MASK = 0xFFFFFFFF


def _is_traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


def _key_words(key, what):
    """The two words of ``key`` as int64 NumPy scalars or tracers."""
    if _is_traced(key):
        if key.shape != (2,) or not dtypes.is_integer(key.dtype):
            raise _key_error(key, what)
        words = key.astype(np.int64)
        return words[0], words[1]
    arr = np.asarray(key)
    if arr.shape != (2,) or arr.dtype.kind not in "iu":
        raise _key_error(arr, what)
    words = arr.astype(np.int64)
    return words[0], words[1]


def _key_error(key, what):
    shape, dt = tuple(np.shape(key)), getattr(key, "dtype", type(key).__name__)
    hint = (" For a batch of keys (from split(key, n)), vmap over them: "
            f"tf.vmap(lambda k: random.{what}(k, ...))(keys).") if len(shape) > 1 else ""
    cls = DTypeError if shape == (2,) else ShapeError      # a float key, or a batch of them
    return cls(f"a key is a (2,) integer array from random.key or "
               f"random.split, got {dt} of shape {shape}.{hint}", op=f"random.{what}")


def _threefry(k0, k1, counts):
    """Threefry of the counters ``counts`` (their low words; the high ones are 0) under
    the key words ``(k0, k1)``: two int64 word arrays (values below 2**32)."""
    hashed = threefry2x32(k0, k1, 0, counts)
    return shift_right_logical(hashed, 32), tnp.bitwise_and(hashed, _MASK)


def _counts(shape, eager):
    """The low words of the counters 0..size-1 laid out in ``shape`` (JAX's
    ``iota_2x32_shape``; the high words are 0 below 2**32 values)."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise ShapeError(f"{size} values from one key is more than 2**32; split "
                         "the key and draw in parts", op="random")
    if eager:
        return np.arange(size, dtype=np.int64).reshape(shape)
    from .ops.layout import iota
    if not shape:
        return tnp.zeros((), np.int64)
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1]
    return functools.reduce(tnp.add, [iota(np.int64, shape, d) * int(s) if s != 1
                                      else iota(np.int64, shape, d)
                                      for d, s in enumerate(strides)])


def _hash_counts(key, shape, what):
    """Threefry of the counters of ``shape`` under ``key``: two int64 word arrays (values
    below 2**32)."""
    k0, k1 = _key_words(key, what)
    return _threefry(k0, k1, _counts(tuple(shape), not _is_traced(k0, k1)))


def _shape_of(shape, what):
    """``shape`` as a tuple of ints, each >= 0 (a float or negative length is an error, not
    a truncated or empty axis)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        dims = (-1,)
    if any(d < 0 for d in dims):
        raise ShapeError(f"shape must be a tuple of non-negative ints, got {shape!r}",
                         op=f"random.{what}")
    return dims


# ---------------------------------------------------------------- keys

def key(seed):
    """A key from an integer seed: the words ``(seed >> 32, seed & 0xFFFFFFFF)`` of its
    64-bit value, as ``jax.random.key``/``PRNGKey`` (with 64-bit seeds).

    >>> random.key(42)
    array([ 0, 42])
    """
    if _is_traced(seed):
        if not dtypes.is_integer(seed.dtype) or seed.shape != ():
            raise DTypeError(f"the seed is an integer scalar, got {seed.aval}",
                             op="random.key")
        return tnp.stack([tnp.bitwise_and(seed // (1 << 32), _MASK),
                          tnp.bitwise_and(seed, _MASK)])
    s = np.asarray(seed)
    if s.shape != () or s.dtype.kind not in "iu":
        raise DTypeError(f"the seed is an integer scalar, got {s.dtype} of shape "
                         f"{s.shape}", op="random.key")
    s = int(s)
    return np.array([(s >> 32) & _MASK, s & _MASK], np.int64)


PRNGKey = key


def split(key, num=2):
    """``num`` new keys (an int or a shape), as ``jax.random.split``: shape ``(*num, 2)``.

    >>> k1, k2 = random.split(random.key(0))
    """
    shape = _shape_of(num, "split")
    y0, y1 = _hash_counts(key, shape, "split")
    return tnp.stack([y0, y1], axis=len(shape))


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (a step, a layer index), as
    ``jax.random.fold_in``.

    >>> step_key = random.fold_in(key, step)
    """
    k0, k1 = _key_words(key, "fold_in")
    if _is_traced(data):
        data = data.astype(np.int64)        # the primitive hashes its low 32 bits
    else:
        d = np.asarray(data)
        if d.shape != () or d.dtype.kind not in "iu":
            raise DTypeError(f"data is an integer scalar, got {d.dtype} of "
                             f"shape {d.shape}", op="random.fold_in")
        data = np.int64(int(d) & _MASK)
    return tnp.stack(_threefry(k0, k1, data))


def bits(key, shape=()):
    """Uniform random 32-bit words (int64 values in ``[0, 2**32)``), ``jax.random.bits``."""
    y0, y1 = _hash_counts(key, _shape_of(shape, "bits"), "bits")
    return tnp.bitwise_xor(y0, y1)


# ---------------------------------------------------------------- continuous samplers

def _float_dtype(dtype, what):
    dt = dtypes.canonical(dtype)
    if dt not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"samples float32 or float64, got {dt.name}",
                         op=f"random.{what}")
    return dt


def _unit_floats(key, shape, dtype, what):
    """Floats in [0, 1) from the bits: the top 23 (float32) or 52 (float64) bits as the
    mantissa, JAX's construction (its ``1.m - 1`` bitcast is the exact product here)."""
    y0, y1 = _hash_counts(key, shape, what)
    if dtype == dtypes.float32:
        mantissa = shift_right_logical(tnp.bitwise_xor(y0, y1), 9)
        return mantissa.astype(np.float32) * np.float32(2.0 ** -23)
    mantissa = y0 * (1 << 20) + shift_right_logical(y1, 12)
    return mantissa.astype(np.float64) * 2.0 ** -52


def uniform(key, shape=(), dtype=np.float64, minval=0.0, maxval=1.0):
    """Uniform on ``[minval, maxval)``, as ``jax.random.uniform`` (differentiable in the
    bounds).

    >>> random.uniform(key, (2, 3), minval=-1.0, maxval=1.0)
    """
    dtype = _float_dtype(dtype, "uniform")
    shape = _shape_of(shape, "uniform")
    lo, hi = tnp.asarray(minval, dtype=dtype), tnp.asarray(maxval, dtype=dtype)
    floats = _unit_floats(key, shape, dtype, "uniform")
    return tnp.maximum(lo, floats * (hi - lo) + lo)


def normal(key, shape=(), dtype=np.float64):
    """Standard normal samples, as ``jax.random.normal``: ``sqrt(2) * erf_inv(u)`` for ``u``
    uniform on ``(-1, 1)``, with XLA's erf_inv (``ops.special.erf_inv``)."""
    dtype, shape = _float_dtype(dtype, "normal"), _shape_of(shape, "normal")
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform(key, shape, dtype, lo, 1.0)
    return tnp.asarray(np.sqrt(2.0), dtype=dtype) * erf_inv(u)


def _tiny(dtype):
    return float(np.finfo(dtype).tiny)


def truncated_normal(key, lower, upper, shape=None, dtype=np.float64):
    """Standard normal samples restricted to ``(lower, upper)``, as
    ``jax.random.truncated_normal`` (inverse CDF; differentiable in the bounds)."""
    dtype = _float_dtype(dtype, "truncated_normal")
    shape = _param_shape(shape, (lower, upper), "truncated_normal")
    sqrt2 = np.asarray(np.sqrt(2.0), dtype)
    lower, upper = tnp.asarray(lower, dtype=dtype), tnp.asarray(upper, dtype=dtype)
    u = uniform(key, shape, dtype, erf(lower / sqrt2), erf(upper / sqrt2))
    out = sqrt2 * erf_inv(u)
    # erfinv rounding may step out of the interval: back into its open interior
    return tnp.clip(out, tnp.nextafter(_stop(lower), np.asarray(np.inf, dtype)),
                    tnp.nextafter(_stop(upper), np.asarray(-np.inf, dtype)))


def _stop(x):
    from .api import stop_gradient
    return stop_gradient(x)


def _param_shape(shape, params, what):
    """``shape``, or the broadcast shape of the parameters when it is None (JAX's rule)."""
    if shape is None:
        return tuple(np.broadcast_shapes(*(np.shape(p) for p in params)))
    shape = _shape_of(shape, what)
    try:
        if np.broadcast_shapes(shape, *(np.shape(p) for p in params)) != shape:
            raise ValueError
    except ValueError:
        raise ShapeError("parameter shapes "
                         f"{[tuple(np.shape(p)) for p in params]} do not broadcast to the "
                         f"shape {shape}", op=f"random.{what}") from None
    return shape


def exponential(key, shape=(), dtype=np.float64):
    """Exponential samples of rate 1, ``-log1p(-u)``, as ``jax.random.exponential``."""
    dtype = _float_dtype(dtype, "exponential")
    return -tnp.log1p(-uniform(key, shape, dtype))


def gumbel(key, shape=(), dtype=np.float64):
    """Standard Gumbel samples, ``-log(-log(u))``, as ``jax.random.gumbel``."""
    dtype = _float_dtype(dtype, "gumbel")
    return -tnp.log(-tnp.log(uniform(key, shape, dtype, _tiny(dtype), 1.0)))


def laplace(key, shape=(), dtype=np.float64):
    """Standard Laplace samples, as ``jax.random.laplace``."""
    dtype = _float_dtype(dtype, "laplace")
    u = uniform(key, shape, dtype, -1.0 + float(np.finfo(dtype).epsneg), 1.0)
    return tnp.sign(u) * tnp.log1p(-tnp.abs(u))


def logistic(key, shape=(), dtype=np.float64):
    """Standard logistic samples, ``log(u / (1 - u))``, as ``jax.random.logistic``."""
    dtype = _float_dtype(dtype, "logistic")
    x = uniform(key, shape, dtype, _tiny(dtype), 1.0)
    return tnp.log(x) - tnp.log1p(-x)


def multivariate_normal(key, mean, cov, shape=None, dtype=np.float64, method="cholesky"):
    """Samples of ``N(mean, cov)`` (``mean`` ``(..., n)``, ``cov`` ``(..., n, n)``), as
    ``jax.random.multivariate_normal``: ``mean + factor @ z`` with ``factor factor^T = cov``
    from ``method`` "cholesky", "eigh" or "svd"; differentiable in mean and cov."""
    dtype = _float_dtype(dtype, "multivariate_normal")
    mean, cov = tnp.asarray(mean, dtype=dtype), tnp.asarray(cov, dtype=dtype)
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-2:] != (mean.shape[-1],) * 2:
        raise ShapeError(f"mean (..., n) and cov (..., n, n), got "
                         f"{tuple(mean.shape)} and {tuple(cov.shape)}",
                         op="random.multivariate_normal")
    batch = np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    shape = batch if shape is None else _shape_of(shape, "multivariate_normal")
    if method == "cholesky":
        factor = tnp.linalg.cholesky(cov)
    elif method == "eigh":
        w, v = tnp.linalg.eigh(cov)
        factor = v * tnp.sqrt(tnp.maximum(w, 0.0))[..., None, :]
    elif method == "svd":
        u, s, _ = tnp.linalg.svd(cov)
        factor = u * tnp.sqrt(s)[..., None, :]
    else:
        raise ArgumentError(f"method is 'cholesky', 'eigh' or 'svd', got {method!r}",
                            op="random.multivariate_normal")
    z = normal(key, tuple(shape) + tuple(mean.shape[-1:]), dtype)
    return mean + tnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key, n, shape=(), dtype=np.float64, m=None):
    """Matrices ``(*shape, n, m)`` uniform on the orthogonal group O(n) (``m`` defaults
    to ``n``; for ``n != m`` the shorter side is orthonormal), as ``jax.random.orthogonal``:
    the QR of a normal matrix, each column of Q signed by R's diagonal (Mezzadri 2007,
    "How to generate random matrices from the classical compact groups")."""
    dtype = _float_dtype(dtype, "orthogonal")
    m = n if m is None else m
    n, m = int(n), int(m)
    z = normal(key, _shape_of(shape, "orthogonal") + (max(n, m), min(n, m)), dtype)
    q, r = tnp.linalg.qr(z)
    q = q * tnp.expand_dims(tnp.sign(tnp.diagonal(r, axis1=-2, axis2=-1)), -2)
    return tnp.swapaxes(q, -1, -2) if n < m else q


# ---------------------------------------------------------------- discrete samplers

def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability ``p``: ``uniform(key, shape, dtype of p) < p``
    as ``jax.random.bernoulli`` (a Python float ``p`` is float64 here)."""
    p = tnp.asarray(p)
    dtype = p.dtype if dtypes.is_inexact(p.dtype) else np.float64
    shape = _param_shape(shape, (p,), "bernoulli")
    return uniform(key, shape, dtype) < p


def _mul_mod32(a, b):
    """``a * b mod 2**32`` for words ``a, b < 2**32`` without leaving int64: ``b`` in
    16-bit halves."""
    lo = a * tnp.bitwise_and(b, 0xFFFF)
    hi = tnp.bitwise_and(a * (b // (1 << 16)), 0xFFFF) * (1 << 16)
    return tnp.bitwise_and(lo + hi, _MASK)


def randint(key, shape, minval, maxval, dtype=np.int64):
    """Integers uniform on ``[minval, maxval)``, as ``jax.random.randint`` (JAX's values
    for int32; int64 draws use the same 32-bit scheme, so spans up to 2**32).

    Like JAX, it combines two 32-bit draws modulo the span (bias ~ span**2 / 2**64).
    """
    dt = dtypes.canonical(dtype)
    if not dtypes.is_integer(dt):
        raise DTypeError(f"needs an integer dtype, got {dt.name}",
                         op="random.randint")
    shape = _shape_of(shape, "randint")
    minval = tnp.asarray(minval).astype(np.int64)
    maxval = tnp.asarray(maxval).astype(np.int64)
    k1, k2 = split(key)
    higher, lower = bits(k1, shape), bits(k2, shape)
    span = tnp.where(maxval <= minval, 1, maxval - minval)
    multiplier = (1 << 16) % span
    multiplier = (multiplier * multiplier) % span
    offset = tnp.bitwise_and(_mul_mod32(higher % span, multiplier) + lower % span, _MASK)
    return (minval + offset % span).astype(dt)


def categorical(key, logits, axis=-1, shape=None):
    """Category indices drawn with probabilities ``softmax(logits)`` along ``axis`` (the
    Gumbel-max trick), as ``jax.random.categorical``."""
    logits = tnp.asarray(logits)
    if not dtypes.is_inexact(logits.dtype):
        logits = logits.astype(np.float64)
    ndim = logits.ndim
    axis = axis % ndim if ndim else 0
    batch = tuple(logits.shape[:axis]) + tuple(logits.shape[axis + 1:])
    shape = batch if shape is None else _shape_of(shape, "categorical")
    if tuple(shape[len(shape) - len(batch):]) != batch:
        raise ShapeError(f"shape {shape} must end with the logits' batch "
                         f"shape {batch}", op="random.categorical")
    prefix = tuple(shape[:len(shape) - len(batch)])
    draws = list(shape[len(prefix):])
    draws.insert(axis, logits.shape[axis])
    g = gumbel(key, prefix + tuple(draws), logits.dtype)
    return tnp.argmax(g + tnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape)),
                      axis=len(prefix) + axis)


def _shuffle(key, x, axis):
    """``x`` permuted along ``axis`` (each slice independently) by sorting on random words,
    enough rounds that ties are unlikely, as JAX's ``_shuffle``."""
    size = math.prod(x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = split(key)
        order = tnp.argsort(bits(subkey, tuple(x.shape)), axis=axis, kind="stable")
        x = tnp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (an int) or of ``x`` along ``axis`` (rows moved
    together, or each slice on its own with ``independent``), as
    ``jax.random.permutation``."""
    if np.ndim(x) == 0 and not isinstance(x, Tracer):
        if not isinstance(x, (int, np.integer)) or isinstance(x, bool):
            raise DTypeError(f"x is an integer (a length) or an array "
                             f"of at least one axis, got {type(x).__name__} {x!r}",
                             op="random.permutation")
        return _shuffle(key, tnp.arange(int(x)), 0)
    x = tnp.asarray(x)
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, tnp.arange(x.shape[axis]), 0)
    return tnp.take(x, order, axis=axis)


def shuffle(key, x, axis=0):
    """``x`` with each slice along ``axis`` permuted on its own (JAX's deprecated
    ``shuffle``: ``permutation(key, x, axis, independent=True)``)."""
    return permutation(key, x, axis, independent=True)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Draws from ``range(a)`` (an int) or from ``a`` along ``axis``, with or without
    replacement, optionally with probabilities ``p``, as ``jax.random.choice``."""
    shape = _shape_of(shape, "choice")
    scalar = np.ndim(a) == 0 and not isinstance(a, Tracer)
    arr = None if scalar else tnp.asarray(a)
    n = int(a) if scalar else arr.shape[axis % arr.ndim]
    if n <= 0:
        raise ArgumentError("a must be positive or non-empty", op="random.choice")
    draws = math.prod(shape)
    if not replace and draws > n:
        raise ArgumentError(f"cannot take {draws} samples without replacement from {n}",
                            op="random.choice")
    axis = 0 if scalar else axis % arr.ndim
    if p is None and replace:
        ind = randint(key, shape, 0, n)
    elif p is None:
        ind = permutation(key, n)[:draws] if scalar else None
        if ind is None:
            taken = permutation(key, arr, axis)
            return tnp.reshape(tnp.take(taken, tnp.arange(draws), axis=axis),
                               arr.shape[:axis] + shape + arr.shape[axis + 1:])
    else:
        p = tnp.asarray(p)
        if p.shape != (n,):
            raise ShapeError(f"p has shape {tuple(p.shape)}, the population "
                             f"{n}", op="random.choice")
        if replace:
            cumulative = tnp.cumsum(p)
            r = cumulative[-1] * (1 - uniform(key, shape, p.dtype))
            ind = tnp.searchsorted(cumulative, r)
        else:
            g = gumbel(key, (n,), p.dtype) + tnp.log(p)
            ind = tnp.argsort(-g, kind="stable")[:draws]
    if scalar:
        return tnp.reshape(ind, shape)
    taken = tnp.take(arr, tnp.reshape(ind, (-1,)), axis=axis)
    return tnp.reshape(taken, arr.shape[:axis] + shape + arr.shape[axis + 1:])


def cauchy(key, shape=(), dtype=np.float64):
    """Standard Cauchy samples, ``tan(pi (u - 1/2))``, as ``jax.random.cauchy``."""
    dtype = _float_dtype(dtype, "cauchy")
    u = uniform(key, shape, dtype, float(np.finfo(dtype).eps), 1.0)
    return tnp.tan(np.asarray(np.pi, dtype) * (u - 0.5))


def lognormal(key, sigma=1.0, shape=None, dtype=np.float64):
    """``exp(sigma * z)`` for standard normal ``z``, as ``jax.random.lognormal``."""
    dtype = _float_dtype(dtype, "lognormal")
    shape = _param_shape(shape, (sigma,), "lognormal")
    return tnp.exp(normal(key, shape, dtype) * tnp.asarray(sigma, dtype=dtype))


def pareto(key, b, shape=None, dtype=np.float64):
    """Pareto(b) samples on ``[1, inf)``, ``exp(e / b)`` for exponential ``e``, as
    ``jax.random.pareto``."""
    dtype = _float_dtype(dtype, "pareto")
    shape = _param_shape(shape, (b,), "pareto")
    return tnp.exp(exponential(key, shape, dtype) / tnp.asarray(b, dtype=dtype))


def rayleigh(key, scale, shape=None, dtype=np.float64):
    """Rayleigh(scale) samples, ``scale * sqrt(-2 log u)``, as ``jax.random.rayleigh``."""
    dtype = _float_dtype(dtype, "rayleigh")
    shape = _param_shape(shape, (scale,), "rayleigh")
    u = uniform(key, shape, dtype, _tiny(dtype), 1.0)
    return tnp.asarray(scale, dtype=dtype) * tnp.sqrt(-2 * tnp.log(u))


def weibull_min(key, scale, concentration, shape=(), dtype=np.float64):
    """Weibull samples, ``scale * (-log1p(-u)) ** (1 / concentration)``, as
    ``jax.random.weibull_min`` (the parameters broadcast against ``shape``)."""
    dtype = _float_dtype(dtype, "weibull_min")
    shape = tuple(np.broadcast_shapes(_shape_of(shape, "weibull_min"), np.shape(scale),
                                      np.shape(concentration)))
    u = uniform(key, shape, dtype)
    return (-tnp.log1p(-u)) ** (1.0 / tnp.asarray(concentration, dtype=dtype)) \
        * tnp.asarray(scale, dtype=dtype)


def wald(key, mean, shape=None, dtype=np.float64):
    """Wald (inverse Gaussian) samples of ``mean`` and shape 1 (Michael, Schucany and Haas
    1976), as ``jax.random.wald``."""
    dtype = _float_dtype(dtype, "wald")
    shape = _param_shape(shape, (mean,), "wald")
    k1, k2 = split(key)
    mean = tnp.broadcast_to(tnp.asarray(mean, dtype=dtype), shape)
    y = normal(k1, shape, dtype) ** 2
    z = uniform(k2, shape, dtype)
    x = mean + mean * mean * y / 2 - mean / 2 * tnp.sqrt(4 * mean * y + (mean * y) ** 2)
    return tnp.where(z <= mean / (mean + x), x, mean * mean / x)


def triangular(key, left, mode, right, shape=None, dtype=np.float64):
    """Triangular samples on ``[left, right]`` peaking at ``mode`` (inverse CDF), as
    ``jax.random.triangular``."""
    dtype = _float_dtype(dtype, "triangular")
    shape = _param_shape(shape, (left, mode, right), "triangular")
    left, mode, right = (tnp.broadcast_to(tnp.asarray(v, dtype=dtype), shape)
                         for v in (left, mode, right))
    u = uniform(key, shape, dtype)
    low = left + tnp.sqrt(u * (right - left) * (mode - left))
    high = right - tnp.sqrt((1 - u) * (right - left) * (right - mode))
    return tnp.where(u < (mode - left) / (right - left), low, high)


def rademacher(key, shape=(), dtype=np.int64):
    """-1 or 1 with equal probability, as ``jax.random.rademacher``."""
    return (2 * bernoulli(key, 0.5, _shape_of(shape, "rademacher")).astype(np.int64)
            - 1).astype(dtypes.canonical(dtype))


def maxwell(key, shape=(), dtype=np.float64):
    """One-sided Maxwell samples: the length of a 3-D standard normal vector, as
    ``jax.random.maxwell``."""
    dtype = _float_dtype(dtype, "maxwell")
    z = normal(key, _shape_of(shape, "maxwell") + (3,), dtype)
    return tnp.sqrt(tnp.sum(z * z, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=np.float64):
    """``loc + scale * sign * maxwell`` with a Rademacher sign, as
    ``jax.random.double_sided_maxwell`` (the sample shape is ``shape`` followed by the
    parameters' broadcast shape, JAX's rule)."""
    dtype = _float_dtype(dtype, "double_sided_maxwell")
    params = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (_shape_of(shape, "double_sided_maxwell") or params) + params
    k_m, k_r = split(key)
    sign = rademacher(k_r, shape, np.int64).astype(dtype)
    return sign * maxwell(k_m, shape, dtype) * tnp.asarray(scale, dtype=dtype) \
        + tnp.asarray(loc, dtype=dtype)


def geometric(key, p, shape=None, dtype=np.int64):
    """The number of trials up to the first success of probability ``p`` (1, 2, ...),
    ``floor(log u / log1p(-p)) + 1``, as ``jax.random.geometric``."""
    p = tnp.asarray(p)
    fdt = p.dtype if dtypes.is_inexact(p.dtype) else np.float64
    shape = _param_shape(shape, (p,), "geometric")
    u = uniform(key, shape, fdt)
    u = tnp.where(u == 0, 1, u)
    return (tnp.floor(tnp.log(u) / tnp.log1p(-p.astype(fdt))) + 1).astype(
        dtypes.canonical(dtype))


# ---------------------------------------------------------------- rejection samplers

_MAX_ROUNDS = 1000   # rejection rounds; each accepts with probability > 0.95 (gamma)


def _rejection(key, shape, propose, dtype):
    """Rejection sampling over the whole array: round i draws a proposal for every element
    from ``fold_in(key, i)``; the first accepted one of each element is kept.
    ``propose(key) -> (value, accepted)``."""
    from .lax import while_loop

    def cond(state):
        i, _, done = state
        return tnp.logical_and(i < _MAX_ROUNDS, tnp.logical_not(tnp.all(done)))

    def body(state):
        i, value, done = state
        proposal, ok = propose(fold_in(key, i))
        take = tnp.logical_and(ok, tnp.logical_not(done))
        return i + 1, tnp.where(take, proposal, value), tnp.logical_or(done, ok)
    init = (tnp.asarray(0), tnp.zeros(shape, dtype), tnp.zeros(shape, np.bool_))
    return while_loop(cond, body, init)[1]


def _marsaglia_tsang(key, a, shape, dtype):
    """Gamma(a) for a >= 1 (Marsaglia and Tsang 2000, "A simple method for generating gamma
    variables"); smaller a are boosted by the caller."""
    d = a - 1.0 / 3.0
    c = 1.0 / tnp.sqrt(9.0 * d)

    def propose(k):
        kx, ku = split(k)
        x = normal(kx, shape, dtype)
        v = (1.0 + c * x) ** 3
        u = uniform(ku, shape, dtype)
        safe_v = tnp.where(v > 0, v, 1.0)
        ok = tnp.logical_and(v > 0, tnp.log(u) < 0.5 * x * x + d - d * safe_v
                             + d * tnp.log(safe_v))
        return d * safe_v, ok
    return _rejection(key, shape, propose, dtype)


def gamma(key, a, shape=None, dtype=np.float64):
    """Gamma(a, 1) samples, as ``jax.random.gamma``: Marsaglia-Tsang rejection, and a
    derivative in ``a`` by implicit differentiation of the CDF (``exp`` of ``loggamma``'s,
    at least the smallest normal float)."""
    dtype = _float_dtype(dtype, "gamma")
    return tnp.maximum(tnp.exp(loggamma(key, a, shape, dtype)), _tiny(dtype))


def beta(key, a, b, shape=None, dtype=np.float64):
    """Beta(a, b) samples, ``X / (X + Y)`` for X ~ Gamma(a), Y ~ Gamma(b)."""
    dtype = _float_dtype(dtype, "beta")
    shape = _param_shape(shape, (a, b), "beta")
    ka, kb = split(key)
    x, y = gamma(ka, a, shape, dtype), gamma(kb, b, shape, dtype)
    return x / (x + y)


def dirichlet(key, alpha, shape=None, dtype=np.float64):
    """Dirichlet(alpha) samples (``alpha`` ``(..., k)``): normalized Gamma(alpha_i)
    samples; ``shape`` is the batch shape, as ``jax.random.dirichlet``."""
    dtype = _float_dtype(dtype, "dirichlet")
    alpha = tnp.asarray(alpha, dtype=dtype)
    if alpha.ndim < 1:
        raise ShapeError("alpha needs at least one axis (..., k)",
                         op="random.dirichlet")
    batch = tuple(alpha.shape[:-1]) if shape is None else _shape_of(shape, "dirichlet")
    g = gamma(key, alpha, batch + tuple(alpha.shape[-1:]), dtype)
    return g / tnp.sum(g, axis=-1, keepdims=True)


def t(key, df, shape=(), dtype=np.float64):
    """Student's t samples with ``df`` degrees of freedom: ``z * sqrt(df/2 / g)`` for ``z``
    normal and ``g`` ~ Gamma(df/2), as ``jax.random.t``."""
    dtype = _float_dtype(dtype, "t")
    shape = _param_shape(shape, (df,), "t")
    df = tnp.asarray(df, dtype=dtype)
    k_n, k_g = split(key)
    half_df = df / 2
    return normal(k_n, shape, dtype) * tnp.sqrt(half_df / gamma(k_g, half_df, shape, dtype))


def _log_gamma_impl(key, a):
    """log Gamma(a) samples, the boost for a < 1 taken in log space (``log x + log(u) / a``)
    so samples far below the smallest float keep their value."""
    shape, dtype = tuple(a.shape), a.dtype
    k_loop, k_boost = split(key)
    small = a < 1
    x = _marsaglia_tsang(k_loop, tnp.where(small, a + 1, a), shape, dtype)
    log_u = tnp.log(uniform(k_boost, shape, dtype, _tiny(dtype), 1.0))
    return tnp.log(x) + tnp.where(small, log_u / tnp.where(small, a, 1.0), 0.0)


@functools.cache
def _log_gamma_sample_fn():
    """The log-gamma sampler with its implicit derivative in ``a`` (made at first use: it
    imports the custom derivative machinery)."""
    from .custom_derivatives import custom_jvp

    @custom_jvp
    def log_gamma_sample(key, a):
        return _log_gamma_impl(key, a)

    @log_gamma_sample.defjvp
    def log_gamma_sample_jvp(primals, tangents):
        # Implicit reparameterization (Figurnov et al. 2018): F(x; a) = u held fixed, so
        # dx/da = -(dF/da) / (dF/dx), dF/dx the gamma density; d log x / da = (dx/da) / x,
        # the density times x taken in log space
        from .api import jvp, stop_gradient
        key, a = primals
        log_x = log_gamma_sample(key, a)
        ls, as_ = stop_gradient(log_x), stop_gradient(a)
        dF = jvp(lambda a_: gammainc(a_, tnp.exp(ls)), (as_,), (tangents[1],))[1]
        return log_x, -dF * tnp.exp(tnp.exp(ls) + lgamma(as_) - as_ * ls)
    return log_gamma_sample


def loggamma(key, a, shape=None, dtype=np.float64):
    """``log`` of Gamma(a) samples, accurate where the samples themselves underflow (a far
    below 1), as ``jax.random.loggamma``; differentiable in ``a``."""
    dtype = _float_dtype(dtype, "loggamma")
    shape = _param_shape(shape, (a,), "loggamma")
    a = tnp.broadcast_to(tnp.asarray(a, dtype=dtype), shape)
    # a <= 0 (or NaN) has no distribution: NaN there, as JAX gives; the sampler runs on
    # a = 1 in its place (each element draws from its own bits, so the others' are kept)
    valid = a > 0
    samples = _log_gamma_sample_fn()(key, tnp.where(valid, a, 1.0))
    return tnp.where(valid, samples, np.nan)


def chisquare(key, df, shape=None, dtype=np.float64):
    """Chi-square samples with ``df`` degrees of freedom, ``2 Gamma(df / 2)``, as
    ``jax.random.chisquare``."""
    dtype = _float_dtype(dtype, "chisquare")
    shape = _param_shape(shape, (df,), "chisquare")
    return 2 * tnp.exp(loggamma(key, tnp.asarray(df, dtype=dtype) / 2, shape, dtype))


def f(key, dfnum, dfden, shape=None, dtype=np.float64):
    """F(dfnum, dfden) samples, a ratio of scaled chi-squares, as ``jax.random.f``."""
    dtype = _float_dtype(dtype, "f")
    shape = _param_shape(shape, (dfnum, dfden), "f")
    dfnum, dfden = tnp.asarray(dfnum, dtype=dtype), tnp.asarray(dfden, dtype=dtype)
    k_den, k_num = split(key)
    return (chisquare(k_num, dfnum, shape, dtype) / dfnum) \
        / (chisquare(k_den, dfden, shape, dtype) / dfden)


def generalized_normal(key, p, shape=(), dtype=np.float64):
    """Samples of density proportional to ``exp(-|x|**p)``: a Rademacher sign times
    ``Gamma(1/p) ** (1/p)``, as ``jax.random.generalized_normal``."""
    dtype = _float_dtype(dtype, "generalized_normal")
    shape = _shape_of(shape, "generalized_normal")
    k_g, k_r = split(key)
    g = gamma(k_g, 1.0 / p, shape, dtype)
    return rademacher(k_r, shape, np.int64).astype(dtype) * g ** (1.0 / p)


def ball(key, d, p=2, shape=(), dtype=np.float64):
    """Points uniform in the ``d``-dimensional unit ``p``-norm ball (Barthe et al. 2005),
    shape ``shape + (d,)``, as ``jax.random.ball``."""
    dtype = _float_dtype(dtype, "ball")
    shape = _shape_of(shape, "ball")
    k_g, k_e = split(key)
    g = generalized_normal(k_g, p, shape + (int(d),), dtype)
    e = exponential(k_e, shape, dtype)
    return g / ((tnp.sum(tnp.abs(g) ** p, axis=-1) + e) ** (1.0 / p))[..., None]


def _binomial_inversion(key, n, p, shape):
    """Binomial(n, p) for small ``n p``: the number of geometric waiting times that fit in
    ``n`` trials."""
    from .lax import while_loop
    log1m_p = tnp.log1p(-p)

    def cond(state):
        i, _, total = state
        return tnp.logical_and(i < 10 * _MAX_ROUNDS, tnp.any(total <= n))

    def body(state):
        i, count, total = state
        count = tnp.where(total <= n, count + 1, count)
        u = uniform(fold_in(key, i), shape, np.float64, _tiny(np.float64), 1.0)
        return i + 1, count, total + tnp.ceil(tnp.log(u) / log1m_p)
    init = (tnp.asarray(0), tnp.zeros(shape, np.float64), tnp.zeros(shape, np.float64))
    return while_loop(cond, body, init)[1] - 1


def _binomial_btrs(key, n, p, shape):
    """Binomial(n, p) for ``n p >= 10``, ``p <= 1/2``: Hormann's transformed rejection with
    squeeze (BTRS, "The generation of binomial random variates", 1993), accepting on the
    exact log ratio of probabilities."""
    spq = tnp.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    alpha = (2.83 + 5.1 / b) * spq
    v_r = 0.92 - 4.2 / b
    m = tnp.floor((n + 1) * p)
    log_odds = tnp.log(p) - tnp.log1p(-p)
    h = lgamma(m + 1) + lgamma(n - m + 1)

    def propose(k):
        ku, kv = split(k)
        u = uniform(ku, shape) - 0.5
        v = uniform(kv, shape, np.float64, _tiny(np.float64), 1.0)
        us = 0.5 - tnp.abs(u)
        kk = tnp.floor((2 * a / us + b) * u + n * p + 0.43)
        inside = tnp.logical_and(kk >= 0, kk <= n)
        ks = tnp.where(inside, kk, m)
        squeeze = tnp.logical_and(us >= 0.07, v <= v_r)
        log_v = tnp.log(v * alpha / (a / (us * us) + b))
        exact = log_v <= h - lgamma(ks + 1) - lgamma(n - ks + 1) + (ks - m) * log_odds
        return ks, tnp.logical_and(inside, tnp.logical_or(squeeze, exact))
    return _rejection(key, shape, propose, np.float64)


def binomial(key, n, p, shape=None, dtype=np.float64):
    """Binomial(n, p) counts (as floats, JAX's default), as ``jax.random.binomial``:
    inversion for ``n min(p, 1-p) < 10``, BTRS rejection above; NaN for ``p`` outside
    ``[0, 1]`` or ``n < 0``."""
    dtype = _float_dtype(dtype, "binomial")
    shape = _param_shape(shape, (n, p), "binomial")
    n = tnp.broadcast_to(tnp.asarray(n, dtype=np.float64), shape)
    p = tnp.broadcast_to(tnp.asarray(p, dtype=np.float64), shape)
    valid = tnp.logical_and(tnp.logical_and(p >= 0, p <= 1), n >= 0)
    flip = p > 0.5
    q = tnp.where(valid, tnp.where(flip, 1 - p, p), 0.5)
    never = q == 0                  # (no waiting time ends: sampled on 1/2, then 0)
    q = tnp.where(never, 0.5, q)
    n_ok = tnp.where(valid, tnp.floor(n), 1.0)
    small = n_ok * q < 10
    k_inv, k_btrs = split(key)
    count = tnp.where(
        small,
        _binomial_inversion(k_inv, tnp.where(small, n_ok, 1.0), tnp.where(small, q, 0.5),
                            shape),
        _binomial_btrs(k_btrs, tnp.where(small, 100.0, n_ok), tnp.where(small, 0.5, q),
                       shape))
    count = tnp.where(never, 0.0, count)
    count = tnp.where(flip, n_ok - count, count)
    return tnp.where(valid, count, np.nan).astype(dtype)


def multinomial(key, n, p, *, shape=None, dtype=np.float64, unroll=1):
    """Counts of ``n`` draws over the outcomes of probabilities ``p`` (last axis), one
    conditional binomial per outcome, as ``jax.random.multinomial``; ``shape`` is the
    result's (ending with the outcomes' axis)."""
    from .lax import scan
    dtype = _float_dtype(dtype, "multinomial")
    p = tnp.asarray(p, dtype=np.float64)
    shape = tuple(p.shape) if shape is None else _shape_of(shape, "multinomial")
    n = tnp.broadcast_to(tnp.asarray(n, dtype=np.float64), shape[:-1])
    p = tnp.moveaxis(tnp.broadcast_to(p, shape), -1, 0)
    remaining = tnp.flip(tnp.cumsum(tnp.flip(p, 0), axis=0), 0)
    ratios = tnp.clip(p / tnp.where(remaining == 0, 1, remaining), 0, 1)

    def step(left, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, left, ratio, dtype=np.float64)
        return left - count, count
    _, counts = scan(step, n, (ratios, split(key, shape[-1])), unroll=unroll)
    return tnp.moveaxis(counts, 0, -1).astype(dtype)


# ---------------------------------------------------------------- keys as JAX's typed keys

def key_data(keys):
    """The words of ``keys``: the keys themselves, ``(..., 2)`` int64 arrays of 32-bit
    words (``jax.random.key_data`` gives them as uint32, which tf_numba does not have)."""
    return tnp.asarray(keys)


def wrap_key_data(key_bits_array, *, impl=None):
    """Keys from their words (``jax.random.wrap_key_data``): a ``(..., 2)`` array of 32-bit
    words, JAX's uint32 key data included, as tf_numba's int64 keys."""
    if impl not in (None, "threefry2x32"):
        raise DTypeError(f"impl={impl!r}: tf_numba's keys are threefry2x32 keys",
                         op="random.wrap_key_data")
    data = tnp.asarray(key_bits_array)
    if data.ndim < 1 or data.shape[-1] != 2:
        raise ShapeError(f"key data has shape {tuple(data.shape)}; keys are (..., 2) words",
                         op="random.wrap_key_data")
    return data.astype(np.int64)


def key_impl(keys):
    """The generator of ``keys``: ``'threefry2x32'``, JAX's default."""
    return "threefry2x32"


def clone(key):
    """``key`` itself (``jax.random.clone``: a copy for reuse, which only JAX's key-reuse
    checker tells apart)."""
    return key


def poisson(key, lam, shape=None, dtype=np.int64):
    """Poisson(lam) counts, as ``jax.random.poisson``: Knuth's product of uniforms for
    ``lam < 10``, Hormann's transformed rejection (PTRS, 1993) above."""
    dt = dtypes.canonical(dtype)
    shape = _param_shape(shape, (lam,), "poisson")
    lam = tnp.broadcast_to(tnp.asarray(lam, dtype=np.float64), shape)
    k_small, k_large = split(key)
    small = lam < 10
    return tnp.where(small, _poisson_knuth(k_small, tnp.where(small, lam, 1.0), shape),
                     _poisson_ptrs(k_large, tnp.where(small, 10.0, lam), shape)).astype(dt)


def _poisson_knuth(key, lam, shape):
    from .lax import while_loop
    limit = tnp.exp(-lam)

    def cond(state):
        i, _, prod = state
        return tnp.logical_and(i < 10 * _MAX_ROUNDS, tnp.any(prod > limit))

    def body(state):
        i, k, prod = state
        k = tnp.where(prod > limit, k + 1, k)
        return i + 1, k, prod * uniform(fold_in(key, i), shape)
    init = (tnp.asarray(0), tnp.zeros(shape, np.float64), tnp.ones(shape, np.float64))
    return while_loop(cond, body, init)[1] - 1


def _poisson_ptrs(key, lam, shape):
    log_lam = tnp.log(lam)
    b = 0.931 + 2.53 * tnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(k):
        ku, kv = split(k)
        u = uniform(ku, shape) - 0.5
        v = uniform(kv, shape)
        us = 0.5 - tnp.abs(u)
        kk = tnp.floor((2 * a / us + b) * u + lam + 0.43)
        s = tnp.log(v * inv_alpha / (a / (us * us) + b))
        t_ = -lam + kk * log_lam - lgamma(kk + 1)
        accept1 = tnp.logical_and(us >= 0.07, v <= v_r)
        reject = tnp.logical_or(kk < 0, tnp.logical_and(us < 0.013, v > us))
        accept2 = s <= t_
        ok = tnp.logical_or(accept1, tnp.logical_and(tnp.logical_not(reject), accept2))
        return kk, ok
    return _rejection(key, shape, propose, np.float64)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
