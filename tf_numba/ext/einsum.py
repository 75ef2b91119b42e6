"""``einsum``: NumPy's Einstein summation as pairwise ``dot_general`` plus layout ops.

Family ``tf_numba.einsum.v1``. It declares no op of its own: a call is planned once per
(subscripts, shapes, optimize) — diagonals for repeated labels, size-1 broadcast axes
dropped, lone labels summed, then a contraction path — and the plan emits ``diagonal``
(reshape + strided slice), ``reshape``, ``reduce_sum``, ``dot_general`` and ``transpose``.
Its derivatives are those primitives' rules, so every order of AD and ``jit`` come free.

A size-1 axis broadcast against a longer one is *dropped* from its operand (a reshape)
rather than broadcast out: the reshape's transpose gives the gradient of that operand its
own shape, with the sum over the broadcast axis done by the contraction itself.

Contraction order (``optimize``): ``"auto"`` (the default) is ``"optimal"`` for up to
``OPTIMAL_UP_TO`` operands and ``"greedy"`` beyond; ``"greedy"`` (and ``True``) contracts
the pair that shrinks the working set most; ``"optimal"`` searches every pairwise order
for the fewest flops (subset dynamic programming, up to 10 operands); ``False`` contracts
left to right; a path (``[(0, 1), (0, 1)]`` or NumPy's ``["einsum_path", ...]``) is used
as given; any other string goes to ``opt_einsum`` when it is installed. Greedy can be far
from optimal: for ``bij,jk,bk->bi`` it contracts ``bij,jk`` first (50x the flops).

Each contraction is then *oriented* (which operand goes left, the order of its batch and
contracted labels) so that the whole path copies the fewest elements: dot_general reads an
operand as it is when its labels are batch, then free and contracted in either order, and
the label order one step leaves is what the next step (and the gradient's contractions,
which read the same intermediates) must take.

>>> import numpy as np, tf_numba as tf
>>> tf.einsum("bij,bjk->bik", np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
(2, 3, 5)
"""
import functools
import itertools
import math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ShapeError, UnsupportedError
from ..ops import contraction, layout, reductions
from ..ops import elementwise as ew
from . import Family

FAMILY = Family("tf_numba.einsum.v1", module=__name__,
                doc="Einstein summation lowered to dot_general and layout primitives")

OPTIMAL_UP_TO = 8
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NEWLINE = "\n"


# ---------------------------------------------------------------- parsing

def _sublist_text(sublist):
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        else:
            s = int(s)
            if not 0 <= s < 52:
                raise ShapeError(f"subscript {s} is not in [0, 52)", op="einsum")
            out.append(_LETTERS[s])
    return "".join(out)


def split_args(args):
    """(subscripts, operands) from either calling form of ``numpy.einsum``."""
    if not args:
        raise TypeError("einsum() needs subscripts and at least one operand")
    if isinstance(args[0], str):
        return args[0], list(args[1:])
    operands, subs = [], []
    rest = list(args)
    while len(rest) >= 2:
        operands.append(rest.pop(0))
        subs.append(_sublist_text(rest.pop(0)))
    text = ",".join(subs)
    if rest:
        text += "->" + _sublist_text(rest[0])
    return text, operands


