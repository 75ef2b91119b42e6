"""Parameter initializers as ``jax.nn.initializers``: an initializer is a function
``init(key, shape, dtype=None)`` of a ``tf.random`` key, and the builders
(``glorot_normal()``, ``variance_scaling(...)``) return one. ``dtype=None`` is float64, as
tf_numba's samplers (JAX's default under ``jax_enable_x64``); the draws are ``tf.random``'s,
so an initializer gives JAX's values for the same key.

>>> import tf_numba as tf
>>> from tf_numba.nn import initializers
>>> w = initializers.glorot_normal()(tf.random.key(0), (784, 512))
>>> b = initializers.zeros(tf.random.key(1), (512,))
"""
import math
import operator
import typing

import numpy as np

import tf_numba.numpy as tnp

from .. import random
from ..core import dtypes
from ..errors import ArgumentError, ShapeError

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
           "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
           "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
           "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]

# the standard deviation of a standard normal truncated to (-2, 2): variance_scaling divides
# by it so that its truncated draws have the variance it promises
_TRUNCATED_STDDEV = 0.87962566103423978
# JAX's divisor for a complex standard normal with its modulus truncated to 2. That
# modulus's true root mean square is sqrt(E|z|^2) = 0.96196 (|z|^2 is an exponential
# truncated at 4), so these draws have a variance 1.9% above scale / n; kept, so that the
# draws are JAX's
_COMPLEX_TRUNCATED_STDDEV = 0.95311164380491208


@typing.runtime_checkable
class Initializer(typing.Protocol):
    """What the builders return: ``init(key, shape, dtype=None) -> array``."""

    def __call__(self, key, shape, dtype=None):
        raise NotImplementedError


def _shape(shape, what):
    try:
        return (operator.index(shape),) if np.ndim(shape) == 0 else \
            tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ShapeError("shape must be a tuple of ints, got "
                         f"{shape!r}", op=f"nn.initializers.{what}") from None


def zeros(key, shape, dtype=None):
    """An array of zeros (``key`` is ignored).

    >>> initializers.zeros(key, (2, 3))
    array([[0., 0., 0.],
           [0., 0., 0.]])
    """
    return tnp.zeros(_shape(shape, "zeros"), dtypes.canonical(dtype))


def ones(key, shape, dtype=None):
    """An array of ones (``key`` is ignored).

    >>> initializers.ones(key, (2,))
    array([1., 1.])
    """
    return tnp.ones(_shape(shape, "ones"), dtypes.canonical(dtype))


