"""Structured control flow: ``cond``, ``while_loop``, ``scan`` and ``checkpoint``, primitives
whose parameters carry sub-programs (the user-facing functions are in ``tf_numba.lax``).

| primitive | operands | sub-programs |
| --- | --- | --- |
| ``cond`` | index (int32), *operands | ``branches``: one program per branch, same signature |
| ``while_loop`` | *cond_consts, *body_consts, *init | ``cond`` (consts, carry) -> bool, |
| | | ``body`` (consts, carry) -> carry |
| ``scan`` | *consts, *init, *xs | ``body`` (consts, carry, x) -> (carry, y) |
| ``checkpoint`` | *args | ``body``: recomputed in the backward pass instead of stored |

Sub-programs are closed: they have no consts of their own (values they close over are
operands), so the code generator can inline them into a kernel's loop body.

Reverse mode (linearize, then transpose) needs one more rule role here, ``partial_eval``:
the JVP of a loop is one loop carrying primals and tangents together, which a split by
dependency cannot separate. The ``scan`` rule splits it as JAX does: a known scan that
also emits each iteration's residuals (stacked along the loop axis; residuals that do
not change between iterations are hoisted out and passed once) and a linear scan over
them, which transposes into a reversed scan of the transposed body.

``while_loop`` in reverse mode (JAX refuses it): the known part is a *recording* while
loop, which also returns the carries at the start of every iteration (a tape) and an
``active`` flag per iteration; the number of iterations is a symbolic length (``trips``,
a fresh ``Sym`` per loop) that only the tape's own shape carries. The tangent part is a
``scan`` over that tape, so everything after the forward loop reuses the scan rules:
the backward pass is a reversed scan over the recorded carries. Memory is linear in the
trip count (the carries, plus the scan's residuals). The NumPy impl records into a list;
the compiled kernel grows its tape buffers by doubling.
"""
import itertools

import numpy as np

from ..core import dtypes
from ..core.interpreter import eval_program, run_concrete
from ..core.ir import Eqn, Program, ShapedArray, Var
from ..core.linear import (Zero, aval_of, has_tangent, instantiate, is_undefined)
from ..core.primitive import Primitive, register
from ..core.shapes import Sym
from ..core.trace import ProgramBuilder
from ..errors import DTypeError, ShapeError, UnsupportedError
from ..transforms import ad, batching
from ..transforms.simplify import dead_code_elimination, simplify
from . import elementwise as ew
from . import layout

PRIMS = {}


def _declare(name, abstract_eval, impl):
    prim = Primitive(name, abstract_eval, impl, multiple_results=True)
    PRIMS[name] = prim
    return prim


# ---------------------------------------------------------------- sub-program helpers

def trace_program(fn, avals):
    """Trace ``fn`` (flat list in, flat list out) into a closed program.

    Returns (program, leading): the program's inputs are ``leading`` values (the consts and
    outer tracers ``fn`` closed over, to be passed as operands) followed by ``avals``.
    """
    with ProgramBuilder() as builder:
        ins = [builder.new_input(a) for a in avals]
        outs = fn(*ins)
        program, captured = builder.build(list(outs))
    return close(simplify(program), len(avals), captured)


def close(program, n_explicit, captured=()):
    """Move a program's consts and captured inputs to the front as ordinary inputs."""
    const_vars = [v for v, _ in program.consts]
    values = [c for _, c in program.consts]
    explicit = list(program.invars[:n_explicit])
    extra = list(program.invars[n_explicit:])
    closed = program.replace(invars=const_vars + extra + explicit, consts=())
    return closed, values + list(captured)


def emit(fn, in_vars, out_vars):
    """The equations ``fn`` traces to, reading ``in_vars`` and defining ``out_vars``.

    Used by the partial-evaluation rules, which replace one equation of a program by
    several. Returns (eqns, new_consts).
    """
    with ProgramBuilder() as builder:
        ins = [builder.new_input(v.aval) for v in in_vars]
        outs = fn(*ins)
        program, captured = builder.build(list(outs))
    assert not captured
    rename = dict(zip(program.invars, in_vars))
    eqns = list(program.eqns)
    defined = {}
    for i, eqn in enumerate(eqns):
        for v in eqn.outvars:
            defined[v] = i
    targets = {}
    extra = []
    for src, dst in zip(program.outvars, out_vars):
        if type(src) is Var and src in defined and src not in targets:
            targets[src] = dst
        else:   # an input, a literal, or an output returned twice: copy it
            extra.append(Eqn(_copy_p, (rename.get(src, src),), (dst,), {}, None))
    rename.update(targets)

    def sub(v):
        return rename.get(v, v) if type(v) is Var else v
    eqns = [Eqn(e.prim, tuple(sub(v) for v in e.invars), tuple(sub(v) for v in e.outvars),
                e.params, e.source) for e in eqns]
    return eqns + extra, list(program.consts)


# an identity primitive, only for ``emit`` to define a var as another value
_copy_p = Primitive("copy", lambda x: x, lambda x: np.array(x))
register("jvp", _copy_p, lambda p, t: (_copy_p.bind(p[0]), t[0]))
register("transpose", _copy_p, lambda ct, x: [ct])
register("batch", _copy_p, lambda a, d: (_copy_p.bind(a[0]), d[0]))


def _permute(program, invars, outvars):
    return program.replace(invars=list(invars), outvars=list(outvars))


def _split(seq, *sizes):
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start:start + n]))
        start += n
    out.append(list(seq[start:]))
    return out


def _zeros(aval):
    return layout.full(aval.shape, 0, aval.dtype)


def _same_aval(a, b):
    return a.dtype == b.dtype and len(a.shape) == len(b.shape) and all(
        x is y or x == y for x, y in zip(a.shape, b.shape))


