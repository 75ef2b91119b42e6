"""The public transforms: make_program, grad, value_and_grad, vjp, jvp, linearize, vmap,
jacfwd, jacrev, hessian, stop_gradient.

Each one traces the user's function into a Program, transforms the program, simplifies it
and evaluates it on the arguments. Evaluating inside another trace stages the equations
into it, which is all it takes for the transforms to nest (``grad(grad(f))``).
"""
import functools
import numbers

import numpy as np

from .core import dtypes, pytree
from .core.interpreter import eval_program
from .core.ir import ShapedArray, aval_of_value
from .core.shapes import Sym
from .core.trace import ProgramBuilder, Tracer, user_source
from .errors import ArgumentError, DTypeError, ShapeError, UnsupportedError
from .tracebacks import api_boundary
from .transforms import ad
from .transforms.cache import TRANSFORMS
from .transforms.simplify import simplify


class ShapeDtype:
    """An argument stand-in for ``make_program``: ``ShapeDtype((3, 4), np.float32)``.

    Dims given as strings are symbolic (see ``symbolic``); ``name`` names the program input.
    It is JAX's ``ShapeDtypeStruct`` too: ``sharding`` (checked against the shape) and
    ``weak_type`` are taken as JAX's and kept; two with one shape and dtype are equal.
    """

    def __init__(self, shape, dtype=np.float64, name=None, *, sharding=None, weak_type=False):
        dims = tuple(Sym(d) if isinstance(d, str) else d for d in shape)
        self.aval = ShapedArray(dims, dtypes.canonical(dtype))
        self.shape, self.dtype, self.name = self.aval.shape, self.aval.dtype, name
        if sharding is not None and self.aval.concrete:
            sharding.check(self.shape, "ShapeDtypeStruct")
        self.sharding, self.weak_type = sharding, weak_type

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=int))

    def __eq__(self, other):
        return isinstance(other, ShapeDtype) and (self.aval, self.name) == \
            (other.aval, other.name)

    def __hash__(self):
        return hash((self.aval, self.name))

    def __repr__(self):
        return f"ShapeDtype({self.aval}{', name=' + repr(self.name) if self.name else ''})"


ShapeDtypeStruct = ShapeDtype


def symbolic(shape, dtype=np.float64, name=None):
    """A program input whose dims may be symbols: ``symbolic(("n", 3))`` is an n x 3 array.

    A program traced on it holds for every n (n >= 2); shape constraints between different
    symbols become guards, checked when the program is prepared.
    """
    return ShapeDtype(shape, dtype, name)


def _aval(x):
    if isinstance(x, (Tracer, ShapeDtype)):
        return x.aval
    return aval_of_value(x)


def _as_array(x):
    """Leaves of arguments become typed values: Python scalars get their default dtype."""
    if isinstance(x, (Tracer, np.ndarray)):
        return x
    if isinstance(x, ShapeDtype):
        return x
    aval = _aval(x)
    return np.asarray(x, aval.dtype)


def _eager_results(values):
    """Un-jitted results as the README promises them: a 0-d result is a NumPy scalar,
    whichever op made it (NumPy's reductions give scalars, its products 0-d arrays)."""
    return [x[()] if type(x) is np.ndarray and x.ndim == 0 else x for x in values]


class TracedFunction:
    """A user function traced on flat leaves: its program, trees and captured tracers.

    By default every leaf is a program input with no value (``jit``, ``make_program``).
    With ``known`` (a collection of leaf indices; the un-jitted transforms pass the leaves
    they differentiate), only those leaves become inputs, traced with their values known,
    so Python control flow on them works; the other leaves reach ``fn`` as they are, as
    under autograd and eager JAX. The program's constants then become trailing inputs
    too (``const_values``), so that a cached transform of it serves every call whose
    trace has the same structure (``transforms.cache``).
    """

    def __init__(self, fn, args, kwargs, known=None, flat=None):
        leaves, self.in_tree = pytree.flatten(args) if flat is None else flat
        if known is None:
            self.leaves = [_as_array(x) for x in leaves]
            self.inputs = self.leaves
        else:
            known = set(known)
            self.leaves = [_as_array(x) if i in known else x for i, x in enumerate(leaves)]
            self.inputs = [x for i, x in enumerate(self.leaves) if i in known]
        self.out_tree = None
        self.const_values = []

        def flat_fn(*flat):
            if known is not None:
                it = iter(flat)
                flat = [next(it) if i in known else x for i, x in enumerate(self.leaves)]
            out = fn(*pytree.unflatten(self.in_tree, flat), **kwargs)
            out_leaves, self.out_tree = pytree.flatten(out)
            return out_leaves

        with ProgramBuilder(known_values=known is not None) as builder:
            ins = [builder.new_input(_aval(x), x) for x in self.inputs]
            outs = flat_fn(*ins)
            self.program, self.captured = builder.build(outs)
        if known is not None and self.program.consts:
            const_vars = [v for v, _ in self.program.consts]
            self.const_values = [value for _, value in self.program.consts]
            self.program = self.program.replace(invars=self.program.invars + tuple(const_vars),
                                                consts=())

    def call(self, program):
        """Evaluate a program derived from this one on the arguments it was traced with."""
        return eval_program(program, self.inputs + self.captured + self.const_values)

    def mask(self, input_indices):
        """Per program input: is it one of ``input_indices`` (positions in ``inputs``)?"""
        m = [False] * len(self.program.invars)
        for i in input_indices:
            m[i] = True
        return m