def constant(value, dtype=None):
    """An initializer of arrays full of ``value`` (``dtype`` its default dtype).

    >>> initializers.constant(-7.0)(key, (2,))
    array([-7., -7.])
    """
    def init(key, shape, dtype=dtype):
        return tnp.full(_shape(shape, "constant"), value, dtypes.canonical(dtype))
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer of values uniform on ``[0, scale)``.

    >>> initializers.uniform(10.0)(key, (2, 3)).shape
    (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = dtypes.canonical(dtype)
        return random.uniform(key, _shape(shape, "uniform"), dtype) * np.asarray(scale, dtype)
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer of normal values of mean 0 and standard deviation ``stddev``.

    >>> initializers.normal(0.1)(key, (2, 3)).shape
    (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = dtypes.canonical(dtype)
        return random.normal(key, _shape(shape, "normal"), dtype) * np.asarray(stddev, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer of ``stddev`` times a standard normal truncated to ``(lower,
    upper)`` (the truncation narrows the spread below ``stddev``: ``variance_scaling``
    corrects for it, this does not, as JAX's).

    >>> initializers.truncated_normal(1.0)(key, (2, 3)).shape
    (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = dtypes.canonical(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape, "truncated_normal"),
                                       dtype) * np.asarray(stddev, dtype)
    return init


def _size(shape, axes):
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[a] for a in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """``(fan_in, fan_out)`` of a weight of ``shape``: the sizes of its input and output
    axes, each times the receptive field (the product of the axes that are neither input,
    output nor batch: a convolution kernel's spatial axes).

    >>> _compute_fans((3, 3, 16, 32))
    (144.0, 288.0)
    """
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ShapeError(f"a weight of shape {shape} has no input axis at -2: give "
                         "in_axis (and out_axis) explicitly, or a shape of rank 2 or more",
                         op="nn.initializers.variance_scaling")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


_DENOMINATORS = {"fan_in": lambda fan_in, fan_out: fan_in,
                 "fan_out": lambda fan_in, fan_out: fan_out,
                 "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
                 "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5}


def _complex_uniform(key, shape, dtype):
    """Uniform on the disk of radius sqrt(2) in the complex plane: mean 0, variance 1."""
    real = dtypes.real_part(dtype)
    key_r, key_theta = random.split(key)
    r = tnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = (2 * np.pi * random.uniform(key_theta, shape, real)).astype(dtype)
    return r * tnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex standard normal (variance 1) with its modulus truncated to ``upper``:
    the modulus by its inverse CDF ``sqrt(-log(1 - t))``, the phase uniform."""
    real = dtypes.real_part(dtype)
    key_r, key_theta = random.split(key)
    t = (1 - np.exp(np.asarray(-upper ** 2, real))) * random.uniform(key_r, shape, real)
    r = tnp.sqrt(-tnp.log1p(-t)).astype(dtype)
    theta = (2 * np.pi * random.uniform(key_theta, shape, real)).astype(dtype)
    return r * tnp.exp(1j * theta)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """An initializer of mean-0 values of variance ``scale / n``, ``n`` from ``mode``:
    ``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` (their mean) or ``"fan_geo_avg"`` (their
    geometric mean), the fans as ``_compute_fans`` counts them on ``in_axis``,
    ``out_axis`` and ``batch_axis``.

    ``distribution``: ``"truncated_normal"`` (truncated at two standard deviations, then
    scaled so the variance is still ``scale / n``), ``"normal"`` or ``"uniform"`` (on an
    interval; on a disk for a complex dtype).

    >>> he = initializers.variance_scaling(2.0, "fan_in", "truncated_normal")
    >>> he(key, (3, 3, 16, 32)).std()      # about sqrt(2 / (3 * 3 * 16))
    """
    if mode not in _DENOMINATORS:
        raise ArgumentError(f"mode must be one of {sorted(_DENOMINATORS)}, got {mode!r}",
                            op="nn.initializers.variance_scaling")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ArgumentError(f"distribution must be 'truncated_normal', 'normal' or "
                            f"'uniform', got {distribution!r}",
                            op="nn.initializers.variance_scaling")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape, "variance_scaling")
        dtype = dtypes.canonical(dtype)
        variance = np.asarray(scale / _DENOMINATORS[mode](
            *_compute_fans(shape, in_axis, out_axis, batch_axis)), dtype)
        complex_ = dtypes.is_complex(dtype)
        if distribution == "truncated_normal":
            if complex_:
                return (_complex_truncated_normal(key, 2, shape, dtype)
                        * (np.sqrt(variance) / np.asarray(_COMPLEX_TRUNCATED_STDDEV, dtype)))
            return random.truncated_normal(key, -2, 2, shape, dtype) * (
                np.sqrt(variance) / np.asarray(_TRUNCATED_STDDEV, dtype))
        if distribution == "normal":
            return random.normal(key, shape, dtype) * np.sqrt(variance)
        if complex_:
            return _complex_uniform(key, shape, dtype) * np.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * np.sqrt(3 * variance)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The Glorot (Xavier) uniform initializer, ``variance_scaling(1.0, "fan_avg", "uniform")``.
    From Glorot and Bengio 2010, "Understanding the difficulty of training deep feedforward
    neural networks"."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The Glorot (Xavier) normal initializer,
    ``variance_scaling(1.0, "fan_avg", "truncated_normal")``.
    From Glorot and Bengio 2010, "Understanding the difficulty of training deep feedforward
    neural networks"."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The LeCun uniform initializer, ``variance_scaling(1.0, "fan_in", "uniform")``.
    From LeCun et al. 1998, "Efficient BackProp", as used by Klambauer et al. 2017."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The LeCun normal initializer,
    ``variance_scaling(1.0, "fan_in", "truncated_normal")``.
    From LeCun et al. 1998, "Efficient BackProp", as used by Klambauer et al. 2017."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The He (Kaiming) uniform initializer, ``variance_scaling(2.0, "fan_in", "uniform")``.
    From He et al. 2015, "Delving deep into rectifiers"."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """The He (Kaiming) normal initializer,
    ``variance_scaling(2.0, "fan_in", "truncated_normal")``.
    From He et al. 2015, "Delving deep into rectifiers"."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of ``scale`` times a uniformly random (semi-)orthogonal matrix:
    the axis ``column_axis`` against all the others flattened, orthonormal along the
    shorter side (``random.orthogonal``).

    >>> w = initializers.orthogonal()(key, (4, 4))      # w @ w.T is the identity
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape, "orthogonal")
        dtype = dtypes.canonical(dtype)
        if len(shape) < 2:
            raise ShapeError(f"needs a shape of rank 2 or more, got {shape}",
                             op="nn.initializers.orthogonal")
        if 0 in shape:
            return tnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        q = random.orthogonal(key, math.prod(shape) // n_cols, (), dtype, n_cols)
        rest = tuple(np.delete(shape, column_axis).tolist())
        q = tnp.moveaxis(tnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return np.asarray(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of convolution kernels (1, 2 or 3 spatial axes, then in, out) that
    are zero but at the window's centre, where they hold an orthogonal matrix (Xiao et al.
    2018, "Dynamical isometry and a mean field theory of CNNs").

    >>> w = initializers.delta_orthogonal()(key, (3, 3, 4, 4))     # w[1, 1] orthogonal
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape, "delta_orthogonal")
        dtype = dtypes.canonical(dtype)
        if len(shape) not in (3, 4, 5):
            raise ShapeError(f"needs a kernel of rank 3, 4 or 5, got shape {shape}",
                             op="nn.initializers.delta_orthogonal")
        if shape[-1] < shape[-2]:
            raise ShapeError(f"needs fan_in <= fan_out (shape[-2] <= shape[-1]), got shape "
                             f"{shape}", op="nn.initializers.delta_orthogonal")
        centre = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        middle = tuple((k - 1) // 2 for k in shape[:-2])
        return tnp.at(tnp.zeros(shape, dtype))[middle].set(centre)
    return init


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