def _stacked(aval, length):
    return ShapedArray((length,) + tuple(aval.shape), aval.dtype)


def _unstacked(aval):
    return ShapedArray(aval.shape[1:], aval.dtype)


_trip_ids = itertools.count()


def fresh_trips():
    """A new symbolic length for the trip count of one recording while loop."""
    return Sym(f"trips{next(_trip_ids)}")


# ---------------------------------------------------------------- scan

def _scan_eval(*avals, body, num_consts, num_carry, length, reverse):
    consts, carry, xs = _split(avals, num_consts, num_carry)
    if len(body.invars) != len(avals):
        raise ShapeError(f"body takes {len(body.invars)} inputs, got {len(avals)} operands",
                         op="scan")
    outs = body.out_avals
    for k, (a, o) in enumerate(zip(carry, outs)):
        if not _same_aval(a, o):
            raise ShapeError(f"the body returns carry {k} as {o}, but it enters the loop as "
                             f"{a}; a carry must keep its shape and dtype", op="scan")
    if isinstance(length, Sym):
        # a scan over a while loop's tape: the length is that of the tape, which is
        # concrete once the tape is (a residual evaluated by vjp), symbolic before
        concrete = [a.shape[0] for a in xs if a.shape and type(a.shape[0]) is int]
        length = concrete[0] if concrete else length
    for k, (a, _) in enumerate(zip(xs, body.invars[num_consts + num_carry:])):
        if not a.shape or isinstance(a.shape[0], Sym) and isinstance(length, int):
            continue
        if not a.shape or not (a.shape[0] is length or a.shape[0] == length):
            raise ShapeError(f"xs leaf {k} of shape {a.shape} does not have the scan length "
                             f"{length} as its leading axis", op="scan")
    return tuple(outs[:num_carry]) + tuple(_stacked(y, length) for y in outs[num_carry:])


def _scan_impl(*args, body, num_consts, num_carry, length, reverse):
    consts, carry, xs = _split(args, num_consts, num_carry)
    n = length if type(length) is int else (np.shape(xs[0])[0] if xs else 0)
    y_avals = body.out_avals[num_carry:]
    ys = [np.empty((n,) + tuple(a.shape), a.dtype) for a in y_avals] if all(
        type(d) is int for a in y_avals for d in a.shape) else None
    # the body runs once a step, on values the loop made: no trace to look for, and a
    # carry stays what the body returned until the end (a body of a few small equations
    # took as long as the loop's own bookkeeping)
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        outs = run_concrete(body, consts + carry + [x[i] for x in xs])
        carry = outs[:num_carry]
        if ys is None:
            ys = [np.empty((n,) + np.shape(y), a.dtype) for y, a in zip(outs[num_carry:], y_avals)]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    if ys is None:
        raise ShapeError("an empty scan over outputs of symbolic shape", op="scan")
    return [np.asarray(c) for c in carry] + ys


scan_p = _declare("scan", _scan_eval, _scan_impl)


def scan_bind(consts, init, xs, body, length, reverse):
    """Bind ``scan`` on flat lists of consts, initial carries and stacked inputs."""
    return scan_p.bind(*consts, *init, *xs, body=body, num_consts=len(consts),
                       num_carry=len(init), length=length, reverse=bool(reverse))


# ---------------------------------------------------------------- while_loop

def _while_eval(*avals, cond, body, cond_nconsts, body_nconsts, trips):
    cc, bc, carry = _split(avals, cond_nconsts, body_nconsts)
    pred = cond.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise DTypeError(f"cond_fun must return a bool scalar, got {pred}", op="while_loop")
    for k, (a, o) in enumerate(zip(carry, body.out_avals)):
        if not _same_aval(a, o):
            raise ShapeError(f"body_fun returns carry {k} as {o}, but it enters the loop as "
                             f"{a}; a carry must keep its shape and dtype", op="while_loop")
    if trips is None:
        return tuple(carry)
    return (tuple(carry) + (ShapedArray((trips,), dtypes.bool_),)
            + tuple(_stacked(a, trips) for a in carry))


def _while_impl(*args, cond, body, cond_nconsts, body_nconsts, trips):
    cc, bc, carry = _split(args, cond_nconsts, body_nconsts)
    carry = [np.asarray(c) for c in carry]
    tape = []
    while bool(eval_program(cond, cc + carry)[0]):
        if trips is not None:
            tape.append(carry)
        carry = [np.asarray(c) for c in eval_program(body, bc + carry)]
    if trips is None:
        return carry
    active = np.ones(len(tape), dtypes.bool_)
    tapes = [np.stack([t[k] for t in tape]) if tape else np.empty((0,) + c.shape, c.dtype)
             for k, c in enumerate(carry)]
    return carry + [active] + tapes


while_p = _declare("while_loop", _while_eval, _while_impl)


def while_bind(cond_consts, body_consts, init, cond, body, trips=None):
    return while_p.bind(*cond_consts, *body_consts, *init, cond=cond, body=body,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts),
                        trips=trips)


# ---------------------------------------------------------------- cond

def _cond_eval(index, *operands, branches):
    if index.shape != () or not dtypes.is_integer(index.dtype):
        raise DTypeError(f"the branch index must be an int scalar, got {index}", op="cond")
    outs = branches[0].out_avals
    for k, b in enumerate(branches):
        if len(b.invars) != len(operands):
            raise ShapeError(f"branch {k} takes {len(b.invars)} operands, got "
                             f"{len(operands)}", op="cond")
        if len(b.out_avals) != len(outs) or not all(
                _same_aval(x, y) for x, y in zip(b.out_avals, outs)):
            raise ShapeError(f"branch {k} returns {list(b.out_avals)} but branch 0 returns "
                             f"{list(outs)}; every branch must return the same shapes and "
                             "dtypes", op="cond")
    return tuple(outs)


