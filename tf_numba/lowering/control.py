"""Lowering of the control-flow primitives: the loop (or branch) is written into the kernel
source, with the body program's equations inlined by the same code generator.

So a ``scan`` of 1,000 steps under ``jit`` is one kernel call with a Python-level ``for``
loop that numba compiles, not 1,000 kernel calls. An iteration allocates nothing: the
arrays of the body's values are allocated once, before the outermost loop
(``Emitter.allocate``), and reused by every iteration, so a value that outlives its
iteration is written elsewhere from the start (``Emitter.destinations``) or copied. A
stacked output is written into its row of the preallocated stack. An array carry is
updated in place when it is an accumulator, else alternates between two buffers: the
body writes the next carry into the one the current carry is not in. Tiny carries and
rows of ``xs`` are read into scalars at the top of an iteration (``unrolled``). A
recording ``while_loop`` (reverse mode) grows its tape buffers by doubling.
"""
import contextlib

from ..core.ir import Var
from ..core.primitive import register
from ..ops import control
from . import unrolled
from .codegen import emit_program
from ..kernel_vocab.rules import Library, is_elementwise, lowerable
from ..kernel_vocab.scalar_exprs import ctor
from .schedule import Call, Nest, schedule_body

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


def _store(em, target, value, rank, row=None):
    """``target[row] = value`` (``target[...]`` without a row) as explicit loops (numba
    compiles those fastest)."""
    idx = [em.fresh("j") for _ in range(rank)]
    for k in range(rank):
        em.emit("    " * k + f"for {idx[k]} in range({value}.shape[{k}]):")
    at = ([row] if row is not None else []) + idx
    em.emit("    " * rank + f"{target}[{', '.join(at)}] = {value}{_index(idx)}")


def _index(idx):
    return f"[{', '.join(idx)}]" if idx else ""


def _buffer(em, length, aval):
    name = em.fresh("buf")
    dims = "".join(em.dim(d) + ", " for d in aval.shape)
    em.emit(f"{name} = workspace.empty(({length}, {dims}), {ctor(aval.dtype)})")
    return name


@contextlib.contextmanager
def _hoisting(em):
    """Allocations made while the outermost loop is emitted go just before that loop."""
    if em.hoisted is not None:
        yield
        return
    at, indent = len(em.lines), em.indent
    em.hoisted = []
    yield
    lines, em.hoisted = em.hoisted, None
    em.lines[at:at] = ["    " * indent + line for line in lines]


class _Carries:
    """Where each array carry of a loop lives from one iteration to the next.

    A body result that is loop-invariant (a const, a row of ``xs``), the carry itself, or
    in a row of a stacked output (``rows``) stays where it is. A result that an elementwise
    region computes over the carry's own elements, the carry having no other reader (an
    accumulator ``g = g + ...``), overwrites the carry: such a carry starts as a copy of its
    initial value. Any other is written into (or else copied to) the carry's next buffer,
    since the body's own arrays are reused by the next iteration; the next and spare
    buffers swap after every iteration.
    """

    def __init__(self, em, results, homes):
        self.em, self.results = em, results
        self.in_place, self.moved = set(), {}    # moved: index -> (next, spare) or None
        for k, home in enumerate(homes):
            if home == "in place":
                self.in_place.add(k)
            elif home == "copied":
                self.moved[k] = None            # a shape only the kernel knows
            elif home == "buffers":
                self.moved[k] = (em.fresh("next"), em.fresh("spare"))

    def start(self, carry, init):
        """Before the loop: bind the carries, copying those updated in place."""
        em = self.em
        sources = list(init)
        for k in sorted(self.in_place):
            aval = self.results[k].aval
            buffer = em.fresh("acc")
            em.hoisted.append(f"{buffer} = workspace.empty({em.shape(aval.shape)}, "
                              f"{ctor(aval.dtype)})")
            _store(em, buffer, init[k], len(aval.shape))
            sources[k] = buffer
        _rebind(em, carry, sources)

    def aim(self, carry, rows):
        """In the loop, before the body: where the body writes each carry's next value."""
        self.rows, self.aimed = rows, set()
        for k, r in enumerate(self.results):
            if k in self.in_place:
                self.em.destinations[r] = carry[k]
            elif self.moved.get(k) and type(r) is Var and r not in self.em.destinations:
                self.em.destinations[r] = self.moved[k][0]
                self.aimed.add(k)

    def end_iteration(self, carry):
        em, sources, swaps = self.em, [], []
        for k, r in enumerate(self.results):
            if k in self.in_place:
                if em.destinations.pop(r, None) is not None:
                    _store(em, carry[k], em.name(r), len(r.aval.shape))
                sources.append(carry[k])
            elif k not in self.moved:
                sources.append(self.rows[r] if r in self.rows else em.name(r))
            elif self.moved[k] is None:
                sources.append(f"{em.name(r)}.copy()")
            else:
                nxt, spare = self.moved[k]
                if k not in self.aimed or em.destinations.pop(r, None) is not None:
                    _store(em, nxt, em.name(r), len(r.aval.shape))
                for name in (nxt, spare):
                    em.hoisted.append(f"{name} = workspace.empty({em.shape(r.aval.shape)}, "
                                      f"{ctor(r.aval.dtype)})")
                sources.append(nxt)
                swaps.append((nxt, spare))
        _rebind(em, carry, sources)
        for nxt, spare in swaps:
            _rebind(em, [nxt, spare], [spare, nxt])


