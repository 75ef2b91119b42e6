"""Neural network layers as ``jax.example_libraries.stax``: a layer is a pair
``(init_fun, apply_fun)``. ``init_fun(key, input_shape)`` returns ``(output_shape,
params)``; ``apply_fun(params, inputs, **kwargs)`` returns the outputs (``rng=key`` for the
layers that draw, as ``Dropout``). Constructors are CamelCase (``Dense(10)``); layers that
take no arguments are pairs already (``Relu``, ``Flatten``). ``serial`` and ``parallel``
combine layers into a layer.

>>> import tf_numba as tf
>>> from tf_numba.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(10),
...                                   stax.LogSoftmax)
>>> out_shape, params = init_fun(tf.random.key(0), (-1, 784))
>>> logits = apply_fun(params, x)
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from .. import lax, random
from ..errors import ArgumentError
from ..nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus,
                  standardize)
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense",
           "Dropout", "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu",
           "GeneralConv", "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax",
           "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
           "elementwise", "glorot", "logsoftmax", "parallel", "randn", "serial",
           "shape_dependent",
           # the activations and initializers JAX's stax module offers by name too
           "elu", "gelu", "glorot_normal", "leaky_relu", "log_softmax", "normal", "ones",
           "relu", "selu", "sigmoid", "softmax", "softplus", "standardize", "zeros"]

# the older names stax keeps
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# ---------------------------------------------------------------- layers with parameters

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer, ``inputs @ W + b`` with ``W`` of shape ``(in, out_dim)``.

    >>> out_shape, (W, b) = Dense(10)[0](key, (-1, 784))      # (-1, 10)
    """
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return tnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(specs, out_chan, filter_shape, input_shape):
    """The kernel's shape in the order of its spec: ``O`` out_chan, ``I`` the input's
    feature count, the spatial letters ``filter_shape`` in turn."""
    lhs_spec, rhs_spec, _ = specs
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(spatial) for c in rhs_spec]