def _cond_impl(index, *operands, branches):
    k = min(max(int(index), 0), len(branches) - 1)
    return [np.asarray(o) for o in eval_program(branches[k], list(operands))]


cond_p = _declare("cond", _cond_eval, _cond_impl)


# ---------------------------------------------------------------- checkpoint

def _checkpoint_eval(*avals, body):
    return tuple(body.out_avals)


def _checkpoint_impl(*args, body):
    return [np.asarray(o) for o in eval_program(body, list(args))]


checkpoint_p = _declare("checkpoint", _checkpoint_eval, _checkpoint_impl)


# ---------------------------------------------------------------- rule helpers

def lift(program):
    """(``program`` with its consts as leading inputs, the const values)."""
    if not program.consts:
        return program, []
    return (program.replace(invars=[v for v, _ in program.consts] + list(program.invars),
                            consts=()), [c for _, c in program.consts])


def join(programs):
    """Lift the consts of programs that must share one signature (branches): each gets an
    input for every program's consts, its own used and the others' ignored."""
    per = [[v for v, _ in p.consts] for p in programs]
    values = [c for p in programs for _, c in p.consts]
    out = []
    for k, p in enumerate(programs):
        lead = [v for j, vs in enumerate(per) for v in (vs if j == k else
                                                         [Var(u.aval) for u in vs])]
        out.append(p.replace(invars=lead + list(p.invars), consts=()))
    return out, values


def _const_vars(values):
    """New program consts for the values a rule's sub-programs closed over."""
    pairs = [(Var(ShapedArray(np.shape(c), dtypes.canonical(np.asarray(c).dtype))), c)
             for c in values]
    return [v for v, _ in pairs], pairs


def _tangent_mask(tangents, avals):
    return [type(t) is not Zero and has_tangent(a) for t, a in zip(tangents, avals)]


def _jvp_fixpoint(body, consts_nz, carry_nz, rest_nz, num_carry):
    """jvp_program of a loop body, with the carries whose tangents are nonzero grown until
    the body maps that set into itself."""
    carry_inexact = [has_tangent(v.aval) for v in
                     body.invars[len(consts_nz):len(consts_nz) + len(carry_nz)]]
    while True:
        jprog, nonzero = ad.jvp_program(body, consts_nz + carry_nz + rest_nz)
        grown = [a or (b and e) for a, b, e in zip(carry_nz, nonzero[:num_carry], carry_inexact)]
        if grown == carry_nz:
            return jprog, nonzero, carry_nz
        carry_nz = grown


def _jvp_layout(jprog, n_in, mask, n_out):
    """Split a jvp_program's inputs into (primal vars, tangent var or None per input) and
    its outputs into (primal outs, tangent outs)."""
    tangents = iter(jprog.invars[n_in:])
    tvars = [next(tangents) if m else None for m in mask]
    return list(jprog.invars[:n_in]), tvars, list(jprog.outvars[:n_out]), \
        list(jprog.outvars[n_out:])


# ---------------------------------------------------------------- scan: JVP

def _scan_jvp(primals, tangents, *, body, num_consts, num_carry, length, reverse):
    n_in, n_out = len(primals), len(body.outvars)
    mask = _tangent_mask(tangents, [v.aval for v in body.invars])
    cnz, knz, xnz = _split(mask, num_consts, num_carry)
    jprog, nonzero, knz = _jvp_fixpoint(body, cnz, knz, xnz, num_carry)
    mask = cnz + knz + xnz
    pvars, tvars, pouts, touts = _jvp_layout(jprog, n_in, mask, n_out)
    pc, pk, px = _split(pvars, num_consts, num_carry)
    tc, tk, tx = _split(tvars, num_consts, num_carry)
    ynz = nonzero[num_carry:]
    pko, py = _split(pouts, num_carry)
    tko, ty = _split(touts, num_carry)

    def present(xs):
        return [x for x in xs if x is not None]
    invars = pc + present(tc) + pk + present(tk) + px + present(tx)
    outvars = (pko + [t for t, m in zip(tko, knz) if m] + py
               + [t for t, m in zip(ty, ynz) if m])
    new_body, lead = lift(simplify(_permute(jprog, invars, outvars)))
    pcv, pkv, pxv = _split(primals, num_consts, num_carry)
    tcv, tkv, txv = _split(tangents, num_consts, num_carry)

    def picked(vals, m):
        return [instantiate(t) for t, keep in zip(vals, m) if keep]
    consts = lead + pcv + picked(tcv, cnz)
    init = pkv + picked(tkv, knz)
    xs = pxv + picked(txv, xnz)
    outs = scan_bind(consts, init, xs, new_body, length, reverse)
    n_tk = sum(knz)
    carry, tcarry, ys, tys = _split(outs, num_carry, n_tk, len(py))
    tcarry, tys = iter(tcarry), iter(tys)
    out_t = [next(tcarry) if m else Zero(aval_of(c)) for c, m in zip(carry, knz)]
    out_t += [next(tys) if m else Zero(aval_of(y)) for y, m in zip(ys, ynz)]
    return carry + ys, out_t


# ---------------------------------------------------------------- scan: partial eval

def _invariant_vars(program, const_invars):
    """Vars of ``program`` computed from its loop-invariant inputs only, and their eqns."""
    invariant = set(const_invars)
    eqns = []
    for eqn in program.eqns:
        if all(type(v) is not Var or v in invariant for v in eqn.invars):
            invariant.update(eqn.outvars)
            eqns.append(eqn)
    return invariant, eqns


