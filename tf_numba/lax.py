"""Structured control flow, as in ``jax.lax``: cond, switch, while_loop, fori_loop, scan, and
the ``checkpoint`` (remat) decorator; convolutions and windowed reductions
(``conv_general_dilated``, ``reduce_window``, ...) come from ``windows.py``.

The functions given to them are traced once into sub-programs of one primitive (see
``ops/control.py``), so they are differentiable (forward and reverse, any order, reverse
mode through ``while_loop`` included), vectorize under ``vmap``, and under ``jit`` the
loop runs inside the compiled kernel. Carries, operands, ``xs`` and outputs are pytrees.

>>> from tf_numba import lax
>>> lax.fori_loop(0, 5, lambda i, x: x * 2.0, 1.0)
array(32.)
"""
import builtins
import functools
import numbers

import numpy as np

from .core import dtypes, pytree
from .core.ir import ShapedArray, Var, aval_of_value
from .core.shapes import normalize_axis
from .core.trace import Tracer, user_source
from .errors import ShapeError, TfNumbaError
from .ops import contraction, control
from .ops.contraction import check_precision
from .ops import elementwise as ew
from .ops import indexing, layout
from .ops.contraction import Precision
from .windows import (ConvDimensionNumbers, add, conv, conv_dimension_numbers,
                      conv_general_dilated, conv_general_permutations, conv_general_shape_tuple,
                      conv_shape_tuple, conv_transpose, conv_transpose_shape_tuple, max, min,
                      mul, padtype_to_pads, reduce_window, reduce_window_shape_tuple)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "checkpoint",
           "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_transpose_shape_tuple", "padtype_to_pads", "reduce_window",
           "reduce_window_shape_tuple", "add", "max", "min", "mul",
           "select", "map", "associative_scan", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "Precision", "dot", "dot_general"]


def _leaf(x):
    if isinstance(x, Tracer) or isinstance(x, np.ndarray):
        return x
    return np.asarray(x, aval_of_value(x).dtype)


def _aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of_value(x)


def _flat(tree):
    leaves, treedef = pytree.flatten(tree)
    return [_leaf(x) for x in leaves], treedef


def _trace(fn, in_tree, avals, spread=True):
    """Trace ``fn`` on pytree inputs (the tuple ``in_tree`` spread into arguments, or one
    argument): (closed program, leading operands, output treedef)."""
    trees = {}

    def flat(*xs):
        tree = pytree.unflatten(in_tree, xs)
        out = fn(*tree) if spread else fn(tree)
        leaves, trees["out"] = pytree.flatten(out)
        return leaves
    program, lead = control.trace_program(flat, avals)
    return program, lead, trees["out"]


def _join_leading(traced):
    """Branches with their own leading operands, made to share one signature."""
    operands = [x for _, lead in traced for x in lead]
    programs = []
    for k, (program, lead) in enumerate(traced):
        invars = []
        for j, (other, other_lead) in enumerate(traced):
            head = other.invars[:len(other_lead)]
            invars += list(head) if j == k else [Var(v.aval) for v in head]
        programs.append(program.replace(invars=invars + list(program.invars[len(lead):])))
    return programs, operands


def _branches(fns, operands, what):
    leaves, in_tree = _flat(tuple(operands))
    avals = [_aval(x) for x in leaves]
    traced, out_tree = [], None
    for k, fn in enumerate(fns):
        program, lead, tree = _trace(fn, in_tree, avals)
        if out_tree is not None and tree != out_tree:
            raise TfNumbaError(f"branch {k} returns a {tree}, branch 0 a {out_tree}; "
                               "every branch must return the same structure",
                               op=what, source=user_source())
        out_tree = tree
        traced.append((program, lead))
    programs, lead = _join_leading(traced)
    return programs, lead, leaves, out_tree