def _parse(subscripts, ranks):
    """Per-operand label tuples and the output labels. Letters stay letters; the dims an
    ellipsis stands for get labels 0, 1, ... aligned to the right across operands."""
    text = subscripts.replace(" ", "")
    if "->" in text:
        lhs, out_text = text.split("->")
        if "->" in out_text or "-" in out_text or ">" in out_text:
            raise ShapeError(f"subscripts {subscripts!r}: '->' may appear once", op="einsum")
    else:
        lhs, out_text = text, None
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ShapeError(f"subscripts {subscripts!r} name {len(terms)} operands but "
                         f"{len(ranks)} were given", op="einsum")
    for term in terms + ([out_text] if out_text is not None else []):
        bad = set(term.replace("...", "")) - set(_LETTERS)
        if bad or term.count("...") > 1 or "." in term.replace("...", ""):
            raise ShapeError(f"subscripts {subscripts!r}: invalid term {term!r} (labels are "
                             "letters, with at most one '...')", op="einsum")
    n_ell = 0
    for term, rank in zip(terms, ranks):
        named = len(term.replace("...", ""))
        if "..." in term:
            n_ell = max(n_ell, rank - named)
            if rank < named:
                raise ShapeError(f"operand of rank {rank} has more subscripts than dims in "
                                 f"{term!r}", op="einsum")
        elif rank != named:
            raise ShapeError(f"operand of rank {rank} does not match its subscripts {term!r} "
                             f"({named} labels)", op="einsum")
    ell = tuple(range(n_ell))
    labels = []
    for term, rank in zip(terms, ranks):
        if "..." in term:
            head, tail = term.split("...")
            k = rank - len(head) - len(tail)
            labels.append(tuple(head) + ell[n_ell - k:] + tuple(tail))
        else:
            labels.append(tuple(term))
    if out_text is None:
        counts = {}
        for ls in labels:
            for lab in ls:
                if type(lab) is str:
                    counts[lab] = counts.get(lab, 0) + 1
        out = ell + tuple(sorted(lab for lab, c in counts.items() if c == 1))
    else:
        if "..." in out_text:
            head, tail = out_text.split("...")
            out = tuple(head) + ell + tuple(tail)
        else:
            if n_ell and any("..." in t for t in terms):
                used = [lab for ls in labels for lab in ls if type(lab) is int]
                if used:
                    raise ShapeError("output has more dimensions than subscripts given in "
                                     "einstein sum, but no '...' ellipsis provided to "
                                     "broadcast the extra dimensions.", op="einsum")
            out = tuple(out_text)
        if len(set(out)) != len(out):
            raise ShapeError(f"output subscripts {out_text!r} repeat a label", op="einsum")
        everywhere = {lab for ls in labels for lab in ls}
        for lab in out:
            if lab not in everywhere:
                raise ShapeError(f"output label {lab!r} appears in no input", op="einsum")
    return labels, out


# ---------------------------------------------------------------- contraction order

def _cost_size(d):
    return d if type(d) is int else 64     # a symbolic length: assume a moderate one


def _size(labels, sizes):
    return math.prod(_cost_size(sizes[lab]) for lab in labels)


def _result_labels(a, b, keep):
    """Labels of the contraction of label sets ``a`` and ``b`` that ``keep`` still needs."""
    return frozenset(lab for lab in a | b if lab in keep)


def _greedy(sets, out, sizes):
    """opt_einsum's greedy heuristic: contract the pair that removes the most elements
    (result size minus operand sizes), ties broken by the smaller result."""
    sets = list(sets)
    path = []
    while len(sets) > 1:
        best = None
        for i, j in itertools.combinations(range(len(sets)), 2):
            if not sets[i] & sets[j]:
                continue
            keep = set(out).union(*(sets[k] for k in range(len(sets)) if k not in (i, j)))
            res = _result_labels(sets[i], sets[j], keep)
            size = _size(res, sizes)
            cost = (size - _size(sets[i], sizes) - _size(sets[j], sizes), size)
            if best is None or cost < best[0]:
                best = (cost, i, j, res)
        if best is None:     # only outer products are left: take the two smallest
            order = sorted(range(len(sets)), key=lambda k: _size(sets[k], sizes))
            i, j = sorted(order[:2])
            keep = set(out).union(*(sets[k] for k in range(len(sets)) if k not in (i, j)))
            best = (None, i, j, _result_labels(sets[i], sets[j], keep))
        _, i, j, res = best
        path.append((i, j))
        sets = [s for k, s in enumerate(sets) if k not in (i, j)] + [res]
    return path


