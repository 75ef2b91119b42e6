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
        leaves, _ = pytree.flatten(args)
        if _is_eager(leaves):
            return self.fun(*args)
        traced = _traced(self.fun, args)
        outs = custom_jvp_call_p.bind(*traced.leaves, *traced.captured, call=traced.program,
                                      rule=self, in_tree=traced.in_tree,
                                      out_tree=traced.out_tree, num_args=len(traced.leaves))
        return pytree.unflatten(traced.out_tree, outs)


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
        leaves, _ = pytree.flatten(args)
        if _is_eager(leaves):
            return self.fun(*args)
        traced = _traced(self.fun, args)
        outs = custom_vjp_call_p.bind(*traced.leaves, *traced.captured, call=traced.program,
                                      rule=self, in_tree=traced.in_tree,
                                      out_tree=traced.out_tree, num_args=len(traced.leaves))
        return pytree.unflatten(traced.out_tree, outs)


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