def switch(index, branches, *operands):
    """``branches[index](*operands)``, the index clamped to ``[0, len(branches) - 1]``.

    >>> switch(1, [lambda x: x + 1, lambda x: x * 10], 2.0)
    array(20.)
    """
    branches = list(branches)
    if not branches:
        raise TfNumbaError("needs at least one branch", op="switch", source=user_source())
    index = _leaf(index)
    if not dtypes.is_integer(_aval(index).dtype) or _aval(index).shape != ():
        raise TfNumbaError(f"needs an integer scalar index, got {_aval(index)}",
                           op="switch", source=user_source())
    index = ew.convert_element_type(index, dtypes.int32)
    programs, lead, leaves, out_tree = _branches(branches, operands, "switch")
    outs = control.cond_p.bind(index, *lead, *leaves, branches=tuple(programs))
    return pytree.unflatten(out_tree, outs)


def cond(pred, true_fun, false_fun, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; ``pred`` is a
    scalar (bool, or a number compared with 0), possibly traced.

    >>> cond(np.float64(3.0) > 2, lambda x: x * 2, lambda x: -x, 1.5)
    array(3.)
    """
    pred = _leaf(pred)
    aval = _aval(pred)
    if aval.shape != ():
        raise TfNumbaError(f"needs a scalar predicate, got {aval}; use tnp.where for "
                           "an elementwise choice", op="cond", source=user_source())
    if aval.dtype != dtypes.bool_:
        pred = ew.ne(pred, np.zeros((), aval.dtype))
    index = ew.convert_element_type(pred, dtypes.int32)
    programs, lead, leaves, out_tree = _branches([false_fun, true_fun], operands, "cond")
    outs = control.cond_p.bind(index, *lead, *leaves, branches=tuple(programs))
    return pytree.unflatten(out_tree, outs)


def while_loop(cond_fun, body_fun, init_val):
    """``while cond_fun(val): val = body_fun(val)``; returns the final ``val``.

    Differentiable in forward and reverse mode: reverse mode records the carried values of
    every iteration (memory linear in the number of iterations) and runs the backward pass
    over them.

    >>> while_loop(lambda x: x < 10, lambda x: x * 2, 1)
    array(16)
    """
    leaves, tree = _flat(init_val)
    avals = [_aval(x) for x in leaves]
    cond_prog, cond_lead, cond_tree = _trace(cond_fun, tree, avals, spread=False)
    if cond_tree.num_leaves != 1 or cond_prog.out_avals[0].shape != () \
            or cond_prog.out_avals[0].dtype != dtypes.bool_:
        raise TfNumbaError(f"cond_fun must return a bool scalar, got {list(cond_prog.out_avals)}",
                           op="while_loop", source=user_source())
    body_prog, body_lead, body_tree = _trace(body_fun, tree, avals, spread=False)
    _check_carry(tree, body_tree, avals, body_prog.out_avals, "while_loop", "body_fun")
    outs = control.while_bind(cond_lead, body_lead, leaves, cond_prog, body_prog)
    return pytree.unflatten(tree, outs)


def _check_carry(tree, out_tree, avals, out_avals, op, what):
    if out_tree != tree:
        raise TfNumbaError(f"{what} must return the carry's structure {tree}, got {out_tree}",
                           op=op, source=user_source())
    for k, (a, b) in enumerate(zip(avals, out_avals)):
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            raise ShapeError(f"{what} returns carry leaf {k} as {b}, but it enters the loop as "
                             f"{a}; a carry keeps its shape and dtype (cast the initial "
                             "value, e.g. 0.0 instead of 0)", op=op, source=user_source())


def _concrete_int(x):
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    if isinstance(x, np.integer):
        return int(x)
    return None


def fori_loop(lower, upper, body_fun, init_val):
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns the final ``val``.

    With concrete bounds it is a ``scan`` of ``upper - lower`` steps (reverse mode stores
    one set of residuals per step); with traced bounds, a ``while_loop``.

    >>> fori_loop(0, 4, lambda i, s: s + i, 0)
    array(6)
    """
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        def step(carry, _):
            i, val = carry
            return (ew.add(i, np.int64(1)), body_fun(i, val)), None
        (_, val), _ = scan(step, (np.int64(lo), init_val), None, length=builtins.max(hi - lo, 0))
        return val
    lower = ew.convert_element_type(_leaf(lower), dtypes.int64)
    upper = ew.convert_element_type(_leaf(upper), dtypes.int64)

    def loop_cond(carry):
        return ew.lt(carry[0], carry[1])

    def loop_body(carry):
        i, n, val = carry
        return ew.add(i, np.int64(1)), n, body_fun(i, val)
    return while_loop(loop_cond, loop_body, (lower, upper, init_val))[2]


def scan(f, init, xs, length=None, reverse=False):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``, as ``jax.lax.scan``. ``xs`` may be None with ``length``.

    >>> scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
    (array(6.), array([0., 0., 2., 9.]))
    """
    carry, carry_tree = _flat(init)
    x_leaves, x_tree = _flat(xs)
    lengths = {_aval(x).shape[0] if _aval(x).shape else None for x in x_leaves}
    if None in lengths:
        raise ShapeError("every xs leaf needs a leading axis to scan over",
                         op="scan", source=user_source())
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ShapeError(f"xs leaves (and length) of different lengths "
                         f"{sorted(builtins.map(str, lengths))}" if lengths else
                         "needs xs or a length", op="scan", source=user_source())
    n = lengths.pop()
    carry_avals = [_aval(c) for c in carry]
    x_avals = [ShapedArray(_aval(x).shape[1:], _aval(x).dtype) for x in x_leaves]
    trees = {}

    def flat(*a):
        c = pytree.unflatten(carry_tree, a[:len(carry)])
        x = pytree.unflatten(x_tree, a[len(carry):])
        out = f(c, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TfNumbaError("the scanned function must return a pair (carry, y)",
                               op="scan", source=user_source())
        c_leaves, trees["carry"] = pytree.flatten(out[0])
        y_leaves, trees["y"] = pytree.flatten(out[1])
        return c_leaves + y_leaves
    body, lead = control.trace_program(flat, carry_avals + x_avals)
    _check_carry(carry_tree, trees["carry"], carry_avals,
                 body.out_avals[:len(carry)], "scan", "the scanned function")
    outs = control.scan_bind(lead, carry, x_leaves, body, n, reverse)
    return (pytree.unflatten(carry_tree, outs[:len(carry)]),
            pytree.unflatten(trees["y"], outs[len(carry):]))


def checkpoint(fn):
    """Rematerialize ``fn`` in reverse mode: its intermediate values are not stored for the
    backward pass but recomputed from its inputs there (``jax.checkpoint``).

    >>> g = tf.grad(lambda x: tnp.sum(checkpoint(tnp.sin)(x)))
    """
    @functools.wraps(fn)
    def wrapped(*args):
        leaves, tree = _flat(args)
        program, lead, out_tree = _trace(fn, tree, [_aval(x) for x in leaves])
        outs = control.checkpoint_p.bind(*lead, *leaves, body=program)
        return pytree.unflatten(out_tree, outs)
    return wrapped


remat = checkpoint


# ---------------------------------------------------------------- JAX's other lax names

def select(pred, on_true, on_false):
    """``on_true`` where the bool ``pred`` holds, else ``on_false`` (``jax.lax.select``: no
    broadcasting but of a rank-0 ``pred``; the branches share one dtype).

    >>> select(np.array([True, False]), np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([1., 4.])
    """
    return ew.select(_leaf(pred), _leaf(on_true), _leaf(on_false))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """The general contraction ``jax.lax.dot_general``: ``dimension_numbers =
    ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, output axes batch, lhs
    free, rhs free; the operands promoted to one dtype, accumulated in
    ``preferred_element_type`` when given; ``precision`` (a ``Precision``) is accepted and
    means nothing on a CPU.

    >>> dot_general(np.ones((5, 2, 3)), np.ones((5, 3, 4)), (((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    from .numpy import _promote as P
    check_precision(precision, "dot_general")
    a, b = P.asarray(lhs), P.asarray(rhs)
    dt = P.result_type(a, b)
    return contraction.dot_general(P.cast(a, dt), P.cast(b, dt), dimension_numbers,
                                   preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """The vector/matrix product ``jax.lax.dot`` of operands of rank 1 or 2: ``lhs``'s last
    axis contracted with ``rhs``'s first (``dot_general`` for other ranks).

    >>> dot(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    la, ra = _aval(_leaf(lhs)), _aval(_leaf(rhs))
    if not (1 <= la.ndim <= 2 and 1 <= ra.ndim <= 2) or la.shape[-1] != ra.shape[0]:
        raise ShapeError(f"lax.dot multiplies vectors and matrices of matching inner sizes, "
                         f"got shapes {tuple(la.shape)} and {tuple(ra.shape)}; use "
                         "lax.dot_general with dimension_numbers for other ranks",
                         op="dot", source=user_source())
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def map(f, xs, *, batch_size=None):  # noqa: A001 - jax.lax's name
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked
    (``jax.lax.map``): a ``scan`` with no carry. ``batch_size`` runs that many slices at a
    time through ``vmap(f)`` (the remainder in one last ``vmap``).

    >>> map(lambda x: x * 2.0, np.arange(3.0))
    array([0., 2., 4.])
    """
    from .api import vmap
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    leaves, tree = _flat(xs)
    n = _aval(leaves[0]).shape[0]
    size = builtins.min(int(batch_size), n)
    whole = n // size * size
    parts = []
    if whole:
        blocks = [layout.reshape(layout.slice_in_dim(x, 0, whole), (n // size, size)
                                 + tuple(_aval(x).shape[1:])) for x in leaves]
        out = scan(lambda c, x: (c, vmap(f)(x)), (), pytree.unflatten(tree, blocks))[1]
        parts.append(pytree.tree_map(
            lambda y: layout.reshape(y, (whole,) + tuple(_aval(y).shape[2:])), out))
    if whole < n:
        rest = [layout.slice_in_dim(x, whole, n) for x in leaves]
        parts.append(vmap(f)(pytree.unflatten(tree, rest)))
    if len(parts) == 1:
        return parts[0]
    return pytree.tree_map(lambda a, b: layout.concatenate([a, b], 0), *parts)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix combinations ``fn(... fn(fn(e0, e1), e2) ..., ek)`` along ``axis`` of the
    pytree ``elems``, for an associative ``fn`` of two pytrees of slices, in ``O(log n)``
    vectorized steps (``jax.lax.associative_scan``; Blelloch's odd/even recursion).

    >>> associative_scan(lambda a, b: a + b, np.arange(1.0, 6.0))
    array([ 1.,  3.,  6., 10., 15.])
    """
    leaves, tree = _flat(elems)
    axis = axis % _aval(leaves[0]).ndim
    lengths = {_aval(x).shape[axis] for x in leaves}
    if len(lengths) != 1:
        raise ShapeError(f"every elems leaf needs the same length along axis {axis}, got "
                         f"{sorted(lengths)}", op="associative_scan", source=user_source())
    if reverse:
        leaves = [layout.rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(pytree.unflatten(tree, a), pytree.unflatten(tree, b))
        out_leaves, out_tree = pytree.flatten(out)
        if out_tree != tree:
            raise TfNumbaError(f"fn must return the structure of elems {tree}, got {out_tree}",
                               op="associative_scan", source=user_source())
        return [_leaf(x) for x in out_leaves]

    def part(xs, start, stop=None, stride=1):
        return [layout.slice_in_dim(x, start, _aval(x).shape[axis] if stop is None else
                                    _aval(x).shape[axis] + stop if stop < 0 else stop,
                                    stride, axis) for x in xs]

    def prefix(xs):
        n = _aval(xs[0]).shape[axis]
        if n < 2:
            return xs
        odd = prefix(combine(part(xs, 0, -1, 2), part(xs, 1, None, 2)))  # results 1, 3, ...
        even = combine(part(odd, 0, -1) if n % 2 == 0 else odd, part(xs, 2, None, 2))
        even = [layout.concatenate([first, e], axis) for first, e in zip(part(xs, 0, 1), even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]
    out = prefix(leaves)
    if reverse:
        out = [layout.rev(x, (axis,)) for x in out]
    return pytree.unflatten(tree, out)


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or one more)."""
    na, nb = _aval(a).shape[axis], _aval(b).shape[axis]
    head = layout.slice_in_dim(a, 0, nb, 1, axis) if na > nb else a
    pair = layout.concatenate([layout.expand_dims(head, (axis + 1,)),
                               layout.expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(_aval(head).shape)
    shape[axis] *= 2
    out = layout.reshape(pair, tuple(shape))
    if na > nb:
        out = layout.concatenate([out, layout.slice_in_dim(a, nb, na, 1, axis)], axis)
    return out


def _clamped_starts(shape, starts, sizes, allow_negative_indices, op):
    """JAX's start indices: negative ones count from the end (when allowed), then each is
    clamped so that the window fits (``jax.lax.dynamic_slice`` never fails)."""
    starts = list(starts)
    if len(starts) != len(shape) or len(sizes) != len(shape):
        raise ShapeError(f"needs one start index and one size per dim of the operand of "
                         f"shape {tuple(shape)}, got {len(starts)} starts and sizes "
                         f"{tuple(sizes)}", op=op, source=user_source())
    allow = ([allow_negative_indices] * len(shape) if isinstance(allow_negative_indices, bool)
             else list(allow_negative_indices))
    out = []
    for s, n, size, neg in zip(starts, shape, sizes, allow):
        if not 0 <= size <= n:
            raise ShapeError(f"window size {size} does not fit in a dim of size {n} "
                             f"(operand shape {tuple(shape)})", op=op, source=user_source())
        k = _concrete_int(s)
        if k is not None:
            k = k + n if neg and k < 0 else k
            out.append(np.int64(builtins.min(builtins.max(k, 0), n - size)))
            continue
        s = ew.convert_element_type(_leaf(s), dtypes.int64)
        if neg:
            s = ew.select(ew.lt(s, np.int64(0)), ew.add(s, np.int64(n)), s)
        out.append(ew.clamp(np.int64(0), s, np.int64(n - size)))
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The window of ``slice_sizes`` at ``start_indices`` (ints, may be traced), as
    ``jax.lax.dynamic_slice``: negative starts count from the end and starts are clamped
    so that the window fits.

    >>> dynamic_slice(np.arange(5), (4,), (2,))
    array([3, 4])
    """
    x = _leaf(operand)
    sizes = tuple(int(s) for s in slice_sizes)
    starts = _clamped_starts(_aval(x).shape, start_indices, sizes, allow_negative_indices,
                             "dynamic_slice")
    return indexing.dynamic_slice(x, starts, sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with ``update`` written at ``start_indices``, clamped as
    ``dynamic_slice``'s (``jax.lax.dynamic_update_slice``).

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), (3,))
    array([0., 0., 1., 1.])
    """
    x, upd = _leaf(operand), _leaf(update)
    starts = _clamped_starts(_aval(x).shape, start_indices, _aval(upd).shape,
                             allow_negative_indices, "dynamic_update_slice")
    return indexing.dynamic_update_slice(x, upd, starts)


def _in_dim(shape, axis, value, other):
    return [value if d == axis else other(d) for d in range(len(shape))]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """``dynamic_slice`` along one axis (the others whole)."""
    shape = _aval(_leaf(operand)).shape
    axis = normalize_axis(axis, len(shape), "dynamic_slice_in_dim")
    return dynamic_slice(operand, _in_dim(shape, axis, start_index, lambda d: 0),
                         _in_dim(shape, axis, slice_size, lambda d: shape[d]),
                         allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """Element ``index`` along ``axis`` (kept as a size-1 axis when ``keepdims``)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else layout.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """``dynamic_update_slice`` along one axis."""
    shape = _aval(_leaf(operand)).shape
    axis = normalize_axis(axis, len(shape), "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, _in_dim(shape, axis, start_index, lambda d: 0),
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with element ``index`` along ``axis`` replaced by ``update`` (which may
    lack that axis)."""
    x, upd = _leaf(operand), _leaf(update)
    axis = axis % _aval(x).ndim
    if _aval(upd).ndim < _aval(x).ndim:
        upd = layout.expand_dims(upd, (axis,))
    return dynamic_update_slice_in_dim(x, upd, index, axis,
                                       allow_negative_indices=allow_negative_indices)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