def _scan_partial_eval(eqn, unknowns):
    p = eqn.params
    body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
    length, reverse = p["length"], p["reverse"]
    ny = len(body.outvars) - nk
    cu, ku, xu = _split(unknowns, nc, nk)
    while True:
        known, lin, out_uk, nres = ad.partial_eval_program(body, cu + ku + xu,
                                                             ku + [False] * ny)
        grown = [a or b for a, b in zip(ku, out_uk[:nk])]
        if grown == ku:
            break
        ku = grown
    yu = out_uk[nk:]
    bc, bk, bx = _split(body.invars, nc, nk)
    oc, ok, ox = _split(eqn.invars, nc, nk)
    ocar, oys = _split(eqn.outvars, nk)
    n_known_outs = len(known.outvars) - nres
    residuals = list(known.outvars[n_known_outs:])
    known_consts = [v for v, u in zip(bc, cu) if not u]
    invariant, inv_eqns = _invariant_vars(known, known_consts)
    x_position = {v: j for j, v in enumerate(bx)}
    hoisted = [r for r in residuals if r in invariant]
    from_xs = [r for r in residuals if r not in invariant and r in x_position]
    stacked = [r for r in residuals if r not in invariant and r not in x_position]

    hoist = dead_code_elimination(Program(known_consts, (), inv_eqns, hoisted))
    known_body = simplify(known.replace(outvars=list(known.outvars[:n_known_outs])
                                           + stacked))
    lin_invars = dict(zip(residuals, lin.invars[:nres]))
    uc, uk, ux = _split(lin.invars[nres:], sum(cu), sum(ku))
    lin_body = simplify(_permute(
        lin, [lin_invars[r] for r in hoisted] + uc + uk
        + [lin_invars[r] for r in from_xs + stacked] + ux, lin.outvars))

    def pick(vals, flags, want):
        return [v for v, f in zip(vals, flags) if f == want]
    known_in = pick(oc, cu, False) + pick(ok, ku, False) + pick(ox, xu, False)
    known_targets = pick(ocar, ku, False) + pick(oys, yu, False)
    hoist_vars = [Var(r.aval) for r in hoisted]
    stack_vars = [Var(_stacked(r.aval, length)) for r in stacked]
    n_kc, n_kk = nc - sum(cu), nk - sum(ku)

    def known_fn(*ins):
        kc, kk, kx = _split(ins, n_kc, n_kk)
        inv = eval_program(hoist, kc)
        outs = scan_bind(kc, kk, kx, known_body, length, reverse)
        return outs[:n_known_outs] + inv + outs[n_known_outs:]
    k_eqns, k_consts = emit(known_fn, known_in, known_targets + hoist_vars + stack_vars)
    if not any(out_uk):
        return k_eqns, [], out_uk, k_consts

    xs_res = [ox[x_position[r]] for r in from_xs]
    lin_in = (hoist_vars + pick(oc, cu, True) + pick(ok, ku, True) + xs_res + stack_vars
              + pick(ox, xu, True))
    n_lc, n_lk = len(hoist_vars) + sum(cu), sum(ku)

    def lin_fn(*ins):
        lc, lk, lx = _split(ins, n_lc, n_lk)
        return scan_bind(lc, lk, lx, lin_body, length, reverse)
    l_eqns, l_consts = emit(lin_fn, lin_in, pick(ocar, ku, True) + pick(oys, yu, True))
    return k_eqns, l_eqns, ku + yu, k_consts + l_consts


# ---------------------------------------------------------------- scan: transpose

def _scan_transpose(cts, *args, body, num_consts, num_carry, length, reverse):
    # The linear scan's consts and xs are residuals (known) or linear (undefined); its
    # carries are linear. The transpose runs the other way, carrying the carry cotangent
    # and an accumulator for each linear const, and emits the linear xs' cotangents.
    consts, init, xs = _split(args, num_consts, num_carry)
    bc, bk, bx = _split(body.invars, num_consts, num_carry)
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    res_c = [v for v, u in zip(bc, c_lin) if not u]
    res_x = [v for v, u in zip(bx, x_lin) if not u]
    lin_c = [v for v, u in zip(bc, c_lin) if u]
    lin_x = [v for v, u in zip(bx, x_lin) if u]
    reordered = _permute(body, res_c + res_x + lin_c + bk + lin_x, body.outvars)
    t_prog = ad.transpose_program(reordered, len(res_c) + len(res_x))
    n_rc, n_rx, n_lc = len(res_c), len(res_x), len(lin_c)

    def t_body(*a):
        rc, acc, ct_k, rx, ct_y = _split(a, n_rc, n_lc, num_carry, n_rx)
        outs = eval_program(t_prog, rc + rx + ct_k + ct_y)
        d_c, d_k, d_x = _split(outs, n_lc, num_carry)
        return [ew.add(x, y) for x, y in zip(acc, d_c)] + d_k + d_x

    def aval(v):
        return v.aval
    avals = ([aval(v) for v in res_c] + [aval(v) for v in lin_c] + [aval(v) for v in bk]
             + [aval(v) for v in res_x] + [aval(o) for o in body.outvars[num_carry:]])
    tb, lead = trace_program(t_body, avals)
    tb = simplify(tb)
    ct_carry = [instantiate(c) for c in cts[:num_carry]]
    ct_ys = [instantiate(c) for c in cts[num_carry:]]
    acc0 = [_zeros(v.aval) for v in lin_c]
    res_cv = [c for c, u in zip(consts, c_lin) if not u]
    res_xv = [x for x, u in zip(xs, x_lin) if not u]
    outs = scan_bind(lead + res_cv, acc0 + ct_carry, res_xv + ct_ys, tb, length, not reverse)
    d_c, d_k, d_x = _split(outs, n_lc, num_carry)
    d_c, d_x = iter(d_c), iter(d_x)
    return ([next(d_c) if u else None for u in c_lin]
            + [d if is_undefined(a) else None for d, a in zip(d_k, init)]
            + [next(d_x) if u else None for u in x_lin])


