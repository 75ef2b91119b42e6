"""Program rewrites made for the compiler's sake, before a program is lowered: compiler
passes from Program to Program, each computing the same values (to rounding where its
docstring says so) in a form the generated code runs faster. They sit in the compiler, not
in ``transforms/``, because they consult its facts (what a kernel's workspace holds, how an
equation fuses).

- ``fold_transposed_operands``: products read their operands' untransposed arrays.
- ``hoist_step_independent_work``: a scan's per-step products that need no carry run
  before the loop, as one product over all steps.
- ``sink_accumulated_products``: a scan's carries that only sum a product or a sum per
  step are one product (or sum) over all steps, after the loop.
- ``convert_masks_where_read``: a boolean mask converted to numbers is converted again
  where a later pass reads it, so that pass reads the 1-byte mask.
- ``fuse_product_into_patches_transpose``: col2im of a product with a kernel (a
  convolution's input gradient) is one step that adds back a few examples at a time.
- ``inline_custom_calls``: a function with a custom derivative runs its own body (the
  rule matters to transforms, which are done by now), so it compiles with the rest.
"""
import collections
import math

import numpy as np

from ..core.interpreter import eval_program
from ..core.ir import Eqn, Literal, Var
from ..core.primitive import RULES
from ..errors import MissingRuleError
from ..custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from ..kernel_vocab.rules import fusion
from ..ops import contraction, control, elementwise, layout, reductions, windows
from ..transforms.ad import partial_eval_program
from ..transforms.batching import batch_program
from ..transforms.simplify import dead_code_elimination
from .schedule import private_values


def prepare_for_lowering(program):
    """Every rewrite, in the order the compiler applies them."""
    return fuse_product_into_patches_transpose(convert_masks_where_read(
        fold_transposed_operands(sink_accumulated_products(
            hoist_step_independent_work(inline_custom_calls(program))))))


def inline_custom_calls(program):
    """``program`` with each top-level ``custom_jvp_call`` / ``custom_vjp_call`` replaced
    by the equations of the function it calls (its rule is for transforms; evaluating it
    is evaluating that function). A call left in place runs as a NumPy step between
    kernels: ``odeint``'s solver loop ran at interpreter speed under ``jit``."""
    calls = (custom_jvp_call_p, custom_vjp_call_p)
    if not any(e.prim in calls for e in program.eqns):
        return program
    eqns, consts = [], list(program.consts)
    for eqn in program.eqns:
        if eqn.prim not in calls:
            eqns.append(eqn)
            continue
        body = eqn.params["call"]
        inlined, new_consts = control.emit(lambda *ins: eval_program(body, list(ins)),
                                           list(eqn.invars), list(eqn.outvars))
        eqns.extend(inlined)
        consts.extend(new_consts)
    return program.replace(eqns=eqns, consts=consts)


# Stacked inputs the hoisting may add, in bytes: beyond this a scan keeps its per-step work
# (the stack is memory the loop never needed).
HOIST_MAX_BYTES = 32 << 20


def hoist_step_independent_work(program):
    """``program`` with each top-level ``scan`` computing, before the loop, the body's
    work that depends only on the loop's consts and its step inputs, and reading it as a
    stacked input: the products of an RNN cell's ``U @ x_t`` become one matrix product
    over all steps (BLAS at full speed) instead of a small one per step. Work that depends
    on the consts alone runs once. Only products pay for the stack they write, so a scan
    is rewritten when a product moves out of it; bodies with loops of their own stay as
    they are. The hoisted products sum in BLAS's order, not the per-step loop's."""
    rewrites = {}
    for k, eqn in enumerate(program.eqns):
        if eqn.prim is control.scan_p:
            rewritten = _hoisted_scan(eqn)
            if rewritten is not None:
                rewrites[k] = rewritten

    def rewrite(keep):
        eqns, consts = [], list(program.consts)
        for k, eqn in enumerate(program.eqns):
            if k in keep:
                eqns.extend(rewrites[k][0])
                consts.extend(rewrites[k][1])
            else:
                eqns.append(eqn)
        return program.replace(eqns=eqns, consts=consts)
    if not rewrites:
        return program
    # a stack the kernel's workspace cannot hold (a loop output may be a view of it, and
    # reach the program's outputs) is a fresh allocation per call: its page faults cost
    # more than the products saved (an RNN gradient: 2.25 -> 2.45 ms)
    private = private_values(rewrite(rewrites))
    keep = {k for k, (_, _, stacks) in rewrites.items() if all(v in private for v in stacks)}
    return rewrite(keep) if keep else program


