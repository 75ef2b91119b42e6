"""``custom_jvp`` and ``custom_vjp``: user-supplied derivative rules, as in JAX.

A decorated function is traced into a sub-program carried by a primitive
(``custom_jvp_call`` / ``custom_vjp_call``); evaluating it runs the sub-program, and the
JVP rule of the primitive runs the user's rule instead of differentiating the body.

For ``custom_vjp`` the JVP rule emits ``custom_vjp_linear``: a primitive linear in the
tangents whose transpose calls the user's ``bwd``. Evaluated forwards (plain ``jvp``, no
transpose) it differentiates the forward function instead, so ``jvp`` of a ``custom_vjp``
function works and agrees with ``grad`` whenever ``bwd`` is correct.

As in JAX: ``nondiff_argnums`` arguments are static (any Python value, not traced) and
come first in the rules' arguments; a rule may return ``None`` for a zero (co)tangent of
any subtree; ``defjvps`` gives one rule per argument; with ``symbolic_zeros=True`` rules see
zero (co)tangents as ``SymbolicZero`` values and ``fwd`` sees ``CustomVJPPrimal`` leaves.
"""
import functools
import inspect

import numpy as np

from .core import pytree
from .core.interpreter import eval_program
from .core.linear import Zero, aval_of, has_tangent, instantiate, is_undefined
from .core.primitive import Primitive, register
from .core.trace import (_UNKNOWN, ProgramBuilder, SourceInfo, Tracer, current_builder,
                         user_source)
from .errors import ArgumentError, PytreeError, ShapeError, TfNumbaError
from .transforms import ad

# A (co)tangent known to be zero, as rules with ``symbolic_zeros=True`` see it: it has
# ``aval``, ``shape`` and ``dtype``; a rule may return one for a zero result.
SymbolicZero = Zero


class CustomVJPPrimal:
    """A primal argument as ``fwd`` sees it with ``symbolic_zeros=True``: its ``value``, and
    whether it is ``perturbed`` (has a nonzero tangent, so its cotangent is needed)."""
    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed):
        self.value, self.perturbed = value, perturbed

    def __repr__(self):
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def _is_eager(leaves):
    return current_builder() is None and not any(type(x) is Tracer for x in leaves)


def _traced(fn, args, with_values):
    """``fn`` traced on ``args``; ``with_values``: its inputs keep the values of ``args``
    (a trace of the un-jitted transforms), so Python control flow in ``fn`` works."""
    from .api import TracedFunction
    known = range(len(pytree.flatten(args)[0])) if with_values else None
    return TracedFunction(fn, args, {}, known=known)


def _values_of(leaves):
    """The concrete values of ``leaves`` (tracers of traces that know them), or None if
    one of them has no value yet (under ``jit`` or ``vmap``)."""
    out = []
    for x in leaves:
        value = x.builder.value_of(x.ir_var) if type(x) is Tracer else np.asarray(x)
        if value is _UNKNOWN:
            return None
        out.append(value)
    return out


def _is_zero_or_none(x):
    return x is None or type(x) is Zero


def _with_values(fn, args, values):
    """``fn(*args)`` traced where the leaves of ``args`` have ``values`` (None: unknown), then
    evaluated on ``args`` themselves: how a rule sees concrete primals outside ``jit``, as
    JAX's rules do, while what it computes still reaches the transform as a program.
    Zero and None leaves pass through as they are."""
    leaves, tree = pytree.flatten(args, is_leaf=_is_zero_or_none)
    with ProgramBuilder(known_values=True) as builder:
        ins = [x if _is_zero_or_none(x) else builder.new_input(aval_of(x), v)
               for x, v in zip(leaves, values)]
        out_leaves, out_tree = pytree.flatten(fn(*pytree.unflatten(tree, ins)),
                                              is_leaf=_is_zero_or_none)
        program, captured = builder.build([x for x in out_leaves if not _is_zero_or_none(x)])
    results = iter(eval_program(program, [x for x in leaves if not _is_zero_or_none(x)]
                                + captured))
    return pytree.unflatten(out_tree, [x if _is_zero_or_none(x) else next(results)
                                       for x in out_leaves])


