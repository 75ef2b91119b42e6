"""``custom_jvp`` and ``custom_vjp``: user-supplied derivative rules, as in JAX.

A decorated function is traced into a sub-program carried by a primitive
(``custom_jvp_call`` / ``custom_vjp_call``); evaluating it runs the sub-program, and the
JVP rule of the primitive runs the user's rule instead of differentiating the body.

For ``custom_vjp`` the JVP rule emits ``custom_vjp_linear``: a primitive linear in the
tangents whose transpose calls the user's ``bwd``. Evaluated forwards (plain ``jvp``, no
transpose) it differentiates the forward function instead, so ``jvp`` of a ``custom_vjp``
function works and agrees with ``grad`` whenever ``bwd`` is correct.
"""
import functools

from .core import pytree
from .core.interpreter import eval_program
from .core.linear import Zero, has_tangent, instantiate, is_undefined
from .core.primitive import Primitive, register
from .core.trace import Tracer, current_builder, user_source
from .errors import TfNumbaError
from .transforms import ad


def _is_eager(leaves):
    return current_builder() is None and not any(type(x) is Tracer for x in leaves)


def _traced(fn, args):
    from .api import TracedFunction
    return TracedFunction(fn, args, {})


def _call_with_rule(prim, rule, args):
    """Run ``rule.fun`` eagerly, or trace it into a ``prim`` equation carrying the rule."""
    leaves, _ = pytree.flatten(args)
    if _is_eager(leaves):
        return rule.fun(*args)
    traced = _traced(rule.fun, args)
    outs = prim.bind(*traced.leaves, *traced.captured, call=traced.program, rule=rule,
                     in_tree=traced.in_tree, out_tree=traced.out_tree,
                     num_args=len(traced.leaves))
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
    if t is None:
        return Zero(aval)
    return convert_element_type(t, aval.dtype)


# ---------------------------------------------------------------- custom_jvp

custom_jvp_call_p = Primitive("custom_jvp_call", _out_avals, _call_impl, multiple_results=True)


class custom_jvp:
    """A function with a user-defined JVP.

    >>> @custom_jvp
    ... def f(x): return tnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return tnp.sin(x), tnp.cos(x) * t
    """

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.jvp = None

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise TfNumbaError(f"custom_jvp function {self.fun.__qualname__} has no JVP rule; "
                               "define one with @f.defjvp", source=user_source())
        return _call_with_rule(custom_jvp_call_p, self, args)


def _custom_jvp_rule(primals, tangents, *, call, rule, in_tree, out_tree, num_args):
    if any(type(t) is not Zero for t in tangents[num_args:]):
        raise TfNumbaError(
            f"custom_jvp function {rule.fun.__qualname__} closes over a value that is being "
            "differentiated; pass that value as an argument instead", op="custom_jvp_call")
    args = pytree.unflatten(in_tree, primals[:num_args])
    ts = pytree.unflatten(in_tree, [instantiate(t) if has_tangent(v.aval) else t
                                    for t, v in zip(tangents[:num_args], call.invars)])
    out, tangent_out = rule.jvp(args, ts)
    out_leaves, tree = pytree.flatten(out)
    t_leaves, t_tree = pytree.flatten(tangent_out)
    if tree != out_tree or t_tree != out_tree:
        raise TfNumbaError(
            f"the JVP rule of {rule.fun.__qualname__} returned outputs of structure {tree} and "
            f"tangents of structure {t_tree}; the function returns {out_tree}",
            op="custom_jvp_call")
    return out_leaves, [_as_tangent(t, v.aval) for t, v in zip(t_leaves, call.outvars)]


register("jvp", custom_jvp_call_p, _custom_jvp_rule)


# ---------------------------------------------------------------- custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call", _out_avals, _call_impl, multiple_results=True)


class custom_vjp:
    """A function with a user-defined VJP: ``f.defvjp(fwd, bwd)``.

    ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct) -> tuple`` of one cotangent per
    argument. Under ``jvp`` the forward function is differentiated instead.
    """

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise TfNumbaError(f"custom_vjp function {self.fun.__qualname__} has no rule; "
                               "define one with f.defvjp(fwd, bwd)", source=user_source())
        return _call_with_rule(custom_vjp_call_p, self, args)