def make_program(fn, static_argnums=()):
    """``make_program(f)(*args)`` returns the Program ``f`` traces to; print it to read it.

    Arguments may be arrays (the input gets that data as its default, see
    ``tf_numba.runtime``), ``ShapeDtype`` or ``symbolic`` stand-ins. Input order is the
    order of the flattened arguments: ``program.input_index(name)`` finds a named one.

    >>> print(make_program(lambda x: tnp.sin(x) * 2)(np.ones(3)))
    """
    static_argnums = _normalize_argnums(static_argnums, None)

    @api_boundary
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return _program_and_tree(fn, static_argnums, args, kwargs)[0]
    return wrapper


def _program_and_tree(fn, static_argnums, args, kwargs):
    """The Program ``fn(*args, **kwargs)`` traces to (inputs named, defaults bound) and its
    output's tree."""
    bound = _bind_static(fn, args, static_argnums)
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    traced = TracedFunction(bound, tuple(dynamic), kwargs)
    leaves = traced.leaves + traced.captured
    names = [getattr(x, "name", None) if isinstance(x, ShapeDtype) else None
             for x in leaves]
    defaults = [None if isinstance(x, (ShapeDtype, Tracer)) else x for x in leaves]
    program = traced.program.replace(input_names=names, input_defaults=defaults)
    return program, traced.out_tree


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False,
               abstracted_axes=None):
    """``make_jaxpr(f)(*args)``: the Program ``f`` traces to, as ``jax.make_jaxpr`` (JAX's
    jaxpr is tf_numba's Program; print it to read it). With ``return_shape=True`` it
    returns ``(program, shapes)``, the output's ``ShapeDtypeStruct`` pytree.

    >>> print(make_jaxpr(lambda x: tnp.sin(x) * 2)(1.0))
    """
    if axis_env is not None or abstracted_axes is not None:
        raise UnsupportedError("axis_env and abstracted_axes name multi-device axes and "
                               "dynamic shapes; tf_numba has neither (use tf.symbolic for "
                               "shapes that hold for every length)", op="make_jaxpr")
    static_argnums = _normalize_argnums(static_argnums, None)

    @api_boundary
    @functools.wraps(fun)
    def jaxpr_fn(*args, **kwargs):
        program, out_tree = _program_and_tree(fun, static_argnums, args, kwargs)
        if not return_shape:
            return program
        return program, pytree.unflatten(out_tree, [ShapeDtype(a.shape, a.dtype)
                                                    for a in program.out_avals])
    return jaxpr_fn


def _bind_static(fn, args, static_argnums):
    if not static_argnums:
        return fn
    statics = {i: args[i] for i in static_argnums}

    def bound(*dynamic, **kwargs):
        it = iter(dynamic)
        full = [statics[i] if i in statics else next(it) for i in range(len(args))]
        return fn(*full, **kwargs)
    return bound


def _normalize_argnums(argnums, num_args, what="argnums"):
    single = type(argnums) is int or isinstance(argnums, numbers.Integral)
    nums = (argnums,) if single else tuple(argnums)
    if num_args is not None:
        for a in nums:
            if not -num_args <= a < num_args:
                raise ArgumentError(
                    f"{what}={argnums!r} is out of range: the function was called with "
                    f"{num_args} positional argument(s)", source=user_source())
        nums = tuple(a % num_args for a in nums)
    return nums


def _flat_args(args):
    """``(leaves, tree)`` of the argument tuple, and per positional argument: (its
    leaves, its tree, the range of its leaves among ``leaves``)."""
    leaves, tree = pytree.flatten(args)
    out, start = [], 0
    for child in tree.children:
        stop = start + child.num_leaves
        out.append((leaves[start:stop], child, range(start, stop)))
        start = stop
    return (leaves, tree), out