def _positional(owner, args, kwargs):
    """The call's arguments as a tuple in the function's positional order."""
    if not kwargs:
        return args
    bound = inspect.signature(owner.fun).bind(*args, **kwargs)
    if bound.kwargs:
        raise TfNumbaError(f"function {owner.fun.__qualname__}: keyword-only arguments "
                           f"{sorted(bound.kwargs)} are not supported; make them positional "
                           "or close over them", op=owner.kind, source=user_source())
    return bound.args


def _call_with_rule(prim, owner, args):
    """Run ``owner.fun`` eagerly, or trace it into a ``prim`` equation carrying the rule."""
    if owner.nondiff_argnums and max(owner.nondiff_argnums) >= len(args):
        raise TfNumbaError(f"function {owner.fun.__qualname__} has "
                           f"nondiff_argnums={owner.nondiff_argnums} but was called with "
                           f"{len(args)} positional arguments", op=owner.kind,
                           source=user_source())
    rule = _BoundRule(owner, args)
    leaves, _ = pytree.flatten(rule.diff_args)
    if _is_eager(leaves):
        return owner.fun(*args)
    builder = current_builder()
    with_values = builder is not None and builder.known is not None
    traced = _traced(rule.fun, rule.diff_args, with_values)
    rule.in_tree = traced.in_tree
    if with_values:
        rule.primal_values = _values_of(traced.leaves)
    outs = prim.bind(*traced.leaves, *traced.captured, *traced.const_values,
                     call=traced.program, rule=rule, in_tree=traced.in_tree,
                     out_tree=traced.out_tree, num_args=len(traced.leaves))
    return pytree.unflatten(traced.out_tree, outs)


def _out_avals(*avals, call, **_):
    return call.out_avals


def _call_impl(*args, call, **_):
    return eval_program(call, list(args))


def jvp_of_call(program, primals, tangents):
    """Differentiate ``program`` forwards at ``primals`` (tangents may be Zero)."""
    mask = [type(t) is not Zero for t in tangents]
    jvp_prog, _ = ad.jvp_program(program, mask)
    ts = [t for t, m, v in zip(tangents, mask, program.invars) if m and has_tangent(v.aval)]
    outs = eval_program(jvp_prog, list(primals) + ts)
    k = len(program.outvars)
    return outs[:k], outs[k:]


def _as_tangent(t, aval):
    from .ops.elementwise import convert_element_type
    if t is None or type(t) is Zero or not has_tangent(aval):
        return Zero(aval)
    return convert_element_type(t, aval.dtype)


def _leaves_or_none(treedef, tree, what):
    """The leaves of ``tree`` in ``treedef``'s order, ``None`` (a zero) for each leaf of a
    subtree given as ``None`` or ``SymbolicZero``, as JAX's rules may return."""
    out = []

    def visit(td, x):
        if x is None or type(x) is Zero:
            out.extend([None] * td.num_leaves)
        elif td.kind is None:
            if pytree.flatten(x)[1] != pytree.LEAF:
                raise PytreeError(f"{pytree.flatten(x)[1]} where a leaf belongs")
            out.append(x)
        else:
            level = pytree.TreeDef(td.kind, td.aux, (pytree.LEAF,) * len(td.children))
            for child_td, child in zip(td.children, pytree.flatten_up_to(level, x)):
                visit(child_td, child)
    try:
        visit(treedef, tree)
    except PytreeError as e:
        raise TfNumbaError(f"{what} of structure {pytree.flatten(tree)[1]} does not match "
                           f"{treedef} ({e}); give one entry per leaf, or None for a zero "
                           "subtree") from None
    return out


