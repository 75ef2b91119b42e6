"""Forward and reverse mode as Program -> Program transforms.

Reverse mode is linearize-then-transpose: ``jvp_program`` differentiates with the JVP
table, ``partial_eval`` splits the result into a primal program (which also returns the
residuals) and a program linear in the tangents, and ``transpose_program`` runs the linear
program backwards with the transpose table. There is no second table of VJP rules.
Every pass walks the equations once, so all of this is linear in program size.
"""
import numpy as np

from ..core.ir import Eqn, Literal, Program, Var
from ..core.linear import UndefinedPrimal, Zero, add_tangents, has_tangent, instantiate
from ..core.primitive import RULES, rule
from ..core.trace import ProgramBuilder


def _read(env, v):
    return v.value if type(v) is Literal else env[v]


def jvp_program(program, tangent_mask, instantiate_zeros=True):
    """The forward-mode program of ``program``.

    Inputs: all primals, then one tangent per input with ``tangent_mask`` set (and an inexact
    dtype). Outputs: primal outputs, then one tangent per output. With ``instantiate_zeros``
    off, outputs whose tangent is symbolically zero are left out; the second return value
    says, per output, whether its tangent is in the program.
    """
    differentiated = [m and has_tangent(v.aval) for v, m in zip(program.invars, tangent_mask)]
    with ProgramBuilder() as builder:
        builder.inherit(program)
        primals = [builder.new_input(v.aval) for v in program.invars]
        penv = dict(zip(program.invars, primals))
        penv.update(program.consts)
        tenv = {}
        for v, d in zip(program.invars, differentiated):
            if d:
                tenv[v] = builder.new_input(v.aval)
        for eqn in program.eqns:
            builder.source_override = eqn.source
            ps = [_read(penv, v) for v in eqn.invars]
            ts = [tenv.get(v) if type(v) is Var else None for v in eqn.invars]
            if all(t is None for t in ts):
                out = eqn.prim.bind(*ps, **eqn.params)
                outs = out if eqn.prim.multiple_results else [out]
                penv.update(zip(eqn.outvars, outs))
                continue
            ts = [Zero(v.aval) if t is None else t for v, t in zip(eqn.invars, ts)]
            out, tout = rule("jvp", eqn.prim)(ps, ts, **eqn.params)
            if not eqn.prim.multiple_results:
                out, tout = [out], [tout]
            penv.update(zip(eqn.outvars, out))
            for v, t in zip(eqn.outvars, tout):
                if type(t) is not Zero and has_tangent(v.aval):
                    tenv[v] = t
        builder.source_override = None
        tangent_outs, nonzero = [], []
        for v in program.outvars:
            t = tenv.get(v) if type(v) is Var else None
            nonzero.append(t is not None)
            if t is not None:
                tangent_outs.append(t)
            elif instantiate_zeros:
                tangent_outs.append(instantiate(Zero(v.aval)))
        outs = [_read(penv, v) for v in program.outvars] + tangent_outs
        jvp_prog, _ = builder.build(outs)
    return jvp_prog, nonzero


def partial_eval(program, num_known_inputs, num_known_outputs):
    """Split ``program`` whose inputs after ``num_known_inputs`` are unknown (tangents).

    Returns (known, linear, num_residuals): ``known`` maps the known inputs to the first
    ``num_known_outputs`` outputs (which must not depend on unknowns) followed by the
    residuals; ``linear`` maps the residuals then the unknown inputs to the other outputs.
    """
    n_in, n_out = len(program.invars), len(program.outvars)
    known, linear, out_unknown, num_res = partial_eval_program(
        program, [i >= num_known_inputs for i in range(n_in)],
        [i >= num_known_outputs for i in range(n_out)])
    assert not any(out_unknown[:num_known_outputs])
    return known, linear, num_res


def partial_eval_program(program, in_unknown, force_unknown=None):
    """Split ``program`` by dependency on the inputs flagged in ``in_unknown``.

    Returns (known, linear, out_unknown, num_residuals). ``known`` maps the known inputs to
    the known outputs, then the residuals; ``linear`` maps the residuals, then the unknown
    inputs, to the unknown outputs. An output flagged in ``force_unknown`` is an output of
    ``linear`` even if it is known (it is then passed through as a residual). Equations of
    primitives with a ``partial_eval`` rule (loops, conditionals) are split by that rule,
    ``rule(eqn, unknowns) -> (known_eqns, linear_eqns, out_unknown, new_consts)``.
    """
    unknown = {v for v, u in zip(program.invars, in_unknown) if u}
    known_eqns, linear_eqns = [], []
    consts = list(program.consts)
    pe_rules = RULES["partial_eval"]
    for eqn in program.eqns:
        flags = [type(v) is Var and v in unknown for v in eqn.invars]
        if not any(flags):
            known_eqns.append(eqn)
            continue
        pe = pe_rules.get(eqn.prim)
        if pe is None:
            linear_eqns.append(eqn)
            unknown.update(eqn.outvars)
            continue
        k_eqns, l_eqns, out_unknown, new_consts = pe(eqn, flags)
        known_eqns.extend(k_eqns)
        linear_eqns.extend(l_eqns)
        consts.extend(new_consts)
        unknown.update(v for v, u in zip(eqn.outvars, out_unknown) if u)
    out_unknown = [type(v) is Var and v in unknown for v in program.outvars]
    if force_unknown is not None:
        out_unknown = [u or bool(f) for u, f in zip(out_unknown, force_unknown)]
    const_vars = {v for v, _ in consts}
    residuals, seen = [], set()

    def need(v):
        if type(v) is Var and v not in unknown and v not in const_vars and v not in seen:
            seen.add(v)
            residuals.append(v)

    for eqn in linear_eqns:
        for v in eqn.invars:
            need(v)
    known_outs = [v for v, u in zip(program.outvars, out_unknown) if not u]
    linear_outs = [v for v, u in zip(program.outvars, out_unknown) if u]
    for v in linear_outs:
        need(v)
    unknown_in = [v for v, u in zip(program.invars, in_unknown) if u]
    known = Program([v for v, u in zip(program.invars, in_unknown) if not u], consts,
                    known_eqns, known_outs + residuals, program.guards)
    linear = Program(residuals + unknown_in, consts, linear_eqns, linear_outs, program.guards)
    return known, linear, out_unknown, len(residuals)