# ---------------------------------------------------------------- scan: batching

def _scan_batch(args, dims, *, body, num_consts, num_carry, length, reverse):
    B = batching
    size = B.axis_size_of(args, dims)
    consts, init, xs = _split(args, num_consts, num_carry)
    cd, kd, xd = _split(dims, num_consts, num_carry)
    # a batch axis on the stacked axis of xs moves behind it: the body sees x[i]
    xs = [x if d is None else B.moveaxis(x, d, max(d, 1)) for x, d in zip(xs, xd)]
    x_body = [None if d is None else max(d, 1) - 1 for d in xd]
    batched = [d is not None for d in kd]
    while True:
        carry_dims = [0 if b else None for b in batched]
        nb, out_dims = B.batch_program(body, cd + carry_dims + x_body, size,
                                       carry_dims + [None] * (len(body.outvars) - num_carry))
        grown = [b or d is not None for b, d in zip(batched, out_dims[:num_carry])]
        if grown == batched:
            break
        batched = grown
    nb, lead = lift(simplify(nb))
    init = [B.bdim_to(c, d, 0, size) if b else c for c, d, b in zip(init, kd, batched)]
    outs = scan_bind(lead + consts, init, xs, nb, length, reverse)
    y_dims = [None if d is None else d + 1 for d in out_dims[num_carry:]]
    return outs, carry_dims + y_dims


register("jvp", scan_p, _scan_jvp)
register("partial_eval", scan_p, _scan_partial_eval)
register("transpose", scan_p, _scan_transpose)
register("batch", scan_p, _scan_batch)


# ---------------------------------------------------------------- while_loop: JVP

def _while_jvp(primals, tangents, *, cond, body, cond_nconsts, body_nconsts, trips):
    if trips is not None:
        return _recording_while_jvp(primals, tangents, cond=cond, body=body,
                                    cond_nconsts=cond_nconsts, body_nconsts=body_nconsts,
                                    trips=trips)
    cc, bc, init = _split(primals, cond_nconsts, body_nconsts)
    _, tbc, tinit = _split(tangents, cond_nconsts, body_nconsts)
    nk = len(init)
    bnz = _tangent_mask(tbc, [v.aval for v in body.invars[:body_nconsts]])
    knz = _tangent_mask(tinit, [v.aval for v in body.invars[body_nconsts:]])
    jprog, _, knz = _jvp_fixpoint(body, bnz, knz, [], nk)
    pvars, tvars, pouts, touts = _jvp_layout(jprog, len(body.invars), bnz + knz, nk)
    pb, pk = _split(pvars, body_nconsts)
    tb, tk = _split(tvars, body_nconsts)
    new_body, lead = lift(simplify(_permute(
        jprog, pb + [t for t in tb if t is not None] + pk + [t for t in tk if t is not None],
        pouts + [t for t, m in zip(touts, knz) if m])))
    cc_vars, ck_vars = _split(cond.invars, cond_nconsts)
    new_cond = cond.replace(invars=cc_vars + ck_vars + [Var(v.aval) for v, m in
                                                        zip(ck_vars, knz) if m])
    outs = while_bind(cc, lead + bc + [instantiate(t) for t, m in zip(tbc, bnz) if m],
                      init + [instantiate(t) for t, m in zip(tinit, knz) if m],
                      new_cond, new_body)
    carry, tcarry = _split(outs, nk)
    tcarry = iter(tcarry)
    return carry, [next(tcarry) if m else Zero(aval_of(c)) for c, m in zip(carry, knz)]


def _tape_scan_body(body, body_nconsts, carry_unknown, tangent_body=None):
    """The body of a scan over a recorded while loop's tape.

    Its consts are the loop's body consts, its carries the loop's carries flagged in
    ``carry_unknown``, its xs the ``active`` flag and the recorded values of the other
    carries. An iteration the loop did not run for this example (``active`` false, only
    under vmap) leaves the carries as they are.
    """
    nk = len(carry_unknown)

    def run(*a):
        bc, uk, rest = _split(a, body_nconsts, sum(carry_unknown))
        active, kk = rest[0], rest[1:]
        uk_it, kk_it = iter(uk), iter(kk)
        carry = [next(uk_it) if u else next(kk_it) for u in carry_unknown]
        outs = eval_program(body, list(bc) + carry)
        new = [o for o, u in zip(outs[:nk], carry_unknown) if u]
        return [ew.select(active, n, o) for n, o in zip(new, uk)]
    avals = ([v.aval for v in body.invars[:body_nconsts]]
             + [v.aval for v, u in zip(body.invars[body_nconsts:], carry_unknown) if u]
             + [ShapedArray((), dtypes.bool_)]
             + [v.aval for v, u in zip(body.invars[body_nconsts:], carry_unknown) if not u])
    program, lead = trace_program(run, avals)
    return simplify(program), lead