def _hoisted_scan(eqn):
    """(eqns, consts, stacked inputs) replacing one scan whose body has step-independent
    products, or None."""
    p = eqn.params
    body, nc, nk, length = p["body"], p["num_consts"], p["num_carry"], p["length"]
    if type(length) is not int or length < 2 or body.consts:
        return None
    if any(e.prim in RULES["partial_eval"] for e in body.eqns):
        return None
    nx = len(body.invars) - nc - nk
    known, step, _, _ = partial_eval_program(
        body, [False] * nc + [True] * nk + [False] * nx, [True] * len(body.outvars))
    residuals = list(known.outvars)
    bc, bk, bx = control._split(body.invars, nc, nk)
    invariant, _ = control._invariant_vars(known, bc)
    stacked = [r for r in residuals if r not in invariant and r not in bx]
    per_step = dead_code_elimination(known.replace(outvars=stacked))
    if not any(e.prim is contraction.dot_general_p for e in per_step.eqns):
        return None
    if any(type(d) is not int for r in stacked for d in r.aval.shape) or _stack_bytes(
            stacked, length) > HOIST_MAX_BYTES:
        return None
    once = [r for r in residuals if r in invariant and r not in bc]
    run_once = dead_code_elimination(known.replace(invars=bc, outvars=once))
    try:    # a primitive without a batching rule keeps its scan as it is
        batched, _ = batch_program(per_step, [None] * nc + [0] * nx, length,
                                   [0] * len(stacked))
    except MissingRuleError:
        return None
    # the loop reads: consts (the body's own, then the run-once values), carries, then
    # step inputs (the body's own, then the stacked values)
    const_res = [r for r in residuals if r in bc]
    x_res = [r for r in residuals if r in bx]
    new_body = control._permute(step, const_res + once + list(bk) + x_res + stacked,
                                step.outvars)

    def hoisted(*ins):
        consts, init, xs = control._split(ins, nc, nk)
        values_once = eval_program(run_once, consts)
        values_stacked = eval_program(batched, consts + xs)
        pick_c = [consts[bc.index(r)] for r in const_res]
        pick_x = [xs[bx.index(r)] for r in x_res]
        return control.scan_bind(pick_c + values_once, init, pick_x + values_stacked,
                                 new_body, length, p["reverse"])
    eqns, consts = control.emit(hoisted, list(eqn.invars), list(eqn.outvars))
    loop = next(e for e in reversed(eqns) if e.prim is control.scan_p)
    return eqns, consts, list(loop.invars[len(loop.invars) - len(stacked):])


def fold_transposed_operands(program):
    """``program`` with each product of a ``transpose(y)`` reading ``y`` itself, its axes
    renamed in the dimension numbers, where that keeps the order of the operand's free
    axes (which order the product's); transposes left unread go. BLAS reads either
    order, so the product no longer copies the transposed view into C order first (2 MB
    for a 512x512 float64 ``q.T @ g``; an N-D transpose was a copy of its own too). A
    transpose of a product read nowhere else becomes the swapped product
    (``_swapped_product``)."""
    producers, eqns, changed = {}, [], False
    readers = collections.Counter(v for e in program.eqns for v in e.invars if type(v) is Var)
    readers.update(v for v in program.outvars if type(v) is Var)
    for eqn in program.eqns:
        if eqn.prim is contraction.dot_general_p:
            folded = _through_transposes(eqn, producers)
        elif eqn.prim is layout.transpose_p:
            folded = _swapped_product(eqn, producers, readers)
        else:
            folded = eqn
        changed |= folded is not eqn
        eqn = folded
        producers.update((v, eqn) for v in eqn.outvars)
        eqns.append(eqn)
    return dead_code_elimination(program.replace(eqns=eqns)) if changed else program


