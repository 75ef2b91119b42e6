"""NumPy's functional-programming tools: ``vectorize``, ``apply_along_axis`` and
``piecewise``, built on ``vmap`` and ``where`` so that they trace, differentiate and
compile like any other function (the function is traced once, not called per element).

>>> tnp.vectorize(lambda a, b: a * b + 1)(np.arange(3.0), 2.0)
array([1., 3., 5.])
"""
import functools
import math
import re

import numpy as np

from ..errors import ShapeError, TfNumbaError
from ..ops import layout
from . import _promote as P

__all__ = ["vectorize", "apply_along_axis", "piecewise", "apply_over_axes"]

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def _parse_signature(signature):
    """``"(m,n),(n)->(m)"`` as ([("m", "n"), ("n",)], [("m",)])."""
    if not _SIGNATURE.match(signature):
        raise TfNumbaError(f"signature {signature!r} is not of the form "
                           "'(m,n),(n)->(m)'", op="vectorize")
    ins, outs = signature.split("->")
    parse = lambda side: [tuple(d.strip() for d in group.split(",") if d.strip())   # noqa: E731
                          for group in re.findall(r"\(([^)]*)\)", side)]
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``np.vectorize`` as ``jax.numpy.vectorize``: ``pyfunc`` written for scalars (or for
    the core dims of ``signature``) applied over the broadcast loop dims by ``vmap``.
    ``excluded`` names positional indices or keywords passed through unchanged.

    >>> tnp.vectorize(lambda x, y: tnp.dot(x, y), signature="(n),(n)->()")(
    ...     np.ones((4, 3)), np.arange(3.0))
    array([3., 3., 3., 3.])
    """
    from ..api import vmap
    ins_core, outs_core = _parse_signature(signature) if signature else (None, None)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        fixed_kw = {k: v for k, v in kwargs.items() if k in excluded}
        var_kw = [k for k in kwargs if k not in excluded]
        positions = [i for i in range(len(args)) if i not in excluded]
        operands = [P.as_array(args[i]) for i in positions] + [P.as_array(kwargs[k])
                                                               for k in var_kw]
        core = ins_core or [()] * len(operands)
        if len(core) != len(operands):
            raise TfNumbaError(f"the signature {signature!r} names {len(core)} "
                               f"inputs, the call passes {len(operands)}", op="vectorize")
        sizes, loops = {}, []
        for x, dims in zip(operands, core):
            shape = P.shape_of(x)
            if len(shape) < len(dims):
                raise ShapeError(f"an input of shape {shape} has fewer than the "
                                 f"{len(dims)} core dims {dims} of {signature!r}",
                                 op="vectorize")
            for name, n in zip(dims, shape[len(shape) - len(dims):]):
                if sizes.setdefault(name, n) != n:
                    raise ShapeError(f"core dim {name!r} is {sizes[name]} in one "
                                     f"input and {n} in another", op="vectorize")
            loops.append(shape[:len(shape) - len(dims)])
        loop = np.broadcast_shapes(*loops) if loops else ()
        count = math.prod(loop)
        flat = []
        for x, dims in zip(operands, core):
            tail = P.shape_of(x)[len(P.shape_of(x)) - len(dims):]
            flat.append(layout.reshape(P.broadcast_to(x, loop + tail), (count,) + tail))

        def one(*xs):
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            kw = dict(fixed_kw, **dict(zip(var_kw, xs[len(positions):])))
            return pyfunc(*full, **kw)
        out = vmap(one)(*flat) if flat else pyfunc(*args, **kwargs)
        multiple = isinstance(out, tuple)
        outs = list(out) if multiple else [out]
        shaped = [layout.reshape(o, loop + P.shape_of(o)[1:]) for o in outs] if flat else outs
        return tuple(shaped) if multiple else shaped[0]
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis`` (``vmap`` over the
    other axes); its result's dims replace ``axis``, as in ``np.apply_along_axis``.

    >>> tnp.apply_along_axis(lambda v: v[::-1], 1, np.arange(6.0).reshape(2, 3))
    array([[2., 1., 0.],
           [5., 4., 3.]])
    """
    from ..api import vmap
    from . import manipulation
    arr = P.as_array(arr)
    shape = P.shape_of(arr)
    axis = P.axis_arg(axis, len(shape), "apply_along_axis")
    moved = manipulation.moveaxis(arr, axis, -1)
    rest = P.shape_of(moved)[:-1]
    rows = layout.reshape(moved, (math.prod(rest), shape[axis]))
    out = vmap(lambda v: P.as_array(func1d(v, *args, **kwargs)))(rows)
    core = P.shape_of(out)[1:]
    out = layout.reshape(out, rest + core)
    # the result's dims go where ``axis`` was
    order = (list(range(axis)) + list(range(len(rest), len(rest) + len(core)))
             + list(range(axis, len(rest))))
    return manipulation.transpose(out, order)


def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise``: where ``condlist[k]`` holds, ``funclist[k]`` (a function of ``x``
    or a value); a final extra entry of ``funclist`` covers where no condition holds
    (else 0). Later conditions win where several hold. Every function is evaluated on all
    of ``x`` and the results chosen by ``where`` (so a function must not fail outside its
    piece; its derivative there is discarded).

    >>> tnp.piecewise(np.array([-2.0, 3.0]), [np.array([True, False])], [lambda v: -v, 1.0])
    array([2., 1.])
    """
    from . import creation, math as tmath
    x = P.as_array(x)
    if not isinstance(condlist, (list, tuple)) or (condlist and P.shape_of(condlist[0]) == ()
                                                    and P.shape_of(x) != ()):
        condlist = [condlist]
    conds = [P.as_array(c) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise TfNumbaError(f"funclist needs {n} or {n + 1} entries for {n} "
                           f"conditions, got {len(funclist)}", op="piecewise")

    def value(f):
        return f(x, *args, **kw) if callable(f) else f
    if len(funclist) == n + 1:
        none = conds[0]
        for c in conds[1:]:
            none = tmath.logical_or(none, c)
        out = tmath.where(none, creation.zeros_like(x), value(funclist[-1]))
    else:
        out = creation.zeros_like(x)
    for c, f in zip(conds, funclist[:n]):
        out = tmath.where(c, value(f), out)
    return P.cast(out, P.dtype_of(x)) if P.shape_of(out) == P.shape_of(x) else out


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each of ``axes`` in turn, each result given back its
    reduced axis (``expand_dims``) when ``func`` drops it, as ``numpy.apply_over_axes``.

    >>> tnp.apply_over_axes(tnp.sum, np.ones((2, 3)), [0, 1])
    array([[6.]])
    """
    from . import manipulation
    out = P.as_array(a)
    for axis in ([axes] if isinstance(axes, int) else axes):
        result = P.as_array(func(out, axis))
        if len(P.shape_of(result)) == len(P.shape_of(out)) - 1:
            result = manipulation.expand_dims(result, axis)
        elif len(P.shape_of(result)) != len(P.shape_of(out)):
            raise ShapeError("function is not returning an array of the correct shape",
                             op="apply_over_axes")
        out = result
    return out