def _recording_while_jvp(primals, tangents, *, cond, body, cond_nconsts, body_nconsts,
                         trips):
    # the recorded loop runs on primals; the tangents of its carries and of its tape come
    # from a scan over the tape (forward mode through the recorded iterations)
    cc, bc, init = _split(primals, cond_nconsts, body_nconsts)
    _, tbc, tinit = _split(tangents, cond_nconsts, body_nconsts)
    nk = len(init)
    outs = while_p.bind(*primals, cond=cond, body=body, cond_nconsts=cond_nconsts,
                        body_nconsts=body_nconsts, trips=trips)
    carry, active, tapes = outs[:nk], outs[nk], outs[nk + 1:]
    bnz = _tangent_mask(tbc, [v.aval for v in body.invars[:body_nconsts]])
    knz = _tangent_mask(tinit, [v.aval for v in body.invars[body_nconsts:]])
    jprog, _, knz = _jvp_fixpoint(body, bnz, knz, [], nk)
    if not any(knz):
        return outs, [Zero(aval_of(o)) for o in outs]
    n_t = sum(knz)

    def run(*a):
        pb, tb, tk, act, pk = _split(a, body_nconsts, sum(bnz), n_t, 1)
        res = eval_program(jprog, list(pb) + list(pk) + list(tb) + list(tk))
        new = [t for t, m in zip(res[nk:], knz) if m]
        return [ew.select(act[0], n, o) for n, o in zip(new, tk)] + list(tk)
    avals = ([v.aval for v in body.invars[:body_nconsts]]
             + [v.aval for v, m in zip(body.invars[:body_nconsts], bnz) if m]
             + [v.aval for v, m in zip(body.invars[body_nconsts:], knz) if m]
             + [ShapedArray((), dtypes.bool_)] + [v.aval for v in body.invars[body_nconsts:]])
    prog, lead = trace_program(run, avals)
    res = scan_bind(lead + bc + [instantiate(t) for t, m in zip(tbc, bnz) if m],
                    [instantiate(t) for t, m in zip(tinit, knz) if m],
                    [active] + tapes, simplify(prog), trips, False)
    t_final, t_tapes = iter(res[:n_t]), iter(res[n_t:])
    out_t = [next(t_final) if m else Zero(aval_of(c)) for c, m in zip(carry, knz)]
    out_t.append(Zero(aval_of(active)))
    out_t += [next(t_tapes) if m else Zero(aval_of(t)) for t, m in zip(tapes, knz)]
    return outs, out_t


# ---------------------------------------------------------------- while_loop: partial eval