def _swapped_product(eqn, producers, readers):
    """A transpose that swaps the two free blocks of a product ``a . b`` (read nowhere
    else) as the product ``b . a``, which BLAS writes in that order: no strided view of
    the product for the next step to read (a stacked input a scan reads row by row)."""
    x = eqn.invars[0]
    product = producers.get(x)
    if product is None or product.prim is not contraction.dot_general_p or readers[x] != 1:
        return eqn
    (lc, rc), (lb, rb) = product.params["dimension_numbers"]
    a, b = product.invars
    nb = len(lb)
    n_lfree = len(a.aval.shape) - len(lc) - nb
    n_rfree = len(b.aval.shape) - len(rc) - nb
    batch = tuple(range(nb))
    lfree = tuple(range(nb, nb + n_lfree))
    rfree = tuple(range(nb + n_lfree, nb + n_lfree + n_rfree))
    if tuple(eqn.params["permutation"]) != batch + rfree + lfree:
        return eqn
    params = dict(product.params, dimension_numbers=((rc, lc), (rb, lb)))
    return type(eqn)(product.prim, (b, a), eqn.outvars, params, product.source)


def _through_transposes(eqn, producers):
    """``eqn`` (a dot_general) reading the source of each transposed operand it can, or
    ``eqn`` itself. Operand axis i of ``transpose(y, perm)`` is axis perm[i] of y."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    ins, dims = list(eqn.invars), [[lc, lb], [rc, rb]]
    for k, x in enumerate(eqn.invars):
        producer = producers.get(x)
        if producer is None or producer.prim is not layout.transpose_p:
            continue
        perm = producer.params["permutation"]
        contracting, batch = dims[k]
        free = [perm[i] for i in range(len(perm)) if i not in contracting and i not in batch]
        if free == sorted(free):
            ins[k] = producer.invars[0]
            dims[k] = [tuple(perm[i] for i in contracting), tuple(perm[i] for i in batch)]
    if ins == list(eqn.invars):
        return eqn
    params = dict(eqn.params, dimension_numbers=((dims[0][0], dims[1][0]),
                                                 (dims[0][1], dims[1][1])))
    return type(eqn)(eqn.prim, tuple(ins), eqn.outvars, params, eqn.source)


def sink_accumulated_products(program):
    """``program`` with each top-level ``scan`` carry that only accumulates, ``c = c + u``
    with ``u`` a product ``a . b`` or a sum of ``k`` that nothing else in the step reads,
    computed after the loop instead: ``c0 + A . B`` contracting the steps as one more
    axis (or ``c0 + sum(K)`` over the steps too), from the stacks of the operands (a
    stacked input the scan reads, or a new stacked output). The gradient of an RNN's
    weights is such a carry: 50 small products in the backward loop become one product
    BLAS runs at full speed, and each step of the loop has three equations fewer to run.
    The sums come in BLAS's order, not the loop's, and a carry that starts at zero (as a
    gradient's does) is the sum itself: no pass adding it to a zero array. That is also
    JAX's answer, whose symbolic zeros are never added (so a sum of -0.0 stays -0.0)."""
    eqns, changed, zeros = [], False, set()
    for eqn in program.eqns:
        sunk = _sunk_scan(eqn, zeros) if eqn.prim is control.scan_p else None
        if sunk is None:
            eqns.append(eqn)
            if _is_zero_fill(eqn):
                zeros.add(eqn.outvars[0])
        else:
            eqns.extend(sunk)
            changed = True
    return dead_code_elimination(program.replace(eqns=eqns)) if changed else program


def _is_zero_fill(eqn):
    """Whether ``eqn`` broadcasts a literal zero (either sign)."""
    return eqn.prim is layout.broadcast_in_dim_p and type(eqn.invars[0]) is Literal and not \
        np.any(eqn.invars[0].value)


def _sunk_scan(eqn, zeros):
    """The equations replacing one scan whose carries accumulate products, or None;
    ``zeros`` holds the values known to be zero arrays."""
    p = eqn.params
    body, nc, nk, length = p["body"], p["num_consts"], p["num_carry"], p["length"]
    if type(length) is not int or length < 2 or body.consts:
        return None
    bc, bk, bx = control._split(body.invars, nc, nk)
    producers = {v: e for e in body.eqns for v in e.outvars}
    reads = collections.Counter(v for e in body.eqns for v in e.invars if type(v) is Var)
    reads.update(v for v in body.outvars if type(v) is Var)
    steps = set(bx)
    sinks = {}                          # carry index -> (its add, the equation of u)
    for j, c in enumerate(bk):
        add = producers.get(body.outvars[j])
        if (add is None or add.prim is not elementwise.add_p or reads[c] != 1
                or reads[add.outvars[0]] != 1):
            continue
        a, b = add.invars
        u = b if a is c else a if b is c else None
        if type(u) is not Var or u.aval.shape != c.aval.shape or u.aval.dtype != c.aval.dtype:
            continue
        term = producers.get(u)
        if term is None or not _sinkable(term) or not all(
                type(v) is Var and (v in steps or v in producers) for v in term.invars):
            continue
        sinks[j] = add, term
    if not sinks:
        return None
    stacked_made = []                   # body values the loop now also stacks
    for _, term in sinks.values():
        for v in term.invars:
            if v in producers and v not in stacked_made:
                stacked_made.append(v)
    if _stack_bytes(stacked_made, length) > HOIST_MAX_BYTES:
        return None
    keep = [j for j in range(nk) if j not in sinks]
    new_body = dead_code_elimination(body.replace(
        invars=bc + [bk[j] for j in keep] + bx,
        outvars=[body.outvars[j] for j in keep] + list(body.outvars[nk:]) + stacked_made))
    consts, init, xs = control._split(list(eqn.invars), nc, nk)
    carry_out, ys_out = eqn.outvars[:nk], eqn.outvars[nk:]
    new_stacks = [Var(control._stacked(v.aval, length)) for v in stacked_made]
    loop = Eqn(control.scan_p, tuple(consts + [init[j] for j in keep] + xs),
               tuple([carry_out[j] for j in keep] + list(ys_out) + new_stacks),
               dict(p, body=new_body, num_carry=len(keep)), eqn.source)
    outer = {v: x for v, x in zip(bx, xs)}
    outer.update(zip(stacked_made, new_stacks))
    out = [loop]
    for j, (add, term) in sinks.items():
        stacks = [outer[v] for v in term.invars]
        if init[j] in zeros:
            out.append(_over_steps(term, stacks, carry_out[j]))
            continue
        total = Var(carry_out[j].aval)
        out.append(_over_steps(term, stacks, total))
        out.append(Eqn(add.prim, (init[j], total), (carry_out[j],), {}, eqn.source))
    return out


def _stack_bytes(values, length):
    """The bytes of ``length``-step stacks of ``values``."""
    return sum(length * math.prod(v.aval.shape) * v.aval.dtype.itemsize for v in values)


def _sinkable(term):
    if term.prim is reductions.reduce_sum_p:
        return True
    return term.prim is contraction.dot_general_p and not term.params["dimension_numbers"][1][0]


def _over_steps(term, stacks, out):
    """``term`` summed over the steps: the same equation on the stacked operands, with
    their leading (step) axis reduced or contracted too."""
    if term.prim is reductions.reduce_sum_p:
        axes = (0,) + tuple(a + 1 for a in term.params["axes"])
        return Eqn(term.prim, tuple(stacks), (out,), dict(term.params, axes=axes), term.source)
    (lc, rc), batch = term.params["dimension_numbers"]
    dims = (((0,) + tuple(d + 1 for d in lc), (0,) + tuple(d + 1 for d in rc)), batch)
    return Eqn(term.prim, tuple(stacks), (out,), dict(term.params, dimension_numbers=dims),
               term.source)


def convert_masks_where_read(program):
    """``program`` with each numeric conversion of a boolean mask that more than one
    equation reads converted again right before each later reader that fuses, which then
    reads the mask itself. A max's JVP multiplies its tangent by the float mask of the
    maxima (JAX's rule), so a reverse pass kept that float array from the forward pass:
    4 bytes an element where the mask is 1 (a CNN's max-pool tie pass and its backward
    pass wrote and read 3.2 MB less per layer, 0.19 -> 0.10 ms each on two threads).
    Converting a bool is exact: the values are the same bits."""
    masks, read, eqns = {}, set(), []
    for eqn in program.eqns:
        ins = list(eqn.invars)
        for k, v in enumerate(ins):
            if type(v) is not Var or v not in masks:
                continue
            if v not in read or fusion(eqn) is None:
                read.add(v)
                continue
            again = Var(v.aval)
            made = masks[v]
            eqns.append(Eqn(made.prim, made.invars, [again], made.params, made.source))
            ins[k] = again
        if ins != list(eqn.invars):
            eqn = Eqn(eqn.prim, type(eqn.invars)(ins), eqn.outvars, eqn.params, eqn.source)
        x = eqn.invars[0] if eqn.invars else None
        if (eqn.prim is elementwise.convert_element_type_p and type(x) is Var
                and x.aval.dtype == np.bool_):
            masks[eqn.outvars[0]] = eqn
        eqns.append(eqn)
    return program.replace(eqns=eqns) if len(eqns) != len(program.eqns) else program


def fuse_product_into_patches_transpose(program):
    """``program`` with each ``patches_transpose`` of a product ``g . w`` (the cotangent of
    a convolution's output with its (K, C, F) kernel, read nowhere else) made one
    ``product_patches_transpose``: the compiled step multiplies and adds back a few
    examples at a time, and the product, K times the input's size, never leaves the
    cache (a 64x14x14x16 3x3 layer's input gradient: 0.80 -> 0.68 ms on two threads).
    The same bits: each row of the product is one BLAS call's row either way."""
    readers = collections.Counter(v for e in program.eqns for v in e.invars if type(v) is Var)
    readers.update(v for v in program.outvars if type(v) is Var)
    products = {e.outvars[0]: e for e in program.eqns if e.prim is contraction.dot_general_p}
    fused = {}
    for eqn in program.eqns:
        if eqn.prim is not windows.patches_transpose_p:
            continue
        product = products.get(eqn.invars[0])
        if product is not None and readers[eqn.invars[0]] == 1 and _kernel_product(product):
            fused[eqn] = Eqn(windows.product_patches_transpose_p, product.invars, eqn.outvars,
                             eqn.params, eqn.source)
    if not fused:
        return program
    eqns = [fused.get(e, e) for e in program.eqns]
    return dead_code_elimination(program.replace(eqns=eqns))


def _kernel_product(eqn):
    """Is ``eqn`` (N, out..., F) . (K, C, F) over F, in one floating dtype."""
    g, w = eqn.invars
    (lc, rc), (lb, _) = eqn.params["dimension_numbers"]
    dtype = g.aval.dtype
    return (not lb and len(w.aval.shape) == 3 and tuple(lc) == (len(g.aval.shape) - 1,)
            and tuple(rc) == (2,) and w.aval.dtype == dtype
            and np.issubdtype(dtype, np.floating)
            and eqn.params["preferred_element_type"] in (None, dtype))