def _optimal(sets, out, sizes):
    """The pairwise order of least total flops, by dynamic programming over subsets."""
    n = len(sets)
    if n > 10:
        return _greedy(sets, out, sizes)
    full = (1 << n) - 1
    labels_of = {}
    for mask in range(1, full + 1):
        inside = frozenset().union(*(sets[k] for k in range(n) if mask >> k & 1))
        outside = set(out).union(*(sets[k] for k in range(n) if not mask >> k & 1))
        labels_of[mask] = (inside, frozenset(lab for lab in inside if lab in outside))
    best = {1 << k: (0, None) for k in range(n)}
    for mask in sorted(range(1, full + 1), key=lambda m: bin(m).count("1")):
        if mask in best:
            continue
        low = mask & -mask
        sub = (mask - 1) & mask
        choice = None
        while sub:
            if sub & low:           # each split once: the part holding the lowest operand
                rest = mask ^ sub
                if rest:
                    flops = _size(labels_of[sub][1] | labels_of[rest][1], sizes)
                    cost = best[sub][0] + best[rest][0] + flops
                    if choice is None or cost < choice[0]:
                        choice = (cost, (sub, rest))
            sub = (sub - 1) & mask
        best[mask] = choice
    path = []

    def emit(mask):
        split = best[mask][1]
        if split is None:
            return
        a, b = split
        emit(a)
        emit(b)
        i, j = sorted((live.index(a), live.index(b)))
        path.append((i, j))
        live.pop(j)
        live.pop(i)
        live.append(mask)

    live = [1 << k for k in range(n)]      # the subset each operand position holds
    emit(full)
    return path


def _opt_einsum_path(kind, sets, out, sizes):
    try:
        import opt_einsum
    except ImportError:
        raise UnsupportedError(f"optimize={kind!r} needs opt_einsum (not installed); use "
                               "'greedy', 'optimal', False or an explicit path",
                               op="einsum") from None
    fn = opt_einsum.paths.get_path_fn(kind)
    size_dict = {lab: _cost_size(d) for lab, d in sizes.items()}
    return [tuple(p) for p in fn([set(s) for s in sets], set(out), size_dict)]


def _choose_path(optimize, sets, out, sizes):
    n = len(sets)
    if n < 2:
        return []
    if optimize is False or optimize is None:
        return [(0, 1)] * (n - 1)
    if optimize == "auto":
        optimize = "optimal" if n <= OPTIMAL_UP_TO else "greedy"
    if optimize is True or optimize == "greedy":
        return _greedy(sets, out, sizes)
    if optimize == "optimal":
        return _optimal(sets, out, sizes)
    if isinstance(optimize, str):
        return _opt_einsum_path(optimize, sets, out, sizes)
    path = [tuple(int(i) for i in step) for step in optimize if step != "einsum_path"]
    live = n
    for step in path:
        if len(step) != 2 or len(set(step)) != 2 or not all(0 <= i < live for i in step):
            raise ShapeError(f"path step {step} must name two of the {live} operands "
                             "left (tf_numba contracts pairwise)", op="einsum")
        live -= 1
    if live != 1:
        raise ShapeError(f"path {path} leaves {live} operands; it must contract all "
                         f"{n} into one", op="einsum")
    return path


# ---------------------------------------------------------------- the plan

class Plan:
    """What one einsum specialization does: per-operand preparation, pairwise contractions
    and the final reduction and permutation. Built once per (subscripts, shapes, optimize)."""
    __slots__ = ("prepare", "steps", "final_sum", "final_perm", "path", "labels", "out")

    def __init__(self, prepare, steps, final_sum, final_perm, path, labels, out):
        self.prepare, self.steps = prepare, steps
        self.final_sum, self.final_perm = final_sum, final_perm
        self.path, self.labels, self.out = path, labels, out


def _label_sizes(labels, shapes):
    sizes = {}
    for ls, shape in zip(labels, shapes):
        for lab, d in zip(ls, shape):
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = d
            elif d != 1 and d != prev:
                name = lab if type(lab) is str else "..."
                raise ShapeError(f"operands could not be broadcast together: label {name!r} "
                                 f"has sizes {prev} and {d} (shapes "
                                 f"{', '.join(str(tuple(s)) for s in shapes)})", op="einsum")
    return sizes


def _prepare_operand(labels, shape, sizes, others, out):
    """Steps turning one operand into a tensor with distinct labels that are all needed:
    take diagonals, drop broadcast size-1 axes, sum labels used nowhere else."""
    ops, labels, shape = [], list(labels), list(shape)
    while True:
        dup = next((lab for lab in labels if labels.count(lab) > 1), None)
        if dup is None:
            break
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        if shape[i] != shape[j]:
            raise ShapeError(f"label {dup!r} repeats in one operand over dims of sizes "
                             f"{shape[i]} and {shape[j]}", op="einsum")
        ops.append(("diagonal", i, j))
        n = shape[i]
        labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [dup]
        shape = [d for k, d in enumerate(shape) if k not in (i, j)] + [n]
    drop = [k for k, (lab, d) in enumerate(zip(labels, shape)) if d == 1 and sizes[lab] != 1]
    if drop:
        labels = [lab for k, lab in enumerate(labels) if k not in drop]
        shape = [d for k, d in enumerate(shape) if k not in drop]
        ops.append(("reshape", tuple(shape)))
    lone = tuple(k for k, lab in enumerate(labels) if lab not in others and lab not in out)
    if lone:
        ops.append(("sum", lone))
        labels = [lab for k, lab in enumerate(labels) if k not in lone]
    return tuple(ops), tuple(labels)