def _while_partial_eval(eqn, unknowns):
    p = eqn.params
    cond, body = p["cond"], p["body"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    if p["trips"] is not None:
        raise UnsupportedError("a recording while_loop with unknown operands cannot be split; "
                               "differentiate it through its JVP instead", op="while_loop")
    ccu, bcu, ku = _split(unknowns, ncc, nbc)
    nk = len(ku)
    if any(ccu):
        raise UnsupportedError("the loop condition depends on a tangent", op="while_loop")
    while True:
        known, _, out_uk, _ = ad.partial_eval_program(body, bcu + ku, ku)
        grown = [a or b for a, b in zip(ku, out_uk)]
        if grown == ku:
            break
        ku = grown
    if ad.partial_eval_program(cond, ccu + ku)[2][0]:
        raise UnsupportedError("the loop condition depends on a tangent", op="while_loop")
    cc, bc, init = _split(eqn.invars, ncc, nbc)
    n_known = nk - sum(ku)
    known_body = simplify(known.replace(outvars=list(known.outvars[:n_known])))
    cond_cc, cond_k = _split(cond.invars, ncc)
    known_cond = dead_code_elimination(cond).replace(
        invars=cond_cc + [v for v, u in zip(cond_k, ku) if not u])
    trips = fresh_trips()
    known_init = [v for v, u in zip(init, ku) if not u]
    known_bc = [v for v, u in zip(bc, bcu) if not u]
    final_known = [v for v, u in zip(eqn.outvars, ku) if not u]
    active = Var(ShapedArray((trips,), dtypes.bool_))
    tapes = [Var(_stacked(v.aval, trips)) for v in known_init]

    def known_fn(*ins):
        kcc, kbc, kinit = _split(ins, ncc, len(known_bc))
        return while_bind(kcc, kbc, kinit, known_cond, known_body, trips)
    k_eqns, k_consts = emit(known_fn, cc + known_bc + known_init,
                            final_known + [active] + tapes)
    if not any(ku):
        return k_eqns, [], ku, k_consts
    scan_body, lead = _tape_scan_body(body, nbc, ku)
    lead_vars, lead_consts = _const_vars(lead)
    scan_eqn = Eqn(scan_p, tuple(lead_vars + list(bc) + [v for v, u in zip(init, ku) if u]
                                 + [active] + tapes),
                   tuple(v for v, u in zip(eqn.outvars, ku) if u),
                   dict(body=scan_body, num_consts=len(lead) + nbc, num_carry=sum(ku),
                        length=trips, reverse=False), eqn.source)
    s_k, s_l, _, s_consts = _scan_partial_eval(
        scan_eqn, [False] * len(lead) + bcu + [True] * sum(ku) + [False] * (1 + n_known))
    return k_eqns + s_k, s_l, ku, k_consts + lead_consts + s_consts


# ---------------------------------------------------------------- while_loop: batching

def _while_batch(args, dims, *, cond, body, cond_nconsts, body_nconsts, trips):
    B = batching
    size = B.axis_size_of(args, dims)
    cc, bc, init = _split(args, cond_nconsts, body_nconsts)
    ccd, bcd, kd = _split(dims, cond_nconsts, body_nconsts)
    nk = len(init)
    batched = [d is not None for d in kd]
    while True:
        carry_dims = [0 if b else None for b in batched]
        nb, out_dims = B.batch_program(body, bcd + carry_dims, size, carry_dims)
        grown = [b or d is not None for b, d in zip(batched, out_dims)]
        ncond, (pred_dim,) = B.batch_program(cond, ccd + carry_dims, size)
        if pred_dim is not None:
            grown = [True] * nk
        if grown == batched:
            break
        batched = grown
    init = [B.bdim_to(c, d, 0, size) if b else c for c, d, b in zip(init, kd, batched)]
    nb, nb_lead = lift(simplify(nb))
    ncond, nc_lead = lift(simplify(ncond))
    if pred_dim is None:
        outs = while_bind(nc_lead + cc, nb_lead + bc, init, ncond, nb, trips)
        if trips is None:
            return outs, carry_dims
        return outs, carry_dims + [None] + [1 if b else None for b in batched]
    # a per-example predicate: run while any example is active, leave the finished ones
    # as they are, and carry the predicate itself (its tape is the per-example `active`)
    n_cc, n_bc = len(nc_lead) + len(cc), len(nb_lead) + len(bc)
    pred_aval = ShapedArray((size,), dtypes.bool_)
    from .reductions import reduce_or

    def body_fn(*a):
        ccs, bcs, carry = _split(a, n_cc, n_bc)
        carry, pred = carry[:-1], carry[-1]
        new = eval_program(nb, bcs + carry)
        new = [ew.select(layout.broadcast_in_dim(pred, aval_of(n).shape, (0,)), n, c)
               for n, c in zip(new, carry)]
        return new + [eval_program(ncond, ccs + new)[0]]
    avals = ([aval_of(x) for x in nc_lead + cc + nb_lead + bc + init]) + [pred_aval]
    wb, wb_lead = trace_program(body_fn, avals)

    def cond_fn(*a):
        return [reduce_or(a[-1], (0,))]
    wc, wc_lead = trace_program(cond_fn, [aval_of(x) for x in init] + [pred_aval])
    pred0 = eval_program(ncond, nc_lead + cc + init)[0]
    outs = while_bind(wc_lead, wb_lead + nc_lead + cc + nb_lead + bc, init + [pred0],
                      wc, simplify(wb), trips)
    if trips is None:
        return outs[:nk], [0] * nk
    active, tapes = outs[-1], outs[nk + 2:nk + 2 + nk]
    return outs[:nk] + [active] + tapes, [0] * nk + [1] + [1] * nk


register("jvp", while_p, _while_jvp)
register("partial_eval", while_p, _while_partial_eval)
register("batch", while_p, _while_batch)


# ---------------------------------------------------------------- cond

def _cond_jvp(primals, tangents, *, branches):
    index, ops, tops = primals[0], list(primals[1:]), tangents[1:]
    mask = _tangent_mask(tops, [v.aval for v in branches[0].invars])
    n_out = len(branches[0].outvars)
    jvps = [ad.jvp_program(b, mask) for b in branches]
    out_nz = [any(nz[k] for _, nz in jvps) and has_tangent(a)
              for k, a in enumerate(branches[0].out_avals)]
    progs = [simplify(j.replace(outvars=list(j.outvars[:n_out]) + [
        t for t, m in zip(j.outvars[n_out:], out_nz) if m])) for j, _ in jvps]
    progs, lead = join(progs)
    outs = cond_p.bind(index, *lead, *ops, *[instantiate(t) for t, m in zip(tops, mask) if m],
                       branches=tuple(progs))
    primal, touts = outs[:n_out], iter(outs[n_out:])
    return primal, [next(touts) if m else Zero(aval_of(p)) for p, m in zip(primal, out_nz)]


def _cond_partial_eval(eqn, unknowns):
    branches = eqn.params["branches"]
    if unknowns[0]:
        raise UnsupportedError("the branch index depends on a tangent", op="cond")
    ops_uk = unknowns[1:]
    n_out = len(eqn.outvars)
    force = [False] * n_out
    while True:
        splits = [ad.partial_eval_program(b, ops_uk, force) for b in branches]
        union = [any(s[2][k] for s in splits) for k in range(n_out)]
        if union == force:
            break
        force = union
    out_uk = force
    res_avals = [[v.aval for v in s[0].outvars[len(s[0].outvars) - s[3]:]] for s in splits]
    n_known_out = n_out - sum(out_uk)
    known_ops = [v for v, u in zip(eqn.invars[1:], ops_uk) if not u]

    def known_branch(k):
        known = splits[k][0]

        def run(*kops):
            outs = eval_program(known, list(kops))
            res = []
            for j, avals in enumerate(res_avals):
                res += outs[n_known_out:] if j == k else [_zeros(a) for a in avals]
            return outs[:n_known_out] + res
        return _known_branch_program(run, [v.aval for v in known_ops])
    known_progs, k_lead = join([known_branch(k) for k in range(len(branches))])
    res_vars = [Var(a) for avals in res_avals for a in avals]
    known_targets = [v for v, u in zip(eqn.outvars, out_uk) if not u] + res_vars

    def known_fn(index, *kops):
        return cond_p.bind(index, *k_lead, *kops, branches=tuple(known_progs))
    k_eqns, k_consts = emit(known_fn, [eqn.invars[0]] + known_ops, known_targets)
    if not any(out_uk):
        return k_eqns, [], out_uk, k_consts
    lin_progs = []
    for k, s in enumerate(splits):
        lin, nres = s[1], s[3]
        lead = [v for j, avals in enumerate(res_avals) for v in (
            lin.invars[:nres] if j == k else [Var(a) for a in avals])]
        lin_progs.append(simplify(lin.replace(invars=lead + list(lin.invars[nres:]))))
    lin_progs, l_lead = join(lin_progs)
    unknown_ops = [v for v, u in zip(eqn.invars[1:], ops_uk) if u]

    def lin_fn(index, *rest):
        return cond_p.bind(index, *l_lead, *rest, branches=tuple(lin_progs))
    l_eqns, l_consts = emit(lin_fn, [eqn.invars[0]] + res_vars + unknown_ops,
                            [v for v, u in zip(eqn.outvars, out_uk) if u])
    return k_eqns, l_eqns, out_uk, k_consts + l_consts


def _known_branch_program(run, avals):
    """A branch traced from ``run``, with what it closed over kept as program consts."""
    with ProgramBuilder() as builder:
        ins = [builder.new_input(a) for a in avals]
        program, captured = builder.build(list(run(*ins)))
    assert not captured
    return simplify(program)


def _cond_transpose(cts, index, *ops, branches):
    lin = [is_undefined(o) for o in ops]
    progs = []
    for b in branches:
        res = [v for v, u in zip(b.invars, lin) if not u]
        lin_in = [v for v, u in zip(b.invars, lin) if u]
        progs.append(simplify(ad.transpose_program(_permute(b, res + lin_in, b.outvars),
                                                      len(res))))
    progs, lead = join(progs)
    res_vals = [o for o, u in zip(ops, lin) if not u]
    outs = iter(cond_p.bind(index, *lead, *res_vals, *[instantiate(c) for c in cts],
                            branches=tuple(progs)))
    return [None] + [next(outs) if u else None for u in lin]


def _cond_batch(args, dims, *, branches):
    B = batching
    size = B.axis_size_of(args, dims)
    index, ops = args[0], list(args[1:])
    di, dops = dims[0], list(dims[1:])
    n_out = len(branches[0].outvars)
    if di is None:
        found = [B.batch_program(b, dops, size)[1] for b in branches]
        want = [0 if any(f[k] is not None for f in found) else None for k in range(n_out)]
        progs = [simplify(B.batch_program(b, dops, size, want)[0]) for b in branches]
        progs, lead = join(progs)
        return cond_p.bind(index, *lead, *ops, branches=tuple(progs)), want
    # a per-example index: every branch runs, and each example takes its own branch's
    # results (as JAX does; a branch's errors are raised even where it is not taken)
    idx_dtype = aval_of(index).dtype
    idx = ew.clamp(np.asarray(0, idx_dtype), index, np.asarray(len(branches) - 1, idx_dtype))
    result = None
    for k, b in enumerate(branches):
        outs, od = B.batch_eval(b, ops, dops, size)
        outs = [B.bdim_to(o, d, 0, size) for o, d in zip(outs, od)]
        if result is None:
            result = outs
            continue
        pick = ew.eq(idx, np.asarray(k, idx_dtype))
        result = [ew.select(layout.broadcast_in_dim(pick, aval_of(o).shape, (0,)), o, r)
                  for o, r in zip(outs, result)]
    return result, [0] * n_out


register("jvp", cond_p, _cond_jvp)
register("partial_eval", cond_p, _cond_partial_eval)
register("transpose", cond_p, _cond_transpose)
register("batch", cond_p, _cond_batch)


# ---------------------------------------------------------------- checkpoint

def _checkpoint_jvp(primals, tangents, *, body):
    mask = _tangent_mask(tangents, [v.aval for v in body.invars])
    jprog, nonzero = ad.jvp_program(body, mask)
    n_out = len(body.outvars)
    out_nz = [nz and has_tangent(a) for nz, a in zip(nonzero, body.out_avals)]
    prog, lead = lift(simplify(jprog.replace(outvars=list(jprog.outvars[:n_out]) + [
        t for t, m in zip(jprog.outvars[n_out:], out_nz) if m])))
    outs = checkpoint_p.bind(*lead, *primals, *[instantiate(t) for t, m in zip(tangents, mask)
                                                if m], body=prog)
    primal, touts = outs[:n_out], iter(outs[n_out:])
    return primal, [next(touts) if m else Zero(aval_of(p)) for p, m in zip(primal, out_nz)]


def _checkpoint_partial_eval(eqn, unknowns):
    # the known part computes only the primal outputs; the linear part keeps the whole
    # body (so its residuals are just the checkpoint's known inputs) and is recomputed
    # when it is transposed
    body = eqn.params["body"]
    known, _, out_uk, nres = ad.partial_eval_program(body, unknowns)
    n_known = len(known.outvars) - nres
    known_body = simplify(known.replace(outvars=list(known.outvars[:n_known])))
    k_in = [v for v, u in zip(eqn.invars, unknowns) if not u]

    def known_fn(*ins):
        return checkpoint_p.bind(*ins, body=known_body)
    k_eqns, k_consts = emit(known_fn, k_in, [v for v, u in zip(eqn.outvars, out_uk) if not u])
    lin_body = simplify(body.replace(outvars=[v for v, u in zip(body.outvars, out_uk) if u]))

    def lin_fn(*ins):
        return checkpoint_p.bind(*ins, body=lin_body)
    l_eqns, l_consts = emit(lin_fn, list(eqn.invars),
                            [v for v, u in zip(eqn.outvars, out_uk) if u])
    return k_eqns, l_eqns, out_uk, k_consts + l_consts


def _checkpoint_transpose(cts, *args, body):
    # rerun the forward (as a checkpoint of its own, so simplification does not merge it
    # with the forward pass and store its values after all), then transpose the rest
    lin = [is_undefined(a) for a in args]
    known, linear, _, nres = ad.partial_eval_program(body, lin, [True] * len(body.outvars))
    known_args = [a for a, u in zip(args, lin) if not u]
    residuals = checkpoint_p.bind(*known_args, body=simplify(known)) if nres else []
    transposed = ad.transpose_program(linear, nres)
    outs = iter(eval_program(transposed, list(residuals) + [instantiate(c) for c in cts]))
    return [next(outs) if u else None for u in lin]


def _checkpoint_batch(args, dims, *, body):
    B = batching
    size = B.axis_size_of(args, dims)
    nb, out_dims = B.batch_program(body, dims, size)
    nb, lead = lift(simplify(nb))
    return checkpoint_p.bind(*lead, *args, body=nb), out_dims


register("jvp", checkpoint_p, _checkpoint_jvp)
register("partial_eval", checkpoint_p, _checkpoint_partial_eval)
register("transpose", checkpoint_p, _checkpoint_transpose)
register("batch", checkpoint_p, _checkpoint_batch)