class _BoundRule:
    """One call's view of a ``custom_jvp``/``custom_vjp``: its ``nondiff_argnums`` values
    bound, its rules over the differentiable arguments only (what the primitives carry)."""

    def __init__(self, owner, args):
        nondiff = owner.nondiff_argnums
        self.owner, self.n_args = owner, len(args)
        self.static = tuple(args[i] for i in nondiff)
        self.diff_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        self.symbolic_zeros = owner.symbolic_zeros
        self.in_tree = None
        # the values of the differentiable leaves when the call was traced with values
        # (un-jitted transforms): the rules then see them, as JAX's rules outside jit
        self.primal_values = None
        self.fun = functools.wraps(owner.fun)(
            lambda *diff: owner.fun(*self.full_args(diff)))

    def full_args(self, diff):
        nondiff, it_d, it_s = self.owner.nondiff_argnums, iter(diff), iter(self.static)
        return tuple(next(it_s) if i in nondiff else next(it_d) for i in range(self.n_args))

    def fingerprint(self):
        from .core.ir import _canon
        own = getattr(self.owner, "fingerprint", None)
        base = own() if own is not None else \
            f"{self.owner.fun.__module__}.{self.owner.fun.__qualname__}"
        return f"{self.owner.kind}({base}, {_canon(self.static)})"

    def _instantiated(self, tree):
        if self.symbolic_zeros:
            return tree
        return pytree.tree_map(
            lambda t: instantiate(t) if type(t) is Zero and has_tangent(t.aval) else t, tree)

    def _seeing_values(self, fn, args):
        """``fn(*args)``; where the primal values are known, traced with them (the primals
        lead ``args``, flattened)."""
        if self.primal_values is None:
            return fn(*args)
        n = len(pytree.flatten(args, is_leaf=_is_zero_or_none)[0])
        return _with_values(fn, args, self.primal_values
                            + [None] * (n - len(self.primal_values)))

    def jvp(self, primals, tangents):
        return self._seeing_values(lambda p, t: self.owner.jvp(*self.static, p, t),
                                   (primals, self._instantiated(tangents)))

    def fwd(self, *diff, perturbed=None):
        def fwd(*diff):
            if self.symbolic_zeros:
                leaves, tree = pytree.flatten(diff)
                diff = pytree.unflatten(tree, [CustomVJPPrimal(x, p)
                                               for x, p in zip(leaves, perturbed)])
            return self.owner.fwd(*self.full_args(diff))
        return self._seeing_values(fwd, diff)

    def bwd_leaves(self, res, ct):
        """The cotangent of each leaf of the differentiable arguments, None for zero; each
        checked to have its argument's shape, as JAX checks (a cotangent of another shape
        would come back as a gradient of that shape)."""
        bwd = self.owner.bwd
        in_cts = bwd(*self.static, res, self._instantiated(ct))
        name = self.owner.fun.__qualname__
        where = _defined_at(bwd)
        n_diff = len(self.diff_args)
        if not isinstance(in_cts, (tuple, list)) or len(in_cts) != n_diff:
            got = (f"{len(in_cts)} entr{'y' if len(in_cts) == 1 else 'ies'}"
                   if isinstance(in_cts, (tuple, list)) else
                   "a single value, not a tuple (return (g,) for one argument)")
            raise TfNumbaError(f"bwd of {name} must return a tuple with one cotangent (or "
                               f"None) per differentiable argument ({n_diff}); it returned "
                               f"{got}", op="custom_vjp", source=where)
        leaves = _leaves_or_none(self.in_tree, tuple(in_cts), f"the cotangents bwd of {name} "
                                 "returned")
        for k, (c, primal) in enumerate(zip(leaves, pytree.flatten(self.diff_args)[0])):
            if c is not None and tuple(np.shape(c)) != tuple(np.shape(primal)):
                raise ShapeError(f"bwd of {name} returned a cotangent of shape "
                                 f"{tuple(np.shape(c))} for leaf {k} of its differentiable "
                                 f"arguments, which has shape {tuple(np.shape(primal))}: a "
                                 "cotangent has its argument's shape", op="custom_vjp",
                                 source=where)
        return leaves


