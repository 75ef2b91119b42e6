"""Lowering of the control-flow primitives: the loop (or branch) is written into the kernel
source, with the body program's equations inlined by the same code generator.

So a ``scan`` of 1,000 steps under ``jit`` is one kernel call with a Python-level ``for``
loop that numba compiles, not 1,000 kernel calls. A carry is a local variable rebound at
the end of each iteration; stacked outputs are preallocated and filled per iteration. A
recording ``while_loop`` (reverse mode) grows its tape buffers by doubling.
"""
from ..core.primitive import register
from ..ops import control
from . import library
from .codegen import emit_program
from .scalar_exprs import ctor

_INITIAL_TAPE = 16


def _bind(em, invars, sources):
    """Name a sub-program's inputs; array slices get a local so loops do not re-slice."""
    for v, src in zip(invars, sources):
        em.names[v] = src


def _rebind(em, targets, sources):
    """``a, b = x, y`` (one statement, so swapped carries stay right)."""
    if not targets:
        return
    lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
    rhs = ", ".join(sources) + ("," if len(sources) == 1 else "")
    em.emit(f"{lhs} = {rhs}")


def _store(em, buf, row, value, rank):
    """``buf[row] = value`` as explicit loops (numba compiles those fastest)."""
    if rank == 0:
        em.emit(f"{buf}[{row}] = {value}")
        return
    idx = [em.fresh("j") for _ in range(rank)]
    for k in range(rank):
        em.emit("    " * k + f"for {idx[k]} in range({value}.shape[{k}]):")
    em.emit("    " * rank + f"{buf}[{row}, {', '.join(idx)}] = {value}[{', '.join(idx)}]")


def _buffer(em, length, aval):
    name = em.fresh("buf")
    dims = "".join(em.dim(d) + ", " for d in aval.shape)
    em.emit(f"{name} = np.empty(({length}, {dims}), {ctor(aval.dtype)})")
    return name


def _scan(em, ins, outs, eqn):
    p = eqn.params
    body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
    consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    carry = [em.fresh("carry") for _ in init]
    _rebind(em, carry, init)
    n = em.fresh("n")
    length = p["length"]
    em.emit(f"{n} = {xs[0]}.shape[0]" if xs else f"{n} = {em.dim(length)}")
    y_avals = body.out_avals[nk:]
    bufs = [_buffer(em, n, a) for a in y_avals]
    it, i = em.fresh("it"), em.fresh("i")
    em.emit(f"for {it} in range({n}):")
    em.indent += 1
    em.emit(f"{i} = {n} - 1 - {it}" if p["reverse"] else f"{i} = {it}")
    x_names = []
    for x in xs:
        name = em.fresh("x")
        em.emit(f"{name} = {x}[{i}]")
        x_names.append(name)
    _bind(em, body.invars, list(consts) + carry + x_names)
    emit_program(em, body)
    results = [em.name(v) for v in body.outvars]
    for buf, y, a in zip(bufs, results[nk:], y_avals):
        _store(em, buf, i, y, len(a.shape))
    _rebind(em, carry, results[:nk])
    em.indent -= 1
    _rebind(em, outs, carry + bufs)


def _while(em, ins, outs, eqn):
    p = eqn.params
    cond, body = p["cond"], p["body"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cc, bc, init = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    carry = [em.fresh("carry") for _ in init]
    _rebind(em, carry, init)
    record = p["trips"] is not None
    avals = [v.aval for v in body.invars[nbc:]]
    if record:
        cap, count = em.fresh("cap"), em.fresh("count")
        em.emit(f"{cap} = {_INITIAL_TAPE}")
        em.emit(f"{count} = 0")
        active = em.fresh("active")
        em.emit(f"{active} = np.empty({cap}, np.bool_)")
        tapes = [_buffer(em, cap, a) for a in avals]
    em.emit("while True:")
    em.indent += 1
    _bind(em, cond.invars, list(cc) + carry)
    emit_program(em, cond)
    em.emit(f"if not {em.name(cond.outvars[0])}:")
    em.emit("    break")
    if record:
        em.emit(f"if {count} == {cap}:")
        em.indent += 1
        grown = em.fresh("grown")
        em.emit(f"{grown} = np.empty(2 * {cap}, np.bool_)")
        em.emit(f"{grown}[:{cap}] = {active}")
        em.emit(f"{active} = {grown}")
        for k, (tape, a) in enumerate(zip(tapes, avals)):
            bigger = _buffer(em, f"2 * {cap}", a)
            r = em.fresh("r")
            em.emit(f"for {r} in range({cap}):")
            em.indent += 1
            _store(em, bigger, r, f"{tape}[{r}]", len(a.shape))
            em.indent -= 1
            em.emit(f"{tape} = {bigger}")
        em.emit(f"{cap} = 2 * {cap}")
        em.indent -= 1
        em.emit(f"{active}[{count}] = True")
        for tape, c, a in zip(tapes, carry, avals):
            _store(em, tape, count, c, len(a.shape))
        em.emit(f"{count} += 1")
    _bind(em, body.invars, list(bc) + carry)
    emit_program(em, body)
    _rebind(em, carry, [em.name(v) for v in body.outvars])
    em.indent -= 1
    if record:
        _rebind(em, outs, carry + [f"{active}[:{count}]"] + [f"{t}[:{count}]" for t in tapes])
    else:
        _rebind(em, outs, carry)


def _cond(em, ins, outs, eqn):
    branches = eqn.params["branches"]
    index, operands = ins[0], list(ins[1:])
    which = em.fresh("branch")
    em.emit(f"{which} = min(max({index}, 0), {len(branches) - 1})")
    for k, b in enumerate(branches):
        if len(branches) > 1:
            head = "if" if k == 0 else ("elif" if k < len(branches) - 1 else "else")
            em.emit(f"{head} {which} == {k}:" if head != "else" else "else:")
            em.indent += 1
        _bind(em, b.invars, operands)
        emit_program(em, b)
        _rebind(em, outs, [em.name(v) for v in b.outvars])
        if len(branches) > 1:
            em.indent -= 1


def _checkpoint(em, ins, outs, eqn):
    body = eqn.params["body"]
    _bind(em, body.invars, ins)
    emit_program(em, body)
    _rebind(em, outs, [em.name(v) for v in body.outvars])


def _sub_programs(eqn):
    p = eqn.params
    if eqn.prim is control.cond_p:
        return p["branches"]
    if eqn.prim is control.while_p:
        return (p["cond"], p["body"])
    return (p["body"],)


def _all_lowerable(eqn):
    """A loop compiles only if every equation of its sub-programs does."""
    from .plan import lowerable
    return all(lowerable(e) for prog in _sub_programs(eqn) for e in prog.eqns)


for _prim, _rule in ((control.scan_p, _scan), (control.while_p, _while),
                     (control.cond_p, _cond), (control.checkpoint_p, _checkpoint)):
    register("lower", _prim, _rule)
    library.SUPPORTS[_prim] = _all_lowerable


def _copy(em, ins, outs, eqn):
    em.emit(f"{outs[0]} = {ins[0]}")   # values are never written in place: no copy needed


register("lower", control._copy_p, _copy)
