"""``pure_callback``: a Python function called from a program on the values it runs with,
as ``jax.pure_callback``.

The call is one equation (``pure_callback``) whose outputs have the shapes and dtypes the
caller declares; it runs eagerly at once, under ``jit`` between the compiled kernels, and
under ``vmap`` as ``vmap_method`` says (``"sequential"``: once per batch element;
``"expand_dims"``: once, unbatched arguments given a leading axis of size 1;
``"broadcast_all"``: once, every argument broadcast to the batch). As in JAX it has no
derivative: wrap it in ``custom_jvp`` or ``custom_vjp`` to give it one. Being pure, two
equal calls may be merged and an unused one dropped.

>>> f = tf.jit(lambda x: tf.pure_callback(np.sinc, tf.ShapeDtypeStruct(x.shape, x.dtype), x))
>>> f(np.array([0.0, 0.5]))
array([1.        , 0.63661977])
"""
import numpy as np

from .core import dtypes, pytree
from .core.ir import ShapedArray
from .core.primitive import Primitive, register
from .errors import ArgumentError, ShapeError

__all__ = ["pure_callback"]

VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


class _Callback:
    """The user's function with the trees it is called with and returns: a parameter of
    the equation, fingerprinted by identity (two functions of one name are two callbacks)."""

    def __init__(self, fn, in_tree, out_tree, result_avals, kwargs):
        self.fn, self.in_tree, self.out_tree = fn, in_tree, out_tree
        self.result_avals, self.kwargs = result_avals, kwargs

    def raw(self, *values):
        """The function's output leaves and tree, unchecked."""
        return pytree.flatten(self.fn(*pytree.unflatten(self.in_tree, values), **self.kwargs))

    def __call__(self, *values):
        out_leaves, tree = self.raw(*values)
        if tree != self.out_tree:
            raise ShapeError(f"{_name(self.fn)} returned a tree of structure {tree}; "
                             f"result_shape_dtypes declares {self.out_tree}",
                             op="pure_callback")
        out = []
        for i, (x, aval) in enumerate(zip(out_leaves, self.result_avals)):
            x = np.asarray(x)
            if x.shape != aval.shape:
                raise ShapeError(f"{_name(self.fn)} returned shape {x.shape} for output {i}; "
                                 f"result_shape_dtypes declares {aval.shape}",
                                 op="pure_callback")
            out.append(x.astype(aval.dtype, copy=False))
        return out

    def fingerprint(self):
        return f"callback({_name(self.fn)}@{id(self.fn):x})"


def _name(fn):
    return getattr(fn, "__qualname__", None) or repr(fn)


def _avals(*avals, callback, vmap_method):
    return tuple(callback.result_avals)


def _impl(*values, callback, vmap_method):
    return callback(*values)


pure_callback_p = Primitive("pure_callback", _avals, _impl, multiple_results=True)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """``callback(*args, **kwargs)`` called on the values ``args`` have when the program
    runs, its result declared by ``result_shape_dtypes`` (a pytree of objects with
    ``.shape`` and ``.dtype``, e.g. ``tf.ShapeDtypeStruct``), as ``jax.pure_callback``.
    ``vmap_method`` says how it batches (see the module docstring); ``sharding`` is taken
    and changes nothing on one device.

    >>> tf.pure_callback(lambda x: x + 1, tf.ShapeDtypeStruct((), np.float64), 1.0)
    array(2.)
    """
    if vmap_method not in VMAP_METHODS:
        raise ArgumentError(f"vmap_method={vmap_method!r}; one of {VMAP_METHODS[1:]}",
                            op="pure_callback")
    leaves, in_tree = pytree.flatten(args)
    shapes, out_tree = pytree.flatten(result_shape_dtypes)
    result_avals = []
    for s in shapes:
        if not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise ArgumentError(f"result_shape_dtypes holds {s!r}; give objects with .shape "
                                "and .dtype (tf.ShapeDtypeStruct(shape, dtype))",
                                op="pure_callback")
        result_avals.append(ShapedArray(tuple(s.shape), dtypes.canonical(s.dtype)))
    wrapped = _Callback(callback, in_tree, out_tree, tuple(result_avals), kwargs)
    outs = pure_callback_p.bind(*leaves, callback=wrapped, vmap_method=vmap_method)
    return pytree.unflatten(out_tree, outs)


# ---------------------------------------------------------------- batching

class _Batched:
    """A callback run on batched values as ``vmap_method`` says; batch axes at 0."""

    def __init__(self, inner, dims, size, method):
        # a callback batched twice calls the inner batched one per element of this batch
        if not isinstance(inner, _Callback):
            method = "sequential"
        self.inner, self.dims, self.size, self.method = inner, dims, size, method
        self.result_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype)
                                  for a in inner.result_avals)

    def __call__(self, *values):
        values = [np.moveaxis(v, d, 0) if d is not None else np.asarray(v)
                  for v, d in zip(values, self.dims)]
        if self.method in ("sequential", "sequential_unrolled"):
            rows = [self.inner(*[v[i] if d is not None else v
                                 for v, d in zip(values, self.dims)])
                    for i in range(self.size)]
            return [np.stack([r[k] for r in rows]) if rows else
                    np.zeros(a.shape, a.dtype) for k, a in enumerate(self.result_avals)]
        if self.method == "expand_dims":
            values = [v if d is not None else v[None] for v, d in zip(values, self.dims)]
        else:   # broadcast_all
            values = [v if d is not None else np.broadcast_to(v, (self.size,) + v.shape)
                      for v, d in zip(values, self.dims)]
        out = self.inner.raw(*values)[0]
        result = []
        for i, (x, aval) in enumerate(zip(out, self.result_avals)):
            x = np.asarray(x)
            if self.method == "expand_dims" and x.shape[:1] == (1,) and self.size != 1:
                x = np.broadcast_to(x, (self.size,) + x.shape[1:])
            if x.shape != aval.shape:
                raise ShapeError(f"{_name(self.inner.fn)} called with vmap_method="
                                 f"{self.method!r} returned shape {x.shape} for output {i}; "
                                 f"the batch needs {aval.shape}", op="pure_callback")
            result.append(x.astype(aval.dtype, copy=False))
        return result

    def fingerprint(self):
        return f"vmap({self.inner.fingerprint()}, {self.dims}, {self.size}, {self.method})"


def _batch(args, dims, *, callback, vmap_method):
    from .transforms.batching import axis_size_of
    if vmap_method in (None, "legacy_vectorized"):
        raise ArgumentError(f"vmap of a pure_callback needs vmap_method: 'sequential' (call "
                            f"{_name(callback.fn)} once per element), 'expand_dims' or "
                            "'broadcast_all' (once, on the batch)", op="pure_callback")
    size = axis_size_of(args, dims)
    batched = _Batched(callback, tuple(dims), size, vmap_method)
    outs = pure_callback_p.bind(*args, callback=batched, vmap_method=vmap_method)
    return outs, [0] * len(outs)


register("batch", pure_callback_p, _batch)

from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