def _linear_avals(*avals, call, num_res, **_):
    return call.out_avals


def _linear_impl(*args, call, num_res, **_):
    n = len(call.invars)
    primals, tangents = args[num_res:num_res + n], args[num_res + n:]
    return jvp_of_call(call, primals, tangents)[1]


custom_vjp_linear_p = Primitive("custom_vjp_linear", _linear_avals, _linear_impl,
                                multiple_results=True)


def _custom_vjp_rule(primals, tangents, *, call, rule, in_tree, out_tree, num_args):
    if any(type(t) is not Zero for t in tangents[num_args:]):
        raise TfNumbaError(
            f"custom_vjp function {rule.fun.__qualname__} closes over a value that is being "
            "differentiated; pass that value as an argument instead", op="custom_vjp_call")
    out, res = rule.fwd(*pytree.unflatten(in_tree, primals[:num_args]))
    out_leaves, tree = pytree.flatten(out)
    if tree != out_tree:
        raise TfNumbaError(f"fwd of {rule.fun.__qualname__} returned {tree}, the function "
                           f"returns {out_tree}", op="custom_vjp_call")
    res_leaves, res_tree = pytree.flatten(res)
    ts = [instantiate(t) if has_tangent(v.aval) else instantiate(Zero(v.aval))
          for t, v in zip(tangents, call.invars)]
    touts = custom_vjp_linear_p.bind(*res_leaves, *primals, *ts, call=call, rule=rule,
                                     num_res=len(res_leaves), res_tree=res_tree,
                                     in_tree=in_tree, out_tree=out_tree, num_args=num_args)
    return out_leaves, touts


def _custom_vjp_linear_transpose(cts, *args, call, rule, num_res, res_tree, in_tree, out_tree,
                                 num_args):
    res = pytree.unflatten(res_tree, args[:num_res])
    out_ct = pytree.unflatten(out_tree, [instantiate(c) for c in cts])
    in_cts = rule.bwd(res, out_ct)
    if not isinstance(in_cts, tuple):
        raise TfNumbaError(f"bwd of {rule.fun.__qualname__} must return a tuple with one "
                           f"cotangent per argument, got {type(in_cts).__name__}",
                           op="custom_vjp_call")
    leaves, tree = pytree.flatten(in_cts)
    if tree != in_tree:
        raise TfNumbaError(f"bwd of {rule.fun.__qualname__} returned cotangents of structure "
                           f"{tree}; the arguments have structure {in_tree}",
                           op="custom_vjp_call")
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
        return f"vmap({self.inner.fun.__module__}.{self.inner.fun.__qualname__}, {self.in_dims})"

    def jvp(self, primals, tangents):
        from .api import vmap
        p, t = pytree.flatten(primals)[0], pytree.flatten(tangents)[0]
        keep = [type(x) is not Zero for x in t]
        n = len(p)

        def flat(*xs):
            it = iter(xs[n:])
            ts = [next(it) if k else Zero(a) for k, a in zip(keep, self.in_avals)]
            return self.inner.jvp(pytree.unflatten(self.in_tree, xs[:n]),
                                  pytree.unflatten(self.in_tree, ts))
        axes = self.in_dims + tuple(d for d, k in zip(self.in_dims, keep) if k)
        return vmap(flat, in_axes=axes, out_axes=0)(*p, *[x for x, k in zip(t, keep) if k])

    def fwd(self, *args):
        from .api import vmap
        axes = _tree_of_dims(self.in_tree, self.in_dims)
        return vmap(self.inner.fwd, in_axes=tuple(axes), out_axes=0)(*args)

    def bwd(self, res, ct):
        from .api import vmap
        from .ops.reductions import reduce_sum
        from .transforms.batching import moveaxis
        res_axes = 0 if self.res_dims is None else self.res_dims
        cts = vmap(self.inner.bwd, in_axes=(res_axes, 0), out_axes=0)(res, ct)
        leaves, tree = pytree.flatten(cts)
        out = [c if c is None else reduce_sum(c, (0,)) if d is None else moveaxis(c, 0, d)
               for c, d in zip(leaves, self.in_dims)]
        return pytree.unflatten(tree, out)


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