def _conv_layer(output_shape_of, convolve, dimension_numbers, out_chan, filter_shape,
                strides, padding, W_init, b_init):
    """A convolution layer from its output-shape rule and its operation."""
    _, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return convolve(inputs, W, strides, padding, dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution layer (``lax.conv_general_dilated`` plus a bias) with
    ``dimension_numbers`` such as ``("NHWC", "HWIO", "NHWC")``, ``out_chan`` output
    features and a kernel of spatial shape ``filter_shape``; the kernel is Glorot normal
    over its I and O axes, the bias normal(1e-6).

    >>> init_fun, apply_fun = GeneralConv(("NCHW", "OIHW", "NCHW"), 16, (3, 3), padding="SAME")
    """
    return _conv_layer(lax.conv_general_shape_tuple, lax.conv_general_dilated,
                       dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution layer (``lax.conv_transpose`` plus a bias), with
    ``GeneralConv``'s arguments.

    >>> init_fun, apply_fun = GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), 8, (2, 2), (2, 2))
    """
    return _conv_layer(lax.conv_transpose_shape_tuple, lax.conv_transpose, dimension_numbers,
                       out_chan, filter_shape, strides, padding, W_init, b_init)


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
         b_init=normal(1e-6)):
    """A 2-D convolution layer on ``NHWC`` inputs with an ``HWIO`` kernel
    (``GeneralConv``).

    >>> init_fun, apply_fun = Conv(32, (3, 3), padding="SAME")
    """
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                    b_init=normal(1e-6)):
    """A 1-D transposed convolution layer on ``NHC`` inputs (``GeneralConvTranspose``)."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                  b_init=normal(1e-6)):
    """A 2-D transposed convolution layer on ``NHWC`` inputs (``GeneralConvTranspose``)."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization (Ioffe and Szegedy 2015) over ``axis`` of the batch it is
    given (no running averages, as JAX's): ``gamma * standardize(x) + beta``, with
    ``beta`` and ``gamma`` (``()`` when ``center`` or ``scale`` is off) of the shape of
    the axes not normalized.

    >>> init_fun, apply_fun = BatchNorm()        # NHWC inputs: one (beta, gamma) per channel
    """
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # the parameters lack the normalized axes: size-1 axes there broadcast them
        spread = tuple(None if i in axis else slice(None) for i in range(tnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[spread] * z
        if center:
            z = z + beta[spread]
        return z
    return init_fun, apply_fun


# ---------------------------------------------------------------- elementwise layers

def elementwise(fun, **fun_kwargs):
    """A layer without parameters that applies ``fun(inputs, **fun_kwargs)``.

    >>> Swish = elementwise(tf.nn.silu)
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(tnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(tnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ---------------------------------------------------------------- pooling

def _with_unit_axes(values, axes):
    """``values`` (one per spatial axis) with a 1 inserted at each of ``axes``."""
    values = tuple(values)
    for i in sorted(axes):
        values = values[:i] + (1,) + values[i:]
    return values


def _non_spatial_axes(spec, ndim):
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _window_sizes(inputs, window_shape, strides, padding, spec):
    """How many elements of ``inputs`` each window holds (fewer at a padded border), with
    size-1 batch and feature axes: ``AvgPool`` divides its sums by it."""
    ndim = tnp.ndim(inputs)
    skip = _non_spatial_axes(spec, ndim)
    spatial = tuple(inputs.shape[i] for i in range(ndim) if i not in skip)
    counts = lax.reduce_window(tnp.ones(spatial, inputs.dtype), 0.0, lax.add, window_shape,
                               strides, padding)
    return tnp.expand_dims(counts, sorted(skip))


def _pooling_layer(reducer, init_val, window_shape, strides, padding, spec,
                   normalize=False):
    spatial_window = tuple(window_shape)
    spatial_strides = tuple(strides or (1,) * len(spatial_window))
    skip = _non_spatial_axes(spec, len(spatial_window) + 2)
    window = _with_unit_axes(spatial_window, skip)
    steps = _with_unit_axes(spatial_strides, skip)

    def init_fun(rng, input_shape):
        return lax.reduce_window_shape_tuple(input_shape, window, steps, padding), ()

    def apply_fun(params, inputs, **kwargs):
        out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
        if normalize:
            out = out / _window_sizes(inputs, spatial_window, spatial_strides, padding, spec)
        return out
    return init_fun, apply_fun


def MaxPool(window_shape, strides=None, padding="VALID", spec=None):
    """A max pooling layer over windows of ``window_shape`` (the spatial axes) every
    ``strides`` (default 1), ``padding`` 'VALID', 'SAME' or pairs; inputs ``NHWC`` unless
    ``spec`` names the axes (``"NCHW"``).

    >>> init_fun, apply_fun = MaxPool((2, 2), strides=(2, 2))
    """
    return _pooling_layer(lax.max, -np.inf, window_shape, strides, padding, spec)


def SumPool(window_shape, strides=None, padding="VALID", spec=None):
    """A sum pooling layer, with ``MaxPool``'s arguments."""
    return _pooling_layer(lax.add, 0.0, window_shape, strides, padding, spec)


def AvgPool(window_shape, strides=None, padding="VALID", spec=None):
    """A mean pooling layer, with ``MaxPool``'s arguments; a window at a padded border
    averages only the elements it holds."""
    return _pooling_layer(lax.add, 0.0, window_shape, strides, padding, spec, normalize=True)


# ---------------------------------------------------------------- shape and routing layers

def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return tnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()
Identity = elementwise(lambda x: x)


def FanOut(num):
    """A layer that passes its input on as a list of ``num`` copies (into ``parallel``).

    >>> block = serial(FanOut(2), parallel(Dense(8), Identity), FanInSum)
    """
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs[1:], inputs[0])
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):
    """A layer that concatenates its list of inputs along ``axis``.

    >>> block = serial(FanOut(2), parallel(Dense(8), Dense(4)), FanInConcat())
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return tnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Dropout (Srivastava et al. 2014), as JAX's: in ``mode="train"`` each input is kept
    with probability ``rate`` (JAX's meaning of it: the keep rate) and scaled by
    ``1 / rate``, else zeroed; ``apply_fun`` needs ``rng=key``. Any other mode passes the
    inputs through.

    >>> out = apply_fun(params, x, rng=tf.random.key(1))
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ArgumentError("the Dropout layer draws: call apply_fun(params, inputs, "
                                "rng=key) with a key from tf.random.key or "
                                "tf.random.split", op="stax.Dropout")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, tnp.shape(inputs))
        return tnp.where(keep, inputs / rate, 0)
    return init_fun, apply_fun


# ---------------------------------------------------------------- combinators

def serial(*layers):
    """The layers one after another: each ``init_fun`` gets its own key and the previous
    output shape, each ``apply_fun`` its own key split from ``rng``.

    >>> init_fun, apply_fun = serial(Dense(128), Relu, Dense(10), LogSoftmax)
    """
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs, len(apply_funs))
        for fun, param, rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def _layer_keys(kwargs, n):
    """One key per layer from the ``rng`` in ``kwargs`` (taken out of it), or Nones."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, n) if rng is not None else (None,) * n


def parallel(*layers):
    """The layers side by side on a list of inputs, one each, giving a list of outputs
    (between ``FanOut`` and ``FanInSum`` or ``FanInConcat``).

    >>> init_fun, apply_fun = parallel(Dense(8), Identity)
    """
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        keys = random.split(rng, len(init_funs))
        shapes_and_params = [init(k, shape) for init, k, shape
                             in zip(init_funs, keys, input_shape)]
        return tuple(zip(*shapes_and_params)) if shapes_and_params else ((), ())

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_keys(kwargs, len(apply_funs))
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built once its input shape is known: ``make_layer(input_shape)`` returns
    the ``(init_fun, apply_fun)`` pair to use.

    >>> Head = shape_dependent(lambda shape: Dense(shape[-1]))
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(tnp.shape(inputs))[1](params, inputs, **kwargs)
    return init_fun, apply_fun


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