def _check_differentiable(flat_args, argnums, fname, holomorphic=False, allow_int=False):
    """Leaf indices to differentiate; DTypeError naming the argument if one is not float
    (complex with ``holomorphic``). With ``allow_int`` integer leaves are left out (their
    gradient is float0 zeros, as JAX's)."""
    wrt = []
    for a in argnums:
        leaves, _, indices = flat_args[a]
        for i, leaf in zip(indices, leaves):
            aval = _aval(_as_array(leaf))
            if holomorphic and not dtypes.is_complex(aval.dtype):
                raise DTypeError(
                    f"with holomorphic=True needs complex inputs, but argument {a} has a "
                    f"leaf of dtype {aval.dtype.name}; pass it as complex (x.astype(complex))",
                    op=fname, source=user_source())
            if not dtypes.is_inexact(aval.dtype):
                if allow_int:
                    continue
                raise DTypeError(
                    f"needs float or complex inputs to differentiate, but argument "
                    f"{a} has a leaf of dtype {aval.dtype.name} and shape {aval.shape}. "
                    "Pass it as float (x.astype(float)), leave it out of argnums, or pass "
                    "allow_int=True for a float0 gradient.", op=fname, source=user_source())
            if i not in wrt:
                wrt.append(i)
    return wrt


def _split_aux(out, has_aux, fname):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise ArgumentError(
            f"has_aux=True needs the function to return a pair (output, aux); "
            f"it returned {type(out).__name__}", op=fname, source=user_source())
    return out[0], out[1]


def _check_scalar_output(out, holomorphic=False):
    aval = _aval(out) if isinstance(out, (Tracer, np.ndarray, np.generic, numbers.Number)) \
        else None
    if holomorphic:
        if aval is None or aval.shape != () or not dtypes.is_complex(aval.dtype):
            got = f"{aval.dtype.name}{list(aval.shape)}" if aval is not None \
                else type(out).__name__
            raise ShapeError(f"with holomorphic=True needs the function to return a complex "
                             f"scalar, got {got}", op="grad", source=user_source())
        return
    if aval is None or aval.shape != () or not dtypes.is_inexact(aval.dtype) \
            or dtypes.is_complex(aval.dtype):
        got = f"{aval.dtype.name}{list(aval.shape)}" if aval is not None else type(out).__name__
        hint = (" For a holomorphic function pass holomorphic=True; otherwise use vjp."
                if aval is not None and dtypes.is_complex(aval.dtype) else "")
        raise ShapeError(
            f"needs the function to return a real float scalar, got {got}. "
            "Reduce it (e.g. tnp.sum) or use vjp/jacrev for non-scalar outputs." + hint,
            op="grad", source=user_source())


def _gradient(fn, argnums, has_aux, keep_value, args, kwargs, holomorphic=False,
              allow_int=False):
    """Shared body of grad and value_and_grad: (value, aux, grads) for one call."""
    nums = _normalize_argnums(argnums, len(args))
    aux_tree = []

    def scalar_fn(*a, **k):
        if not has_aux:
            out = fn(*a, **k)
            _check_scalar_output(out, holomorphic)
            return [out]
        out, aux = _split_aux(fn(*a, **k), has_aux, "grad")
        _check_scalar_output(out, holomorphic)
        aux_leaves, aux_def = pytree.flatten(aux)
        aux_tree.append(aux_def)
        return [out] + aux_leaves

    flat, flat_args = _flat_args(args)
    wrt = _check_differentiable(flat_args, nums, "grad", holomorphic, allow_int)
    traced = TracedFunction(scalar_fn, args, kwargs, known=wrt, flat=flat)
    mask = traced.mask(range(len(traced.inputs)))
    program = TRANSFORMS.get_or_build(
        ("grad", len(traced.inputs), keep_value), traced.program,
        lambda p: simplify(ad.grad_program(p, mask, keep_outputs=keep_value)))
    flat = _eager_results(traced.call(program))
    n_out = len(traced.program.outvars) if keep_value else 0
    by_leaf = dict(zip(sorted(wrt), flat[n_out:]))
    if allow_int:
        for a in nums:
            for i, leaf in zip(flat_args[a][2], flat_args[a][0]):
                by_leaf.setdefault(i, np.zeros(np.shape(leaf), dtypes.float0))
    grads = _unflatten_grads(flat_args, argnums, nums, by_leaf)
    if not keep_value:
        return None, None, grads
    aux = pytree.unflatten(aux_tree[0], flat[1:n_out]) if has_aux else None
    return flat[0], aux, grads


def _unflatten_grads(flat_args, argnums, nums, by_leaf):
    """Gradients in the structure of the differentiated arguments (a tuple for a tuple)."""
    per_arg = []
    for a in nums:
        _, tree, indices = flat_args[a]
        per_arg.append(pytree.unflatten(tree, [by_leaf[i] for i in indices]))
    single = type(argnums) is int or isinstance(argnums, numbers.Integral)
    return per_arg[0] if single else tuple(per_arg)