def _defined_at(fn):
    """Where the user's rule ``fn`` is defined, for an error about what it returned."""
    code = getattr(fn, "__code__", None)
    return None if code is None else SourceInfo((code.co_filename, code.co_firstlineno,
                                                 code.co_name))


def _normalize_nondiff(fun, nondiff_argnums):
    nums = tuple(sorted(set(int(i) for i in nondiff_argnums)))
    if any(i < 0 for i in nums):
        raise ArgumentError(f"nondiff_argnums={nondiff_argnums!r} of {fun.__qualname__}: "
                            "give non-negative positions")
    return nums


# ---------------------------------------------------------------- custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", _out_avals, _call_impl, multiple_results=True)


class custom_jvp:
    """A function with a user-defined JVP, as ``jax.custom_jvp``.

    ``jvp(primals, tangents) -> (out, tangent_out)`` (``jvp(*nondiff, primals, tangents)``
    with ``nondiff_argnums``); a tangent of None is zero.

    >>> @custom_jvp
    ... def f(x): return tnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return tnp.sin(x), tnp.cos(x) * t
    """
    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _normalize_nondiff(fun, nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """Set the JVP rule; with ``symbolic_zeros`` zero tangents arrive as SymbolicZero."""
        self.jvp, self.symbolic_zeros = jvp, symbolic_zeros
        return jvp

    def defjvps(self, *jvps):
        """One rule per argument: ``jvp_i(t_i, ans, *primals)`` is the output tangent that
        argument i's tangent contributes (None: the output does not depend on it).

        >>> f.defjvps(lambda tx, ans, x, y: tnp.cos(x) * y * tx,
        ...           lambda ty, ans, x, y: tnp.sin(x) * ty)
        """
        if self.nondiff_argnums:
            raise TfNumbaError(f"function {self.fun.__qualname__}: defjvps does not take "
                               "nondiff_argnums; use defjvp", op="custom_jvp")

        def jvp(primals, tangents):
            ans = self(*primals)
            terms = [rule(t, ans, *primals) for rule, t in zip(jvps, tangents)
                     if rule is not None and type(t) is not Zero]
            if not terms:
                return ans, None
            return ans, pytree.tree_map(_sum_terms, *terms,
                                        is_leaf=lambda x: x is None or type(x) is Zero)
        self.defjvp(jvp, symbolic_zeros=True)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise TfNumbaError(f"function {self.fun.__qualname__} has no JVP rule; define "
                               "one with @f.defjvp", op="custom_jvp", source=user_source())
        return _call_with_rule(custom_jvp_call_p, self, _positional(self, args, kwargs))


def _sum_terms(*terms):
    present = [t for t in terms if t is not None and type(t) is not Zero]
    return functools.reduce(lambda a, b: a + b, present) if present else None


def _custom_jvp_rule(primals, tangents, *, call, rule, in_tree, out_tree, num_args):
    if any(type(t) is not Zero for t in tangents[num_args:]):
        raise TfNumbaError(
            f"custom_jvp function {rule.fun.__qualname__} closes over a value that is being "
            "differentiated; pass that value as an argument instead", op="custom_jvp_call")
    args = pytree.unflatten(in_tree, primals[:num_args])
    out, tangent_out = rule.jvp(args, pytree.unflatten(in_tree, tangents[:num_args]))
    out_leaves, tree = pytree.flatten(out)
    if tree != out_tree:
        raise TfNumbaError(
            f"the JVP rule of {rule.fun.__qualname__} returned outputs of structure {tree}; "
            f"the function returns {out_tree}", op="custom_jvp_call")
    t_leaves = _leaves_or_none(out_tree, tangent_out,
                               f"the tangents the JVP rule of {rule.fun.__qualname__} returned")
    return out_leaves, [_as_tangent(t, v.aval) for t, v in zip(t_leaves, call.outvars)]


register("jvp", custom_jvp_call_p, _custom_jvp_rule)


# ---------------------------------------------------------------- custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", _out_avals, _call_impl, multiple_results=True)


class custom_vjp:
    """A function with a user-defined VJP, as ``jax.custom_vjp``: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct) -> tuple`` of one cotangent per
    argument, None for a zero one (with ``nondiff_argnums``: ``bwd(*nondiff, residuals,
    ct)``, cotangents for the other arguments only). Under ``jvp`` the forward function is
    differentiated instead.

    >>> @custom_vjp
    ... def clip_gradient(lo, hi, x): return x
    >>> clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
    ...                      lambda res, g: (None, None, tnp.clip(g, *res)))
    """
    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _normalize_nondiff(fun, nondiff_argnums)
        self.fwd = self.bwd = None
        self.symbolic_zeros = False

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        """Set the rules; with ``symbolic_zeros`` fwd's array arguments are CustomVJPPrimal
        leaves and zero output cotangents reach bwd as SymbolicZero."""
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise TfNumbaError(f"function {self.fun.__qualname__} has no rule; define one "
                               "with f.defvjp(fwd, bwd)", op="custom_vjp", source=user_source())
        return _call_with_rule(custom_vjp_call_p, self, _positional(self, args, kwargs))


def _linear_avals(*avals, call, num_res, **_):
    return call.out_avals


def _linear_impl(*args, call, num_res, **_):
    n = len(call.invars)
    primals, tangents = args[num_res:num_res + n], args[num_res + n:]
    return jvp_of_call(call, primals, tangents)[1]


custom_vjp_linear_p = Primitive("custom_vjp_linear", _linear_avals, _linear_impl,
                                multiple_results=True)


def _as_residual(x):
    import numpy as np
    return x if isinstance(x, (Tracer, np.ndarray)) else np.asarray(x)


def _custom_vjp_rule(primals, tangents, *, call, rule, in_tree, out_tree, num_args):
    if any(type(t) is not Zero for t in tangents[num_args:]):
        raise TfNumbaError(
            f"custom_vjp function {rule.fun.__qualname__} closes over a value that is being "
            "differentiated; pass that value as an argument instead", op="custom_vjp_call")
    perturbed = [type(t) is not Zero for t in tangents[:num_args]]
    out, res = rule.fwd(*pytree.unflatten(in_tree, primals[:num_args]), perturbed=perturbed)
    out_leaves, tree = pytree.flatten(out)
    if tree != out_tree:
        raise TfNumbaError(f"fwd of {rule.fun.__qualname__} returned {tree}, the function "
                           f"returns {out_tree}", op="custom_vjp_call")
    res_leaves, res_tree = pytree.flatten(res)
    ts = [instantiate(t) if has_tangent(v.aval) else instantiate(Zero(v.aval))
          for t, v in zip(tangents, call.invars)]
    touts = custom_vjp_linear_p.bind(*map(_as_residual, res_leaves), *primals, *ts, call=call,
                                     rule=rule, num_res=len(res_leaves), res_tree=res_tree,
                                     in_tree=in_tree, out_tree=out_tree, num_args=num_args)
    return out_leaves, touts


def _custom_vjp_linear_transpose(cts, *args, call, rule, num_res, res_tree, in_tree, out_tree,
                                 num_args):
    res = pytree.unflatten(res_tree, args[:num_res])
    leaves = rule.bwd_leaves(res, pytree.unflatten(out_tree, list(cts)))
    n = len(call.invars)
    grads = [None] * (num_res + n)
    for i, (ct, v) in enumerate(zip(leaves, call.invars)):
        grads.append(_as_tangent(ct, v.aval) if is_undefined(args[num_res + n + i])
                     and ct is not None else None)
    return grads + [None] * (n - num_args)


def _custom_vjp_linear_jvp(primals, tangents, **params):
    program = _linear_program(params["call"], params["num_res"], primals)
    return jvp_of_call(program, primals, tangents)


def _linear_program(call, num_res, primals):
    """custom_vjp_linear as an ordinary program over (residuals, primals, tangents)."""
    from .core.linear import aval_of
    from .core.trace import trace
    avals = [aval_of(p) for p in primals]
    n = len(call.invars)

    def body(*args):
        return jvp_of_call(call, args[num_res:num_res + n], args[num_res + n:])[1]
    return trace(body, avals)[0]


register("jvp", custom_vjp_call_p, _custom_vjp_rule)
register("transpose", custom_vjp_linear_p, _custom_vjp_linear_transpose)
register("jvp", custom_vjp_linear_p, _custom_vjp_linear_jvp)


# ---------------------------------------------------------------- batching
#
# Under vmap the custom rules stay in force: the call's body is batched, and the user's
# jvp / fwd / bwd are wrapped in vmap over the same axes. A body that closes over a
# batched value cannot keep its rule (the rule closes over the unbatched tracer), so
# such a call is inlined: vmap then differentiates its body.

def _tree_of_dims(tree, dims):
    return pytree.unflatten(tree, list(dims))


class _BatchedRule:
    """A custom_jvp / custom_vjp rule vmapped over the batch axes of the call's arguments."""

    def __init__(self, inner, in_tree, in_dims, in_avals, res_dims=None):
        self.inner, self.fun = inner, inner.fun
        self.in_tree, self.in_dims, self.in_avals = in_tree, tuple(in_dims), in_avals
        self.res_dims = res_dims

    def fingerprint(self):
        return f"vmap({self.inner.fingerprint()}, {self.in_dims})"

    def jvp(self, primals, tangents):
        from .api import vmap
        p, t = pytree.flatten(primals)[0], pytree.flatten(tangents)[0]
        keep = [type(x) is not Zero for x in t]
        n = len(p)

        def flat(*xs):
            it = iter(xs[n:])
            ts = [next(it) if k else Zero(a) for k, a in zip(keep, self.in_avals)]
            out, t_out = self.inner.jvp(pytree.unflatten(self.in_tree, xs[:n]),
                                        pytree.unflatten(self.in_tree, ts))
            # vmap takes arrays and None subtrees, not symbolic zeros
            return out, pytree.tree_map(lambda x: None if type(x) is Zero else x, t_out)
        axes = self.in_dims + tuple(d for d, k in zip(self.in_dims, keep) if k)
        return vmap(flat, in_axes=axes, out_axes=0)(*p, *[x for x, k in zip(t, keep) if k])

    def fwd(self, *args, perturbed=None):
        from .api import vmap
        axes = _tree_of_dims(self.in_tree, self.in_dims)
        return vmap(lambda *a: self.inner.fwd(*a, perturbed=perturbed), in_axes=tuple(axes),
                    out_axes=0)(*args)

    def bwd_leaves(self, res, ct):
        from .api import vmap
        from .ops.reductions import reduce_sum
        from .transforms.batching import moveaxis
        res_axes = 0 if self.res_dims is None else self.res_dims
        ct = pytree.tree_map(instantiate, ct)
        leaves = vmap(self.inner.bwd_leaves, in_axes=(res_axes, 0), out_axes=0)(res, ct)
        return [c if c is None else reduce_sum(c, (0,)) if d is None else moveaxis(c, 0, d)
                for c, d in zip(leaves, self.in_dims)]


def _batch_call(prim):
    def rule(args, dims, *, call, rule, in_tree, out_tree, num_args):
        from .transforms.batching import axis_size_of, batch_eval, batch_program
        size = axis_size_of(args, dims)
        n_out = len(call.outvars)
        if any(d is not None for d in dims[num_args:]):
            outs, out_dims = batch_eval(call, args, dims, size)
            return outs, out_dims
        batched, _ = batch_program(call, dims, size, [0] * n_out)
        wrapped = _BatchedRule(rule, in_tree, dims[:num_args],
                               [v.aval for v in call.invars[:num_args]])
        outs = prim.bind(*args, call=batched, rule=wrapped, in_tree=in_tree,
                         out_tree=out_tree, num_args=num_args)
        return outs, [0] * n_out
    return rule


def _custom_vjp_linear_batch(args, dims, *, call, rule, num_res, res_tree, in_tree, out_tree,
                             num_args):
    from .transforms.batching import axis_size_of, batch_program, bdim_to
    size = axis_size_of(args, dims)
    n = len(call.invars)
    res, primals, tangents = args[:num_res], args[num_res:num_res + n], args[num_res + n:]
    res_dims = dims[:num_res]
    p_dims, t_dims = dims[num_res:num_res + n], dims[num_res + n:]
    # a primal and its tangent go through the same batched body: give them one batch axis
    in_dims, ps, ts = [], [], []
    for p, t, dp, dt in zip(primals, tangents, p_dims, t_dims):
        if dp is None and dt is None:
            in_dims.append(None)
        else:
            p, t = bdim_to(p, dp, 0, size), bdim_to(t, dt, 0, size)
            in_dims.append(0)
        ps.append(p)
        ts.append(t)
    batched, _ = batch_program(call, in_dims, size, [0] * len(call.outvars))
    wrapped = _BatchedRule(rule, in_tree, in_dims[:num_args],
                           [v.aval for v in call.invars[:num_args]],
                           res_dims=_tree_of_dims(res_tree, res_dims))
    outs = custom_vjp_linear_p.bind(*res, *ps, *ts, call=batched, rule=wrapped,
                                    num_res=num_res, res_tree=res_tree, in_tree=in_tree,
                                    out_tree=out_tree, num_args=num_args)
    return outs, [0] * len(outs)


register("batch", custom_jvp_call_p, _batch_call(custom_jvp_call_p))
register("batch", custom_vjp_call_p, _batch_call(custom_vjp_call_p))
register("batch", custom_vjp_linear_p, _custom_vjp_linear_batch)


# ---------------------------------------------------------------- closure conversion

def closure_convert(fn, *args):
    """``(converted, consts)`` with ``converted(*args, *consts) == fn(*args)``: the traced
    values ``fn`` closes over (an outer ``grad``'s variables, say) made explicit, as
    ``jax.closure_convert``. A ``custom_vjp`` function needs that to give them cotangents,
    since it may not close over a value being differentiated. ``fn`` is traced once, on
    the shapes and dtypes of ``args``; NumPy constants stay inside ``converted``.

    >>> converted, consts = closure_convert(lambda y: y * k, 1.0)   # k traced outside
    """
    from .core.linear import aval_of
    from .ops import control
    leaves, in_tree = pytree.flatten(args)
    trees = {}

    def flat(*xs):
        out_leaves, trees["out"] = pytree.flatten(fn(*pytree.unflatten(in_tree, xs)))
        return out_leaves
    program, lead = control.trace_program(flat, [aval_of(x) for x in leaves])
    outer = [k for k, v in enumerate(lead) if type(v) is Tracer]
    lead = list(lead)

    def converted(*xs):
        values = list(lead)
        for k, v in zip(outer, xs[len(xs) - len(outer):]):
            values[k] = v
        explicit = pytree.flatten(xs[:len(xs) - len(outer)])[0]
        return pytree.unflatten(trees["out"], eval_program(program, values + explicit))
    converted.program = program
    return converted, [lead[k] for k in outer]


def custom_gradient(fun):
    """A function with a user-defined gradient, as ``jax.custom_gradient``: ``fun(*args)``
    returns ``(value, vjp_fn)`` and ``vjp_fn(ct)`` the cotangents of the arguments (a
    tuple, or one value for one argument). The backward pass calls ``fun`` again for its
    ``vjp_fn`` (a function cannot be kept as a residual).

    >>> @custom_gradient
    ... def clip_grad(x):
    ...     return x, lambda g: (tnp.clip(g, -1.0, 1.0),)
    """
    @functools.wraps(fun)
    def value_only(*args):
        return fun(*args)[0]

    def fwd(*args):
        return fun(*args)[0], args

    def bwd(args, ct):
        cts = fun(*args)[1](ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped = custom_vjp(value_only)
    wrapped.defvjp(fwd, bwd)
    return wrapped


__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient",
           "custom_jvp", "custom_vjp"]

from .tracebacks import mark_entry_points  # noqa: E402
mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
