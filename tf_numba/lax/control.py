"""Structured control flow, as in ``jax.lax``: cond, switch, while_loop, fori_loop, scan,
map, associative_scan, and the ``checkpoint`` (remat) decorator.

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

import numpy as np

from ..core import dtypes, pytree
from ..core.ir import ShapedArray, Var
from ..core.linear import aval_of
from ..core.trace import user_source
from ..errors import ShapeError, TfNumbaError
from ..ops import control
from ..ops import elementwise as ew
from ..ops import layout
from ._operands import concrete_int, flat, leaf

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "checkpoint", "map",
           "associative_scan", "custom_linear_solve", "custom_root"]

_NO_OPERAND = object()      # cond's and switch's deprecated ``operand=`` was not given


def _trace(fn, in_tree, avals, spread=True):
    """Trace ``fn`` on pytree inputs (the tuple ``in_tree`` spread into arguments, or one
    argument): (closed program, leading operands, output treedef)."""
    trees = {}

    def flat_fn(*xs):
        tree = pytree.unflatten(in_tree, xs)
        out = fn(*tree) if spread else fn(tree)
        leaves, trees["out"] = pytree.flatten(out)
        return leaves
    program, lead = control.trace_program(flat_fn, avals)
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
    leaves, in_tree = flat(tuple(operands))
    avals = [aval_of(x) for x in leaves]
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

def _with_operand(operands, operand, op):
    """JAX's older spelling ``cond(pred, t, f, operand=x)``: the one operand ``x``."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TfNumbaError("takes operands positionally or as operand=, not both", op=op,
                           source=user_source())
    return (operand,)


def switch(index, branches, *operands, operand=_NO_OPERAND):
    """``branches[index](*operands)``, the index clamped to ``[0, len(branches) - 1]``.

    >>> switch(1, [lambda x: x + 1, lambda x: x * 10], 2.0)
    array(20.)
    """
    operands = _with_operand(operands, operand, "switch")
    branches = list(branches)
    if not branches:
        raise TfNumbaError("needs at least one branch", op="switch", source=user_source())
    index = leaf(index)
    if not dtypes.is_integer(aval_of(index).dtype) or aval_of(index).shape != ():
        raise TfNumbaError(f"needs an integer scalar index, got {aval_of(index)}",
                           op="switch", source=user_source())
    index = ew.convert_element_type(index, dtypes.int32)
    programs, lead, leaves, out_tree = _branches(branches, operands, "switch")
    outs = control.cond_p.bind(index, *lead, *leaves, branches=tuple(programs))
    return pytree.unflatten(out_tree, outs)


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; ``pred`` is a
    scalar (bool, or a number compared with 0), possibly traced.

    >>> cond(np.float64(3.0) > 2, lambda x: x * 2, lambda x: -x, 1.5)
    array(3.)
    """
    operands = _with_operand(operands, operand, "cond")
    pred = leaf(pred)
    pred_aval = aval_of(pred)
    if pred_aval.shape != ():
        raise TfNumbaError(f"needs a scalar predicate, got {pred_aval}; use tnp.where for "
                           "an elementwise choice", op="cond", source=user_source())
    if pred_aval.dtype != dtypes.bool_:
        pred = ew.ne(pred, np.zeros((), pred_aval.dtype))
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
    leaves, tree = flat(init_val)
    avals = [aval_of(x) for x in leaves]
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


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``; returns the final ``val``.

    With concrete bounds it is a ``scan`` of ``upper - lower`` steps (reverse mode stores
    one set of residuals per step); with traced bounds, a ``while_loop``. ``unroll`` (how
    many steps XLA unrolls) is accepted; the compiled loop here is not unrolled.

    >>> fori_loop(0, 4, lambda i, s: s + i, 0)
    array(6)
    """
    in_leaves, tree = flat(init_val)
    in_avals = [aval_of(x) for x in in_leaves]

    def body(i, val):           # (checked here, so an error names fori_loop, not scan)
        out = body_fun(i, val)
        out_leaves, out_tree = flat(out)
        _check_carry(tree, out_tree, in_avals, [aval_of(x) for x in out_leaves], "fori_loop",
                     "body_fun")
        return out

    lo, hi = concrete_int(lower), concrete_int(upper)
    if lo is not None and hi is not None:
        def step(carry, _):
            i, val = carry
            return (ew.add(i, np.int64(1)), body(i, val)), None
        (_, val), _ = scan(step, (np.int64(lo), init_val), None, length=builtins.max(hi - lo, 0))
        return val
    lower = ew.convert_element_type(leaf(lower), dtypes.int64)
    upper = ew.convert_element_type(leaf(upper), dtypes.int64)

    def loop_cond(carry):
        return ew.lt(carry[0], carry[1])

    def loop_body(carry):
        i, n, val = carry
        return ew.add(i, np.int64(1)), n, body(i, val)
    return while_loop(loop_cond, loop_body, (lower, upper, init_val))[2]