def _orientations(a, b, keep):
    """Every (swap, batch labels, contracted labels) for contracting label tuples ``a`` and
    ``b``: which operand goes left, and the order of the batch and contracted labels (each
    as one of the operands has them: another order would copy both)."""
    shared = [lab for lab in a if lab in b]
    for swap in (False, True):
        lhs, rhs = (b, a) if swap else (a, b)

        def orders(want):
            return {tuple(lab for lab in lhs if lab in want),
                    tuple(lab for lab in rhs if lab in want)}
        for batch in orders({lab for lab in shared if lab in keep}):
            for contract in orders({lab for lab in shared if lab not in keep}):
                yield swap, batch, contract


def _copied(lhs, rhs, batch, contract, sizes):
    """Elements dot_general copies to bring its operands into BLAS layout: each operand is
    read as it is when its labels are batch, then free and contracted in either order (a
    row-major matrix or the transpose of one); otherwise it is permuted into a copy."""
    lfree = tuple(lab for lab in lhs if lab not in batch and lab not in contract)
    rfree = tuple(lab for lab in rhs if lab not in batch and lab not in contract)
    cost = 0
    if lhs not in (batch + lfree + contract, batch + contract + lfree):
        cost += _size(lhs, sizes)
    if rhs not in (batch + contract + rfree, batch + rfree + contract):
        cost += _size(rhs, sizes)
    return cost, batch + lfree + rfree


_ORDERS_KEPT = 6       # label orders of one intermediate kept while orienting a path


def _orient_path(current, path, out, sizes):
    """The orientation of each step of ``path`` that copies the fewest elements in all:
    the label order one contraction leaves decides what the next one must copy, and the
    gradient's contractions read the same intermediates, so orders are chosen for the whole
    path (each intermediate feeds one later step: dynamic programming over its label
    orders), the final transpose counted as a copy. Returns one choice per step."""
    live = [{tuple(ls): (0, ())} for ls in current]
    for step, (i, j) in enumerate(path):
        rest_labels = [next(iter(live[k])) for k in range(len(live)) if k not in (i, j)]
        keep = set(out).union(*rest_labels)
        options = {}
        for a_full, (a_cost, a_trace) in live[i].items():
            for b_full, (b_cost, b_trace) in live[j].items():
                a = tuple(lab for lab in a_full if lab in b_full or lab in keep)
                b = tuple(lab for lab in b_full if lab in a_full or lab in keep)
                for choice in _orientations(a, b, keep):
                    swap, batch, contract = choice
                    lhs, rhs = (b, a) if swap else (a, b)
                    copied, result = _copied(lhs, rhs, batch, contract, sizes)
                    cost = a_cost + b_cost + copied
                    if result not in options or cost < options[result][0]:
                        options[result] = (cost, a_trace + b_trace + ((step, choice),))
        kept = sorted(options.items(), key=lambda item: item[1][0])[:_ORDERS_KEPT]
        live = [live[k] for k in range(len(live)) if k not in (i, j)] + [dict(kept)]
    best = None
    for final, (cost, trace) in live[0].items():
        final = tuple(lab for lab in final if lab in out)
        if final != tuple(out):
            cost += _size(final, sizes)
        if best is None or cost < best[0]:
            best = (cost, trace)
    return [choice for _, choice in sorted(best[1])]