def carry_homes(eqn, bodies, dims):
    """Where each carry of a scan or while loop lives from one iteration to the next
    (``_Carries``): "stays" (a scalar, loop-invariant, the carry itself, or a row of a
    stacked output), "in place" (an accumulator overwriting the carry), "buffers" (the
    next and spare buffers, swapped), "copied" (a shape only the kernel knows)."""
    p = eqn.params
    if eqn.prim is control.scan_p:
        body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
        carry_vars, results = body.invars[nc:nc + nk], body.outvars[:nk]
        stays = set(body.invars[:nc]) | set(body.invars[nc + nk:])
        stays |= _stacked_in_rows(body, nk)     # a carry equal to one stays in its row
    else:
        body, nbc = p["body"], p["body_nconsts"]
        carry_vars, results, stays = body.invars[nbc:], body.outvars, set(body.invars[:nbc])
    regions = [s.region for s in bodies[body].steps if type(s) is Nest]
    homes = []
    for k, (v, r) in enumerate(zip(carry_vars, results)):
        if not v.aval.shape or r is v or r in stays:
            homes.append("stays")
        elif not dims.writable(v.aval.shape):
            homes.append("copied")
        elif _accumulates(body, regions, v, r) and r not in results[:k]:
            homes.append("in place")
        else:
            homes.append("buffers")
    return tuple(homes)


def _stacked_in_rows(body, nk):
    """A scan body's stacked outputs that are written straight into their row of the
    stack (arrays the body makes, not its inputs)."""
    return {y for y in body.outvars[nk:]
            if type(y) is Var and y.aval.shape and not any(y is v for v in body.invars)}


def _accumulates(body, steps, c, r):
    """Does ``r`` come from a region over ``c``'s shape whose elementwise equations are
    the only readers of ``c``, each ahead of ``r``'s? Then element ``i`` of ``c`` is read
    only to compute element ``i`` of ``r``, before it is written: ``r`` may overwrite ``c``."""
    if c in body.outvars:
        return False
    region = next((s for s in steps if r in s.defined), None)
    if region is None or region.space != c.aval.shape:
        return False
    order = {e: k for k, e in enumerate(region.eqns)}
    last = next(k for k, e in enumerate(region.eqns) if r in e.outvars)
    return all(e in order and order[e] <= last and is_elementwise(e)
               for e in body.eqns if any(v is c for v in e.invars))


def _scan(em, ins, outs, eqn):
    with _hoisting(em):
        _emit_scan(em, ins, outs, eqn)


def _emit_scan(em, ins, outs, eqn):
    bodies = em.call.bodies
    p = eqn.params
    body, nc, nk = p["body"], p["num_consts"], p["num_carry"]
    consts, init, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    results = body.outvars
    in_rows = em.call.rows
    carries = _Carries(em, results[:nk], em.call.carries)
    carry = [em.fresh("carry") for _ in init]
    carries.start(carry, init)
    n = em.fresh("n")
    length = p["length"]
    em.emit(f"{n} = {xs[0]}.shape[0]" if xs else f"{n} = {em.dim(length)}")
    y_avals = body.out_avals[nk:]
    bufs = []
    for a, v in zip(y_avals, eqn.outvars[nk:]):
        slot = em.destinations.pop(v, None)
        if slot is None:
            bufs.append(_buffer(em, n, a))
        else:
            bufs.append(em.fresh("buf"))
            em.emit(f"{bufs[-1]} = {slot}")
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
    for v in bodies[body].loaded:
        unrolled.load_elements(em, v)
    rows, written = {}, set()           # value -> its row; stacked outputs written there
    for k, (buf, y) in enumerate(zip(bufs, results[nk:])):
        if y in in_rows and y not in rows:
            rows[y] = em.destinations[y] = f"{buf}[{i}]"
            written.add(k)
    carries.aim(carry, rows)
    emit_program(em, bodies[body])
    for k, y in enumerate(results[nk:]):
        if k in written and em.destinations.pop(y, None) is not None:
            written.discard(k)
    for k, (buf, y, a) in enumerate(zip(bufs, results[nk:], y_avals)):
        if k not in written:
            _store(em, buf, em.name(y), len(a.shape), i)
    carries.end_iteration(carry)
    em.indent -= 1
    _rebind(em, outs, carry + bufs)


def _while(em, ins, outs, eqn):
    with _hoisting(em):
        _emit_while(em, ins, outs, eqn)