def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
    """``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
    ``(final carry, stacked ys)``, as ``jax.lax.scan``. ``xs`` may be None with ``length``;
    ``unroll`` is accepted (the compiled loop is not unrolled).

    >>> scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0))
    (array(6.), array([0., 0., 2., 9.]))
    """
    carry, carry_tree = flat(init)
    x_leaves, x_tree = flat(xs)
    lengths = {aval_of(x).shape[0] if aval_of(x).shape else None for x in x_leaves}
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
    carry_avals = [aval_of(c) for c in carry]
    x_avals = [ShapedArray(aval_of(x).shape[1:], aval_of(x).dtype) for x in x_leaves]
    trees = {}

    def flat_fn(*a):
        c = pytree.unflatten(carry_tree, a[:len(carry)])
        x = pytree.unflatten(x_tree, a[len(carry):])
        out = f(c, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TfNumbaError("the scanned function must return a pair (carry, y)",
                               op="scan", source=user_source())
        c_leaves, trees["carry"] = pytree.flatten(out[0])
        y_leaves, trees["y"] = pytree.flatten(out[1])
        return c_leaves + y_leaves
    body, lead = control.trace_program(flat_fn, carry_avals + x_avals)
    _check_carry(carry_tree, trees["carry"], carry_avals,
                 body.out_avals[:len(carry)], "scan", "the scanned function")
    outs = control.scan_bind(lead, carry, x_leaves, body, n, reverse)
    return (pytree.unflatten(carry_tree, outs[:len(carry)]),
            pytree.unflatten(trees["y"], outs[len(carry):]))


def checkpoint(fn=None, *, prevent_cse=True, policy=None, static_argnums=(),
               static_argnames=()):
    """Rematerialize ``fn`` in reverse mode: its intermediate values are not stored for the
    backward pass but recomputed from its inputs there (``jax.checkpoint``).

    ``policy`` (``tf.checkpoint_policies``): ``everything_saveable`` keeps every value (no
    rematerialization); any other keeps none (see ``tf.checkpoint_policies``).
    ``static_argnums``/``static_argnames`` name arguments that are Python values, not
    traced. ``prevent_cse`` is taken: a checkpoint's equation is never merged anyway.

    >>> g = tf.grad(lambda x: tnp.sum(checkpoint(tnp.sin)(x)))
    """
    from .. import checkpoint_policies
    if fn is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames)
    if policy is checkpoint_policies.everything_saveable:
        return fn
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    static_names = (static_argnames,) if isinstance(static_argnames, str) \
        else tuple(static_argnames)

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        fixed = {i: a for i, a in enumerate(args) if i in statics}
        fixed_kw = {k: v for k, v in kwargs.items() if k in static_names}
        dynamic = (tuple(a for i, a in enumerate(args) if i not in statics),
                   {k: v for k, v in kwargs.items() if k not in static_names})

        def bound(dyn_args, dyn_kwargs):
            it = iter(dyn_args)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            return fn(*full, **dyn_kwargs, **fixed_kw)
        leaves, tree = flat(dynamic)
        program, lead, out_tree = _trace(lambda *d: bound(*d), tree,
                                         [aval_of(x) for x in leaves])
        outs = control.checkpoint_p.bind(*lead, *leaves, body=program)
        return pytree.unflatten(out_tree, outs)
    return wrapped