@functools.lru_cache(maxsize=1024)
def plan(subscripts, shapes, optimize):
    """The cached ``Plan`` for these subscripts, operand shapes and ``optimize`` value."""
    labels, out = _parse(subscripts, [len(s) for s in shapes])
    sizes = _label_sizes(labels, shapes)
    prepare, current = [], []
    for k, (ls, shape) in enumerate(zip(labels, shapes)):
        others = {lab for m, o in enumerate(labels) if m != k for lab in o}
        ops, ls = _prepare_operand(ls, shape, sizes, others, out)
        prepare.append(ops)
        current.append(ls)
    path = _choose_path(optimize, [frozenset(ls) for ls in current], out, sizes)
    steps = []
    for (i, j), (swap, batch, contract) in zip(path, _orient_path(current, path, out, sizes)):
        a, b = current[i], current[j]
        rest = [current[k] for k in range(len(current)) if k not in (i, j)]
        keep = set(out).union(*rest)
        a_sum = tuple(k for k, lab in enumerate(a) if lab not in b and lab not in keep)
        b_sum = tuple(k for k, lab in enumerate(b) if lab not in a and lab not in keep)
        a = tuple(lab for lab in a if lab in b or lab in keep)
        b = tuple(lab for lab in b if lab in a or lab in keep)
        if swap:
            i, j, a, b, a_sum, b_sum = j, i, b, a, b_sum, a_sum
        dims = ((tuple(a.index(lab) for lab in contract), tuple(b.index(lab) for lab in contract)),
                (tuple(a.index(lab) for lab in batch), tuple(b.index(lab) for lab in batch)))
        result = (tuple(batch) + tuple(lab for lab in a if lab not in b)
                  + tuple(lab for lab in b if lab not in a))
        steps.append((i, j, a_sum, b_sum, dims))
        current = rest + [result]
    final = current[0]
    final_sum = tuple(k for k, lab in enumerate(final) if lab not in out)
    final = tuple(lab for lab in final if lab in out)
    perm = tuple(final.index(lab) for lab in out)
    return Plan(tuple(prepare), tuple(steps), final_sum, perm, tuple(path),
                tuple(labels), out)


# ---------------------------------------------------------------- running a plan

def _run_prepare(x, ops):
    for op in ops:
        kind = op[0]
        if kind == "diagonal":
            x = layout.diagonal(x, 0, op[1], op[2])
        elif kind == "reshape":
            x = layout.reshape(x, op[1])
        else:
            x = reductions.reduce_sum(x, op[1])
    return x


def _optimize_key(optimize):
    if isinstance(optimize, (list, tuple)):
        return tuple(tuple(s) if not isinstance(s, str) else s for s in optimize)
    return optimize


def contract(subscripts, xs, dt, optimize="auto"):
    """``subscripts`` over the arrays ``xs``, all of dtype ``dt``, by the plan for their
    shapes. ``tnp.einsum`` promotes its operands to one dtype and calls this."""
    logical = dtypes.is_bool(dt)
    if logical:     # NumPy's bool einsum is an or of ands: count, then compare with zero
        xs = [ew.convert_element_type(x, dtypes.int64) for x in xs]
    shapes = tuple(tuple(aval_of(x).shape) for x in xs)
    p = plan(subscripts, shapes, _optimize_key(optimize))
    current = [_run_prepare(x, ops) for x, ops in zip(xs, p.prepare)]
    for i, j, a_sum, b_sum, dims in p.steps:
        a = reductions.reduce_sum(current[i], a_sum)
        b = reductions.reduce_sum(current[j], b_sum)
        rest = [current[k] for k in range(len(current)) if k not in (i, j)]
        current = rest + [contraction.dot_general(a, b, dims)]
    result = reductions.reduce_sum(current[0], p.final_sum)
    if p.final_perm != tuple(range(len(p.final_perm))):
        result = layout.transpose(result, p.final_perm)
    if logical:
        result = ew.ne(result, np.asarray(0, np.int64))
    return result


def einsum_path(*operands, optimize="auto"):
    """(path, description) as ``numpy.einsum_path``: the pairwise contraction order einsum
    uses for these operands, in NumPy's ``["einsum_path", (i, j), ...]`` form."""
    subscripts, arrays = split_args(operands)
    shapes = tuple(tuple(aval_of(x).shape) if not isinstance(x, (int, float, complex))
                   else () for x in arrays)
    p = plan(subscripts, shapes, _optimize_key(optimize))
    lines = [f"  subscripts: {subscripts}", f"  contraction steps: {len(p.path)}"]
    return ["einsum_path", *p.path], _NEWLINE.join(lines)