def _emit_while(em, ins, outs, eqn):
    bodies = em.call.bodies
    p = eqn.params
    cond, body = p["cond"], p["body"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cc, bc, init = ins[:ncc], ins[ncc:ncc + nbc], ins[ncc + nbc:]
    carries = _Carries(em, body.outvars, em.call.carries)
    carry = [em.fresh("carry") for _ in init]
    carries.start(carry, init)
    record = p["trips"] is not None
    avals = [v.aval for v in body.invars[nbc:]]
    if record:
        cap, count = em.fresh("cap"), em.fresh("count")
        em.emit(f"{cap} = {_INITIAL_TAPE}")
        em.emit(f"{count} = 0")
        active = em.fresh("active")
        em.emit(f"{active} = workspace.empty({cap}, np.bool_)")
        tapes = [_buffer(em, cap, a) for a in avals]
    em.emit("while True:")
    em.indent += 1
    _bind(em, cond.invars, list(cc) + carry)
    emit_program(em, bodies[cond])
    em.emit(f"if not {em.name(cond.outvars[0])}:")
    em.emit("    break")
    if record:
        em.emit(f"if {count} == {cap}:")
        em.indent += 1
        grown = em.fresh("grown")
        em.emit(f"{grown} = workspace.empty(2 * {cap}, np.bool_)")
        # a loop, not ``grown[:cap] = active``: numba compiles an array assigned to a
        # slice with the formatting of its shape-mismatch error, ~3 s the first time
        _store(em, grown, active, 1)
        em.emit(f"{active} = {grown}")
        for tape, a in zip(tapes, avals):
            bigger = _buffer(em, f"2 * {cap}", a)
            r = em.fresh("r")
            em.emit(f"for {r} in range({cap}):")
            em.indent += 1
            _store(em, bigger, f"{tape}[{r}]", len(a.shape), r)
            em.indent -= 1
            em.emit(f"{tape} = {bigger}")
        em.emit(f"{cap} = 2 * {cap}")
        em.indent -= 1
        em.emit(f"{active}[{count}] = True")
        for tape, c, a in zip(tapes, carry, avals):
            _store(em, tape, c, len(a.shape), count)
        em.emit(f"{count} += 1")
    _bind(em, body.invars, list(bc) + carry)
    for v in bodies[body].loaded:
        unrolled.load_elements(em, v)
    carries.aim(carry, {})
    emit_program(em, bodies[body])
    carries.end_iteration(carry)
    em.indent -= 1
    if record:
        _rebind(em, outs, carry + [f"{active}[:{count}]"] + [f"{t}[:{count}]" for t in tapes])
    else:
        _rebind(em, outs, carry)


def _cond(em, ins, outs, eqn):
    bodies = em.call.bodies
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
        emit_program(em, bodies[b])
        _rebind(em, outs, [em.name(v) for v in b.outvars])
        if len(branches) > 1:
            em.indent -= 1


def _checkpoint(em, ins, outs, eqn):
    body = eqn.params["body"]
    _bind(em, body.invars, ins)
    emit_program(em, em.call.bodies[body])
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
    return all(lowerable(e) for prog in _sub_programs(eqn) for e in prog.eqns)


def _decide(eqn, context):
    """A loop's or branch's body programs, each scheduled where it runs: a loop's body
    inside the loop (``in_loop``), a branch's where the branch is; only a ``checkpoint``
    body and a one-branch ``cond`` stay at their caller's top level (no indentation)."""
    one_level = eqn.prim is control.checkpoint_p or (
        eqn.prim is control.cond_p and len(eqn.params["branches"]) == 1)
    loop = eqn.prim in (control.scan_p, control.while_p)
    inner = context.nested(top=context.top and one_level, in_loop=context.in_loop or loop)
    loaded = _loaded(eqn)
    call = Call(eqn, bodies={prog: schedule_body(prog, inner, loaded.get(prog, ()))
                             for prog in _sub_programs(eqn)})
    if loop:
        call.carries = carry_homes(eqn, call.bodies, context.dims)
    if eqn.prim is control.scan_p:
        call.rows = _stacked_in_rows(eqn.params["body"], eqn.params["num_carry"])
    return call


def _loaded(eqn):
    """A loop body's tiny array inputs (carries, and a scan's rows of ``xs``), read into
    scalars at the top of each iteration (``unrolled``): sub-program -> those inputs."""
    p = eqn.params
    if eqn.prim is control.scan_p:
        body, first = p["body"], p["num_consts"]
    elif eqn.prim is control.while_p:
        body, first = p["body"], p["body_nconsts"]
    else:
        return {}
    return {body: tuple(v for v in body.invars[first:]
                        if v.aval.shape and unrolled.tiny(v.aval.shape))}


for _prim, _emit in ((control.scan_p, _scan), (control.while_p, _while),
                     (control.cond_p, _cond), (control.checkpoint_p, _checkpoint)):
    register("lower", _prim, Library(_emit, supports=_all_lowerable, decide=_decide))


def _copy(em, ins, outs, eqn):
    em.emit(f"{outs[0]} = {ins[0]}")   # values are never written in place: no copy needed


register("lower", control._copy_p, Library(_copy))


# ---------------------------------------------------------------- scan: step-independent work