remat = checkpoint

def map(f, xs, *, batch_size=None):  # noqa: A001 - jax.lax's name
    """``f`` applied to each slice of ``xs`` along its leading axis, stacked
    (``jax.lax.map``): a ``scan`` with no carry. ``batch_size`` runs that many slices at a
    time through ``vmap(f)`` (the remainder in one last ``vmap``).

    >>> map(lambda x: x * 2.0, np.arange(3.0))
    array([0., 2., 4.])
    """
    from ..api import vmap
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), (), xs)[1]
    leaves, tree = flat(xs)
    n = aval_of(leaves[0]).shape[0]
    size = builtins.min(int(batch_size), n)
    whole = n // size * size
    parts = []
    if whole:
        blocks = [layout.reshape(layout.slice_in_dim(x, 0, whole), (n // size, size)
                                 + tuple(aval_of(x).shape[1:])) for x in leaves]
        out = scan(lambda c, x: (c, vmap(f)(x)), (), pytree.unflatten(tree, blocks))[1]
        parts.append(pytree.tree_map(
            lambda y: layout.reshape(y, (whole,) + tuple(aval_of(y).shape[2:])), out))
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
    leaves, tree = flat(elems)
    axis = axis % aval_of(leaves[0]).ndim
    lengths = {aval_of(x).shape[axis] for x in leaves}
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
        return [leaf(x) for x in out_leaves]

    def part(xs, start, stop=None, stride=1):
        return [layout.slice_in_dim(x, start, aval_of(x).shape[axis] if stop is None else
                                    aval_of(x).shape[axis] + stop if stop < 0 else stop,
                                    stride, axis) for x in xs]

    def prefix(xs):
        n = aval_of(xs[0]).shape[axis]
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
    na, nb = aval_of(a).shape[axis], aval_of(b).shape[axis]
    head = layout.slice_in_dim(a, 0, nb, 1, axis) if na > nb else a
    pair = layout.concatenate([layout.expand_dims(head, (axis + 1,)),
                               layout.expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(aval_of(head).shape)
    shape[axis] *= 2
    out = layout.reshape(pair, tuple(shape))
    if na > nb:
        out = layout.concatenate([out, layout.slice_in_dim(a, nb, na, 1, axis)], axis)
    return out


# ---------------------------------------------------------------- implicit differentiation

def _closed(fn, *examples):
    """``fn`` (a function of pytrees like ``examples``) as ``(apply, consts)``:
    ``apply(consts, *xs)`` evaluates it with the values it closed over passed as
    ``consts``, so that a custom derivative receives them as arguments."""
    from ..core.interpreter import eval_program
    leaves, tree = flat(examples)
    program, consts, out_tree = _trace(fn, tree, [aval_of(x) for x in leaves])

    def apply(cs, *xs):
        outs = eval_program(program, list(cs) + flat(xs)[0])
        return pytree.unflatten(out_tree, outs)
    return apply, tuple(consts)


def _negated(tree):
    return pytree.tree_map(ew.neg, tree)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """``solve(matvec, b)``, a solution ``x`` of the linear system ``matvec(x) = b``,
    differentiated implicitly (``jax.lax.custom_linear_solve``): the derivative never
    goes through ``solve``'s iterations. Reverse mode solves the transposed system with
    ``transpose_solve(vecmat, ct)`` (``solve`` itself when ``symmetric``); the values
    ``matvec`` closes over get ``-vjp(matvec)(x)`` of that solution. With ``has_aux``,
    ``solve`` returns ``(x, aux)`` and so does this.

    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> custom_linear_solve(lambda x: a @ x, np.array([1.0, 2.0]),
    ...                     lambda mv, b: np.linalg.solve(a, b), symmetric=True)
    array([0.2, 0.6])
    """
    from ..api import vjp
    from ..custom_derivatives import custom_vjp
    apply, consts = _closed(matvec, b)
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    # the solvers may close over values being differentiated too: they are traced now,
    # with those values passed in (they take no part in the derivative: a solution's
    # derivative does not depend on how it was found)
    solved, solve_consts = _closed(
        lambda cs, rhs: solve(lambda x: apply(cs, x), rhs), consts, b)
    zeros = pytree.tree_map(lambda v: layout.full(aval_of(v).shape, 0, aval_of(v).dtype),
                            flat(b)[0])
    b_tree = flat(b)[1]

    def vecmat(cs):
        # matvec is linear: its transpose is its vjp at any point, zero here
        _, pull = vjp(lambda v: apply(cs, v), pytree.unflatten(b_tree, zeros))
        return lambda y: pull(y)[0]
    transposed, transpose_consts = (None, ()) if transpose_solve is None else _closed(
        lambda cs, ct: transpose_solve(vecmat(cs), ct), consts, b)

    def solution(out):
        return out[0] if has_aux else out

    run = custom_vjp(lambda scs, tcs, cs, rhs: solved(scs, cs, rhs))

    def fwd(scs, tcs, cs, rhs):
        out = solved(scs, cs, rhs)
        return out, (tcs, cs, solution(out))

    def bwd(res, ct):
        tcs, cs, x = res
        if transposed is None:
            raise TfNumbaError("reverse mode needs transpose_solve (or symmetric=True) to "
                               "solve the transposed system", op="custom_linear_solve",
                               source=user_source())
        lam = transposed(tcs, cs, solution(ct))
        _, pull_cs = vjp(lambda c: apply(c, x), cs)
        return None, None, pull_cs(_negated(lam))[0], lam
    run.defvjp(fwd, bwd)
    return run(solve_consts, transpose_consts, consts, b)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, a root ``x`` of ``f``, differentiated implicitly in
    reverse mode (``jax.lax.custom_root``): the values ``f`` closes over get ``-J^-T ct``
    pulled back through ``f``, with ``J`` the Jacobian of ``f`` in ``x`` at the root and
    the transposed system solved by ``tangent_solve(g, y)`` (a solver of ``g(v) = y`` for
    a linear ``g``). Forward mode differentiates ``solve`` itself. With ``has_aux``,
    ``solve`` returns ``(x, aux)`` and so does this.

    >>> custom_root(lambda x: x * x - 2.0, 1.0,
    ...             lambda f, x0: fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0),
    ...             lambda g, y: y / g(1.0))
    array(1.41421356)
    """
    from ..api import vjp
    from ..custom_derivatives import custom_vjp
    guess = pytree.tree_map(leaf, initial_guess)
    apply, consts = _closed(f, guess)
    root, solve_consts = _closed(lambda cs: solve(lambda x: apply(cs, x), guess), consts)

    def transposed_jacobian(cs, x):
        _, pull = vjp(lambda u: apply(cs, u), x)
        return lambda y: pull(y)[0]
    transposed, tangent_consts = _closed(
        lambda cs, x, ct: tangent_solve(transposed_jacobian(cs, x), ct), consts, guess, guess)

    def solution(out):
        return out[0] if has_aux else out

    run = custom_vjp(lambda scs, tcs, cs: root(scs, cs))

    def fwd(scs, tcs, cs):
        out = root(scs, cs)
        return out, (tcs, cs, solution(out))

    def bwd(res, ct):
        tcs, cs, x = res
        lam = transposed(tcs, cs, x, solution(ct))
        _, pull_cs = vjp(lambda c: apply(c, x), cs)
        return None, None, pull_cs(_negated(lam))[0]
    run.defvjp(fwd, bwd)
    return run(solve_consts, tangent_consts, consts)

from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