def _accumulate(ct_env, v, ct):
    prev = ct_env.get(v)
    ct_env[v] = ct if prev is None else add_tangents(prev, ct)


def transpose_program(linear, num_residuals, ct_mask=None):
    """The transpose of a program linear in its inputs after ``num_residuals``.

    Inputs: residuals, then one cotangent per output (per output with ``ct_mask`` set; the
    others are taken as zero). Outputs: one cotangent per linear input (zeros where nothing
    flows back).
    """
    if ct_mask is None:
        ct_mask = [True] * len(linear.outvars)
    ct_outs = [v for v, m in zip(linear.outvars, ct_mask) if m]
    linear_in = linear.invars[num_residuals:]
    is_linear = set(linear_in)
    for eqn in linear.eqns:
        is_linear.update(eqn.outvars)
    with ProgramBuilder() as builder:
        builder.inherit(linear)
        env = {v: builder.new_input(v.aval) for v in linear.invars[:num_residuals]}
        env.update(linear.consts)
        cts = [builder.new_input(v.aval) for v in ct_outs]
        ct_env = {}
        for v, ct in zip(ct_outs, cts):
            if type(v) is Var and v in is_linear:
                _accumulate(ct_env, v, ct)
        for eqn in reversed(linear.eqns):
            outs_ct = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(c is None for c in outs_ct):
                continue
            builder.source_override = eqn.source
            outs_ct = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, outs_ct)]
            args = [UndefinedPrimal(v.aval) if type(v) is Var and v in is_linear
                    else _read(env, v) for v in eqn.invars]
            ct = outs_ct if eqn.prim.multiple_results else outs_ct[0]
            in_cts = rule("transpose", eqn.prim)(ct, *args, **eqn.params)
            for v, c in zip(eqn.invars, in_cts):
                if c is None or type(c) is Zero or not (type(v) is Var and v in is_linear):
                    continue
                _accumulate(ct_env, v, c)
        builder.source_override = None
        outs = [ct_env[v] if v in ct_env else instantiate(Zero(v.aval)) for v in linear_in]
        program, _ = builder.build(outs)
    return program


def vjp_parts(program, wrt_mask, ct_mask=None):
    """(known, transposed, num_residuals) for reverse mode over the inputs in ``wrt_mask``.

    ``known`` maps the primals to all primal outputs followed by residuals; ``transposed``
    maps residuals and the cotangents of the outputs in ``ct_mask`` (default: all) to the
    cotangents of the differentiated inputs.
    """
    jvp_prog, _ = jvp_program(program, wrt_mask)
    known, linear, num_res = partial_eval(jvp_prog, len(program.invars), len(program.outvars))
    return known, transpose_program(linear, num_res, ct_mask), num_res


def grad_program(program, wrt_mask, keep_outputs=True):
    """The gradient of output 0 (a real scalar) w.r.t. the inputs in ``wrt_mask``.

    Inputs: the primals. Outputs: all primal outputs if ``keep_outputs`` (the value and
    any auxiliary outputs, which are not differentiated), then one gradient per
    differentiated input.
    """
    n_out = len(program.outvars)
    known, transposed, num_res = vjp_parts(program, wrt_mask, [True] + [False] * (n_out - 1))
    seed_var = transposed.invars[num_res]
    seed = Literal(np.ones((), seed_var.aval.dtype), seed_var.aval)
    wiring = dict(zip(transposed.invars[:num_res], known.outvars[n_out:]))
    wiring[seed_var] = seed
    outs = list(known.outvars[:n_out]) if keep_outputs else []
    return splice(known, transposed, wiring, outs + list(transposed.outvars))


def splice(first, second, wiring, outvars):
    """One program running ``first`` then ``second``, whose inputs are ``wiring``'d to
    values of ``first`` (or literals). Equations are reused, not re-traced: no rule or
    abstract evaluation runs, so this costs one pass over ``second``'s equations."""
    def read(v):
        return wiring.get(v, v) if type(v) is Var else v

    eqns = list(first.eqns)
    for e in second.eqns:
        ins = tuple(read(v) for v in e.invars)
        eqns.append(e if ins == e.invars else Eqn(e.prim, ins, e.outvars, e.params, e.source))
    guards = list(first.guards) + [g for g in second.guards if g not in first.guards]
    return Program(first.invars, list(first.consts) + list(second.consts), eqns,
                   [read(v) for v in outvars], guards)