def value_and_grad(fn, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """``f`` and its gradient: ``value_and_grad(f)(x) -> (f(x), df/dx)``, as in JAX.

    With ``has_aux=True`` the function returns ``(value, aux)`` and the result is
    ``((value, aux), grad)``; ``holomorphic`` and ``allow_int`` as in ``grad``.
    """
    _no_reduce_axes(reduce_axes, "value_and_grad")

    @api_boundary
    @functools.wraps(fn)
    def value_and_grad_fn(*args, **kwargs):
        value, aux, grads = _gradient(fn, argnums, has_aux, True, args, kwargs, holomorphic,
                                      allow_int)
        return ((value, aux) if has_aux else value), grads
    return value_and_grad_fn


def grad(fn, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a real scalar function, as in ``jax.grad``.

    ``holomorphic=True``: ``f`` maps complex inputs to a complex scalar and the result is
    its complex derivative (``grad(lambda z: z**2, holomorphic=True)(z) == 2*z``).
    ``allow_int=True``: integer arguments get a ``float0`` zero gradient instead of an error.

    >>> grad(lambda x: tnp.sum(tnp.sin(x)))(np.ones(3))   # cos(1) three times
    """
    _no_reduce_axes(reduce_axes, "grad")

    @api_boundary
    @functools.wraps(fn)
    def grad_fn(*args, **kwargs):
        if has_aux:
            _, aux, grads = _gradient(fn, argnums, True, True, args, kwargs, holomorphic,
                                      allow_int)
            return grads, aux
        return _gradient(fn, argnums, False, False, args, kwargs, holomorphic, allow_int)[2]
    return grad_fn


def _no_reduce_axes(reduce_axes, op):
    if tuple(reduce_axes):
        raise UnsupportedError(f"reduce_axes={reduce_axes!r} names multi-device axes; "
                               "tf_numba computes on one device", op=op)


def _inexact_leaves(leaves):
    """Indices of the leaves that carry derivatives (float and complex ones)."""
    return [i for i, x in enumerate(leaves) if dtypes.is_inexact(_aval(_as_array(x)).dtype)]


def _is_float0(x):
    return getattr(x, "dtype", None) == dtypes.float0


def _float0_where_integer(values, avals):
    """JAX's derivatives of integer and bool values: ``float0`` zeros of their shape."""
    return [v if dtypes.is_inexact(a.dtype) else np.zeros(a.shape, dtypes.float0)
            for v, a in zip(values, avals)]


def _check_tangents(primal_leaves, tangent_leaves, primal_tree, tangent_tree):
    if primal_tree != tangent_tree:
        raise ArgumentError(f"tangents have structure {tangent_tree}, primals have "
                           f"{primal_tree}; they must match", op="jvp", source=user_source())
    for i, (p, t) in enumerate(zip(primal_leaves, tangent_leaves)):
        if _is_float0(t) and not dtypes.is_inexact(_aval(p).dtype):
            t = np.zeros(np.shape(t), _aval(p).dtype)   # JAX's tangent of an integer
        pa, ta = _aval(p), _aval(_as_array(t))
        if pa.shape != ta.shape or (dtypes.is_inexact(pa.dtype) and pa.dtype != ta.dtype):
            raise ShapeError(f"tangent {i} is {ta}, its primal is {pa}; a tangent needs "
                             "the primal's shape and dtype", op="jvp", source=user_source())


def jvp(fn, primals, tangents):
    """Forward mode: ``jvp(f, (x,), (t,)) -> (f(x), df(x)·t)``, as in JAX. An integer or
    bool input's tangent is a ``float0`` zero (JAX's) or a zero of its dtype; an integer
    output's is a ``float0`` zero."""
    primals, tangents = tuple(primals), tuple(tangents)
    p_leaves, p_tree = pytree.flatten(primals)
    t_leaves, t_tree = pytree.flatten(tangents)
    _check_tangents(p_leaves, t_leaves, p_tree, t_tree)
    diff = _inexact_leaves(p_leaves)
    traced = TracedFunction(fn, primals, {}, known=diff)
    mask = traced.mask(range(len(diff)))
    program = TRANSFORMS.get_or_build(
        ("jvp", len(diff)), traced.program,
        lambda p: simplify(ad.jvp_program(p, mask)[0]))
    tangent_args = [_as_array(t_leaves[i]) for i in diff]
    flat = _eager_results(eval_program(
        program, traced.inputs + traced.captured + traced.const_values + tangent_args))
    k = len(traced.program.outvars)
    tangents_out = _float0_where_integer(flat[k:], traced.program.out_avals)
    return (pytree.unflatten(traced.out_tree, flat[:k]),
            pytree.unflatten(traced.out_tree, tangents_out))


def linearize(fn, *primals):
    """``linearize(f, x) -> (f(x), f_jvp)`` where ``f_jvp(t)`` evaluates only the linear part."""
    p_leaves = pytree.flatten(primals)[0]
    diff = _inexact_leaves(p_leaves)
    traced = TracedFunction(fn, primals, {}, known=diff)
    k = len(traced.program.outvars)

    def build(program):
        jvp_prog, _ = ad.jvp_program(program, traced.mask(range(len(diff))))
        known, linear, _ = ad.partial_eval(jvp_prog, len(program.invars), k)
        return simplify(known), simplify(linear)
    known, linear = TRANSFORMS.get_or_build(("linearize", len(diff)), traced.program, build)
    outs = traced.call(known)
    residuals = outs[k:]

    @api_boundary
    def f_jvp(*tangents):
        t_leaves, t_tree = pytree.flatten(tangents)
        _check_tangents(traced.leaves, t_leaves, traced.in_tree, t_tree)
        ts = [_as_array(t_leaves[i]) for i in diff]
        out = _eager_results(eval_program(linear, residuals + ts))
        return pytree.unflatten(traced.out_tree, _float0_where_integer(
            out, traced.program.out_avals))
    return pytree.unflatten(traced.out_tree, _eager_results(outs[:k])), f_jvp


def vjp(fn, *primals, has_aux=False):
    """Reverse mode: ``vjp(f, x) -> (f(x), vjp_fn)`` with ``vjp_fn(ct) -> (ct_x,)``, as in JAX.

    With ``has_aux=True``: ``(f(x)[0], vjp_fn, aux)``. Integer and bool inputs get
    ``float0`` zero cotangents, and an integer output's cotangent may be one, as JAX's.
    """
    trees = {}

    def main_fn(*a):
        out, aux = _split_aux(fn(*a), has_aux, "vjp")
        out_leaves, trees["out"] = pytree.flatten(out)
        aux_leaves, trees["aux"] = pytree.flatten(aux)
        return out_leaves + aux_leaves   # aux rides along, never differentiated

    diff_idx = _inexact_leaves(pytree.flatten(primals)[0])
    traced = TracedFunction(main_fn, primals, {}, known=diff_idx)
    out_tree = trees["out"]
    k = out_tree.num_leaves
    n_all = len(traced.program.outvars)

    def build(program):
        known, transposed, _ = ad.vjp_parts(program, traced.mask(range(len(diff_idx))),
                                            [True] * k + [False] * (n_all - k))
        return simplify(known), simplify(transposed)
    known, transposed = TRANSFORMS.get_or_build(("vjp", len(diff_idx), k), traced.program,
                                                build)
    outs = traced.call(known)
    residuals = outs[n_all:]
    out_avals = traced.program.out_avals[:k]

    @api_boundary
    def vjp_fn(ct):
        ct_leaves, ct_tree = pytree.flatten(ct)
        if ct_tree != out_tree:
            raise ArgumentError(f"the cotangent structure {ct_tree} does not match the "
                               f"output structure {out_tree}", op="vjp", source=user_source())
        cts = []
        for i, (c, aval) in enumerate(zip(ct_leaves, out_avals)):
            if _is_float0(c) and not dtypes.is_inexact(aval.dtype):
                c = np.zeros(np.shape(c), aval.dtype)   # JAX's cotangent of an integer
            c = _as_array(c)
            if _aval(c).shape != aval.shape:
                raise ShapeError(f"cotangent {i} has shape {_aval(c).shape}, the "
                                 f"output has {aval.shape}", op="vjp", source=user_source())
            cts.append(c)
        it = iter(eval_program(transposed, residuals + cts))
        differentiated = set(diff_idx)
        grads = [next(it) if i in differentiated else np.zeros(_aval(x).shape, dtypes.float0)
                 for i, x in enumerate(traced.leaves)]
        return pytree.unflatten(traced.in_tree, _eager_results(grads))

    out = pytree.unflatten(out_tree, _eager_results(outs[:k]))
    if has_aux:
        return out, vjp_fn, pytree.unflatten(trees["aux"], _eager_results(outs[k:n_all]))
    return out, vjp_fn


def stop_gradient(x):
    """``x`` with a zero derivative (applies to every leaf of a pytree)."""
    from .ops.elementwise import stop_gradient as stop
    return pytree.tree_map(lambda a: stop(_as_array(a)) if dtypes.is_inexact(_aval(a).dtype)
                           else a, x)


def _axes_per_leaf(prefix, tree, what):
    """One axis (an int or None) per leaf of ``tree``, from a prefix pytree of axes."""
    out = []

    def visit(p, t):
        if p is None or isinstance(p, numbers.Integral):
            out.extend([None if p is None else int(p)] * len(pytree.flatten(t)[0]))
            return
        cls, fns = pytree._node_of(p)
        t_cls, t_fns = pytree._node_of(t)
        if cls is None or cls is not t_cls:
            raise ArgumentError(f"{what} {prefix!r} does not match the structure of the "
                               f"values it describes: {type(p).__name__} vs "
                               f"{type(t).__name__}", op="vmap", source=user_source())
        p_children, p_aux = fns[0](p)
        t_children, t_aux = t_fns[0](t)
        if p_aux != t_aux or len(p_children) != len(t_children):
            raise ArgumentError(f"{what} {prefix!r}: a node has {len(p_children)} "
                               f"entries where the values have {len(t_children)}",
                               op="vmap", source=user_source())
        for pc, tc in zip(p_children, t_children):
            visit(pc, tc)
    visit(prefix, tree)
    return out


def vmap(fn, in_axes=0, out_axes=0, axis_size=None):
    """Vectorize ``fn`` over a batch axis of its arguments, as ``jax.vmap``.

    ``in_axes``: an int or None for every argument, or a tuple with one entry per
    positional argument (each a prefix pytree of ints/None; None: not batched; negative
    axes count from the end). ``out_axes`` likewise for the output. ``axis_size`` is needed
    only when no argument is batched.

    >>> vmap(lambda x, w: tnp.dot(w, x), in_axes=(0, None))(np.ones((5, 3)), np.ones((2, 3))).shape
    (5, 2)
    """
    from .transforms.batching import batch_program, unbatched_aval

    @api_boundary
    @functools.wraps(fn)
    def vmapped(*args):
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != len(args):
                raise ArgumentError(f"in_axes has {len(in_axes)} entries but the function "
                                   f"was called with {len(args)} positional arguments",
                                   op="vmap", source=user_source())
            per_arg = tuple(in_axes)
        else:
            per_arg = (in_axes,) * len(args)
        leaves, in_tree = pytree.flatten(args)
        axes = []
        for a, p in zip(args, per_arg):
            axes.extend(_axes_per_leaf(p, a, "in_axes"))
        leaves = [_as_array(x) for x in leaves]
        avals = [_aval(x) for x in leaves]
        sizes = {}
        for i, (aval, ax) in enumerate(zip(avals, axes)):
            if ax is None:
                continue
            if not -len(aval.shape) <= ax < len(aval.shape):
                raise ShapeError(f"in_axes {ax} is out of range for argument leaf {i} of "
                                 f"shape {aval.shape}", op="vmap", source=user_source())
            axes[i] = ax % len(aval.shape)
            sizes.setdefault(aval.shape[axes[i]], []).append(i)
        if axis_size is not None:
            sizes.setdefault(axis_size, [])
        if len(sizes) != 1:
            if not sizes:
                raise ArgumentError("needs at least one batched argument (an in_axes "
                                   "entry that is not None) or axis_size",
                                   op="vmap", source=user_source())
            detail = "; ".join(f"size {n} for leaves {idx}" for n, idx in sizes.items())
            raise ShapeError(f"got different sizes along the mapped axes: {detail}",
                             op="vmap", source=user_source())
        size = next(iter(sizes))
        in_avals = [unbatched_aval(a, d) for a, d in zip(avals, axes)]
        trees = {}
        with ProgramBuilder() as builder:
            ins = [builder.new_input(a) for a in in_avals]
            out = fn(*pytree.unflatten(in_tree, ins))
            out_leaves, trees["out"] = pytree.flatten(out)
            program, captured = builder.build(out_leaves)
        out_tree = trees["out"]
        want = _axes_per_leaf(out_axes, pytree.unflatten(out_tree, range(len(out_leaves))),
                              "out_axes")
        want = [None if w is None else w % (len(v.aval.shape) + 1)
                for w, v in zip(want, program.outvars)]
        # constants become trailing unbatched inputs, so that calls tracing to the same
        # structure share the batched program (transforms/cache.py)
        consts = [value for _, value in program.consts]
        program = program.replace(invars=program.invars + tuple(v for v, _ in program.consts),
                                  consts=())
        in_dims = tuple(axes + [None] * (len(captured) + len(consts)))

        def build(program):
            batched, dims = batch_program(program, list(in_dims), size, want)
            return simplify(batched), dims
        batched, dims = TRANSFORMS.get_or_build(("vmap", in_dims, size, tuple(want)),
                                                program, build)
        for i, (w, d) in enumerate(zip(want, dims)):
            if w is None and d is not None:
                raise ArgumentError(f"out_axes is None for output leaf {i}, but that "
                                   "output depends on the batched arguments",
                                   op="vmap", source=user_source())
        flat = _eager_results(eval_program(batched, leaves + captured + consts))
        return pytree.unflatten(out_tree, flat)
    return vmapped


def _std_basis(avals):
    """One-hot rows for every element of ``avals``: per leaf, shape (N,) + leaf shape."""
    sizes = [int(np.prod(a.shape, dtype=int)) for a in avals]
    total = sum(sizes)
    out, offset = [], 0
    for aval, n in zip(avals, sizes):
        e = np.zeros((total, n), aval.dtype)
        e[offset:offset + n] = np.eye(n, dtype=aval.dtype)
        out.append(e.reshape((total,) + tuple(aval.shape)))
        offset += n
    return out, sizes


def _split_axis(x, sizes, axis, leading_shape, shapes):
    """``x`` cut along ``axis`` into pieces of ``sizes``; piece k reshaped to
    leading_shape + shapes[k] (``axis`` is last or first and contiguous with them)."""
    from .ops.layout import reshape, slice_in_dim
    x = _as_array(x)
    rank = len(_aval(x).shape)
    pieces, offset = [], 0
    for n, shape in zip(sizes, shapes):
        piece = slice_in_dim(x, offset, offset + n, 1, axis % rank)
        pieces.append(reshape(piece, tuple(leading_shape) + tuple(shape)))
        offset += n
    return pieces


def _of_argnums(fn, args, nums):
    """``fn`` as a function of the arguments ``nums`` alone, the others those of ``args``."""
    def partial_fn(*diff):
        full = list(args)
        for i, d in zip(nums, diff):
            full[i] = d
        return fn(*full)
    return partial_fn


def _jacobian(fn, argnums, forward, has_aux=False, holomorphic=False):
    fname = "jacfwd" if forward else "jacrev"

    @api_boundary
    @functools.wraps(fn)
    def jacobian_fn(*args):
        nums = _normalize_argnums(argnums, len(args))
        partial_fn = _of_argnums(fn, args, nums)
        diff_args = tuple(args[i] for i in nums)
        in_leaves, in_tree = pytree.flatten(diff_args)
        in_avals = [_aval(_as_array(x)) for x in in_leaves]
        for i, aval in enumerate(in_avals):
            if holomorphic and not dtypes.is_complex(aval.dtype):
                raise DTypeError(f"with holomorphic=True needs complex inputs; input leaf {i} "
                                 f"is {aval}", op=fname, source=user_source())
            if not dtypes.is_inexact(aval.dtype):
                raise DTypeError(f"needs float inputs; input leaf {i} is {aval}",
                                 op="jacfwd" if forward else "jacrev", source=user_source())
        in_shapes = [a.shape for a in in_avals]
        if forward:
            # one batched JVP over the standard basis of the inputs (JAX's jacfwd)
            basis, sizes = _std_basis(in_avals)

            def push(*ts):
                primal, tangent = jvp(partial_fn, diff_args, pytree.unflatten(in_tree, ts))
                if not has_aux:
                    return tangent
                _split_aux(primal, True, fname)
                return tangent[0], primal[1]    # aux: the primal's, the same in every column
            columns = vmap(push, 0, (-1, None) if has_aux else -1)(*basis)
            if has_aux:
                columns, aux = columns
            out_leaves, out_tree = pytree.flatten(columns)
            blocks = [_split_axis(c, sizes, -1, _aval(_as_array(c)).shape[:-1], in_shapes)
                      for c in out_leaves]
        else:
            # one VJP, pulled back along a batch of one-hot cotangents (JAX's jacrev)
            checked = (lambda *d: _split_aux(partial_fn(*d), True, fname)) if has_aux \
                else partial_fn         # a function that returns no pair: jacrev's error
            out, f_vjp, *aux = vjp(checked, *diff_args, has_aux=has_aux)
            aux = aux[0] if has_aux else None
            out_leaves, out_tree = pytree.flatten(out)
            out_avals = [_aval(_as_array(x)) for x in out_leaves]
            basis, sizes = _std_basis(out_avals)

            def pull(*cts):
                return f_vjp(pytree.unflatten(out_tree, cts))
            rows = pytree.flatten(vmap(pull)(*basis))[0]
            per_in = [_split_axis(r, sizes, 0, (), [oa.shape + ia.shape for oa in out_avals])
                      for r, ia in zip(rows, in_avals)]
            blocks = [[per_in[i][o] for i in range(len(in_avals))]
                      for o in range(len(out_avals))]
        per_out = [pytree.unflatten(in_tree, _eager_results(row)) for row in blocks]
        if isinstance(argnums, numbers.Integral):
            per_out = [p[0] for p in per_out]
        jac = pytree.unflatten(out_tree, per_out)
        return (jac, aux) if has_aux else jac
    return jacobian_fn


def jacfwd(fn, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian by forward mode (a JVP vmapped over the input basis): shape
    out.shape + in.shape. With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the
    result is ``(jacobian, aux)``, as in JAX. ``holomorphic=True`` checks that the inputs
    are complex (the Jacobian of a complex function is its complex derivative either way)."""
    return _jacobian(fn, argnums, forward=True, has_aux=has_aux, holomorphic=holomorphic)


def jacrev(fn, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian by reverse mode (one VJP, vmapped over the output basis): shape
    out.shape + in.shape. ``has_aux`` and ``holomorphic`` as in ``jacfwd``."""
    if allow_int:
        raise UnsupportedError("allow_int=True: the Jacobian in an integer input is a "
                               "float0 zero; leave that input out of argnums", op="jacrev")
    return _jacobian(fn, argnums, forward=False, has_aux=has_aux, holomorphic=holomorphic)


def hessian(fn, argnums=0, has_aux=False, holomorphic=False):
    """``jacfwd(jacrev(f))``: the matrix of second derivatives of a scalar function
    (``has_aux``: ``f`` returns ``(output, aux)``, the result is ``(hessian, aux)``)."""
    return jacfwd(jacrev(fn, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


jacobian = jacrev   # jax.jacobian's name: reverse mode


def eval_shape(fn, *args, **kwargs):
    """The shapes and dtypes ``fn(*args, **kwargs)`` would return, as a pytree of
    ``ShapeDtype`` (``jax.eval_shape``): ``fn`` is traced, not run. Arguments may be
    arrays, ``ShapeDtype`` or anything with ``.shape`` and ``.dtype``.

    >>> eval_shape(lambda x: tnp.outer(x, x).astype(np.float32), ShapeDtype((3,)))
    ShapeDtype(f32[3,3])
    """
    def stand_in(x):
        if isinstance(x, (ShapeDtype, Tracer, np.ndarray)) or not (
                hasattr(x, "shape") and hasattr(x, "dtype")):
            return x
        return ShapeDtype(x.shape, x.dtype)
    args = pytree.tree_map(stand_in, args)
    traced = TracedFunction(fn, args, kwargs)
    outs = [ShapeDtype(a.shape, a.dtype) for a in traced.program.out_avals]
    return pytree.unflatten(traced.out_tree, outs)


def block_until_ready(x):
    """``x`` itself (``jax.block_until_ready``): tf_numba computes synchronously, so its
    results are NumPy arrays that are ready when a call returns."""
    return x


def typeof(x):
    """The abstract value of ``x``: its shape and dtype as a ``ShapedArray``
    (``jax.typeof``), for an array, a Python number or a traced value."""
    return _aval(_as_array(x))


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``, at arguments shaped as ``primals``
    (only their shapes and dtypes matter), as ``jax.linear_transpose``:
    ``linear_transpose(f, x)(ct)`` is a tuple with one cotangent per argument.

    ``fun`` must be linear in its arguments (JAX checks; here a nonlinear ``fun`` gives
    the transpose of its derivative at zero).

    >>> linear_transpose(lambda x: 2 * x, 1.0)(3.0)
    (6.0,)
    """
    _no_reduce_axes(reduce_axes, "linear_transpose")
    leaves, tree = pytree.flatten(primals)
    zeros = pytree.unflatten(tree, [np.zeros(np.shape(x), _aval(_as_array(x)).dtype)
                                    for x in leaves])
    _, pullback = vjp(fun, *zeros)

    @functools.wraps(fun)
    def transposed(cotangent):
        return tuple(pullback(cotangent))
    return transposed


def named_call(fun, *, name=None):
    """``fun`` itself (``jax.named_call``): names label JAX's staged programs; a tf_numba
    program names each equation's source line instead."""
    return fun


class named_scope:
    """A ``with`` block that names what it traces (``jax.named_scope``); a tf_numba
    program names each equation's source line instead, so the name changes nothing."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise ArgumentError(f"the name must be a string, got {name!r}",
                                op="named_scope")
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """``(fwd, bwd)``: ``fwd(*args)`` is ``(fun(*args), residuals)`` (``(out, residuals,
    aux)`` with ``has_aux``) and ``bwd(residuals, ct)`` the cotangents of the arguments
    ``argnums`` names, as ``jax.fwd_and_bwd``. The residuals are ``vjp``'s pullback, whose
    program is transformed once and cached, so ``jitted`` changes nothing here.

    >>> fwd, bwd = fwd_and_bwd(lambda x, w: x @ w, argnums=(0, 1))
    """
    def fwd(*args):
        nums = _normalize_argnums(argnums, len(args))
        return vjp(_of_argnums(fun, args, nums), *[args[i] for i in nums], has_aux=has_aux)

    def bwd(pullback, cotangent):
        grads = pullback(cotangent)
        return grads[0] if isinstance(argnums, numbers.Integral) else grads
    return fwd, bwd
