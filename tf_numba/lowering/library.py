"""Lowering rules of the non-fused primitives: each writes a few lines of kernel source.

Each is registered as a ``rules.Library`` record under its primitive: ``emit(em, ins,
outs, eqn)`` gets source expressions of the operands (rank-0 operands are scalars) and the
names to assign; its ``supports`` may decline an equation (a dtype numba cannot handle
there). A declined or rule-less equation runs its NumPy impl between compiled segments.
"""
import math
from functools import partial

from ..core import dtypes
from ..core.primitive import register
from ..ops import contraction, indexing, layout, reductions, sorting, special, windows
from . import products, unrolled
from ..kernel_vocab.rules import Library
from ..kernel_vocab.scalar_exprs import ctor, literal
from .schedule import PARALLEL_MIN_ELEMENTS, Call


# numba takes seconds to type ``transpose(axes)`` and array-into-slice assignment the
# first time a process meets them, against ~0.2 s for plain loops (perf/compile_features.py
# measured it), so data movement is written as explicit loops.

def permuted_copy(em, x, rank, perm):
    """Lines copying ``x`` into a new C-ordered array with axes ``perm``; returns its name.

    The loops follow the copy's axes, writing along its last, except that the loop over
    the source's last axis runs just outside that one: the two innermost loops then move
    a tile whose source rows stay in L1 while it is written out (a 24^4 float64
    (1, 3, 0, 2) permutation: 270 -> 170 us; NumPy's copy: 275)."""
    if perm == tuple(range(rank)):
        return x
    out = em.fresh("moved")
    shape = "".join(f"{x}.shape[{p}], " for p in perm)
    em.emit(f"{out} = workspace.empty(({shape}), {x}.dtype)")
    idx = [em.fresh("j") for _ in range(rank)]
    order = list(range(rank))
    reads_along = perm.index(rank - 1)     # the copy's axis that is the source's last
    if reads_along != rank - 1:
        order.remove(reads_along)
        order.insert(rank - 2, reads_along)
    for depth, k in enumerate(order):
        em.emit("    " * depth + f"for {idx[k]} in range({out}.shape[{k}]):")
    source_index = [None] * rank
    for k, p in enumerate(perm):
        source_index[p] = idx[k]
    em.emit("    " * rank + f"{out}[{', '.join(idx)}] = {x}[{', '.join(source_index)}]")
    return out


def _rows(em, x, axis, rank):
    """Lines making ``x`` 2-D with ``axis`` last; returns (rows_name, perm)."""
    perm = tuple(a for a in range(rank) if a != axis) + (axis,)
    moved = permuted_copy(em, x, rank, perm)
    rows = em.fresh("rows")
    em.emit(f"{rows} = workspace.contiguous({moved}).reshape((-1, {x}.shape[{axis}]))")
    return rows, perm


def _unrows(em, out, rows_result, shape_src, perm):
    """Undo ``_rows``: reshape to the moved shape and move the axis back."""
    moved_shape = "(" + "".join(f"{shape_src}[{p}], " for p in perm) + ")"
    inverse = tuple(perm.index(a) for a in range(len(perm)))
    shaped = em.fresh("shaped")
    em.emit(f"{shaped} = {rows_result}.reshape({moved_shape})")
    em.emit(f"{out} = {permuted_copy(em, shaped, len(perm), inverse)}")


def assign_window(em, target, value, rank, starts, steps=None):
    """Loop lines ``target[starts + steps * j] = value[j]`` over all of ``value``."""
    idx = [em.fresh("j") for _ in range(rank)]
    for k in range(rank):
        em.emit("    " * k + f"for {idx[k]} in range({value}.shape[{k}]):")
    steps = steps or [1] * rank
    where = [f"{s} + {st} * {j}" if st != 1 else f"{s} + {j}"
             for s, st, j in zip(starts, steps, idx)]
    em.emit("    " * rank + f"{target}[{', '.join(where)}] = {value}[{', '.join(idx)}]")


def fill(em, target, value, rank):
    """Loop lines ``target[...] = value`` (a scalar)."""
    idx = [em.fresh("j") for _ in range(rank)]
    for k in range(rank):
        em.emit("    " * k + f"for {idx[k]} in range({target}.shape[{k}]):")
    em.emit("    " * rank + f"{target}[{', '.join(idx)}] = {value}")


def _reshape(em, ins, outs, eqn):
    x, (out,) = ins[0], outs
    x_var, out_var = eqn.invars[0], eqn.outvars[0]
    new = out_var.aval.shape
    if not x_var.aval.shape:
        em.allocate(out, out_var, em.shape(new))
        fill(em, out, x, len(new))
        if out_var in em.scalars:
            em.elements[out_var] = [x]
    elif not new:   # every dim is 1: read the element (no copy, any layout)
        em.emit(f"{out} = " + (em.elements[x_var][0] if x_var in em.scalars else
                               x + _index_text(['0'] * len(x_var.aval.shape))))
    elif out_var in em.scalars:     # no copy of a strided view per iteration
        em.allocate(out, out_var, em.shape(new))
        unrolled.store_elements(em, out, out_var, em.elements[x_var])   # C order: kept
    else:
        em.emit(f"{out} = workspace.contiguous({x}).reshape({em.shape(new)})")


# which steps' outputs have their elements in scalars when their operands do
# (``Library.holds_elements``): the element reads and stores they then print. A reshape
# copies its operand's scalars into an array only in a loop body (where a strided view's
# copy would repeat); elsewhere it stays a view.
def _reshape_holds(eqn, held, context):
    x = eqn.invars[0]
    return bool(eqn.outvars[0].aval.shape) and (
        not x.aval.shape or (x in held and context.in_loop))


def _tiny_part_holds(eqn, held, context):
    return eqn.invars[0] in held and unrolled.tiny(eqn.outvars[0].aval.shape)


def _pad_holds(eqn, held, context):
    return _pads_in_place(eqn) and _tiny_part_holds(eqn, held, context)


def _all_held(eqn, held, context):
    return all(v in held for v in eqn.invars)


def _transpose(em, ins, outs, eqn):
    perm = tuple(eqn.params["permutation"])
    if perm == (1, 0):
        em.emit(f"{outs[0]} = {ins[0]}.T")
        return
    em.emit(f"{outs[0]} = {permuted_copy(em, ins[0], len(perm), perm)}")


def _index_text(parts):
    return "[" + ", ".join(parts) + ("," if len(parts) == 1 else "") + "]"


def _rev(em, ins, outs, eqn):
    dims = eqn.params["dimensions"]
    rank = len(eqn.invars[0].aval.shape)
    parts = ["::-1" if d in dims else ":" for d in range(rank)]
    em.emit(f"{outs[0]} = {ins[0]}{_index_text(parts)}")
    x, out = eqn.invars[0], eqn.outvars[0]
    if out in em.scalars:
        em.elements[out] = [
            unrolled.element(em, x, [n - 1 - j if d in dims else j
                                     for d, (n, j) in enumerate(zip(x.aval.shape, position))])
            for position in unrolled.positions(x.aval.shape)]


def _slice(em, ins, outs, eqn):
    p = eqn.params
    parts = [f"{em.dim(s)}:{em.dim(l)}:{st}" for s, l, st in
             zip(p["start_indices"], p["limit_indices"], p["strides"])]
    em.emit(f"{outs[0]} = {ins[0]}{_index_text(parts)}")
    x, out = eqn.invars[0], eqn.outvars[0]
    if out in em.scalars:
        em.elements[out] = [
            unrolled.element(em, x, [s + st * j for s, st, j in
                                     zip(p["start_indices"], p["strides"], position)])
            for position in unrolled.positions(out.aval.shape)]


def _pad(em, ins, outs, eqn):
    x, value = ins
    shape = eqn.invars[0].aval.shape
    config = eqn.params["padding_config"]
    if all(lo >= 0 and hi >= 0 for lo, hi, _ in config):     # nothing cropped
        _pad_into(em, x, value, outs[0], eqn)
        return
    extended, cropped = [], []
    for (lo, hi, interior), n in zip(eqn.params["padding_config"], shape):
        body = n + max(n - 1, 0) * interior
        size = max(lo, 0) + body + max(hi, 0)
        extended.append(size)
        cropped.append(f"{em.dim(max(-lo, 0))}:{em.dim(size - max(-hi, 0))}")
    full = em.fresh("padded")
    dt = ctor(eqn.outvars[0].aval.dtype)
    em.emit(f"{full} = workspace.full({em.shape(tuple(extended))}, {value}, {dt})")
    assign_window(em, full, x, len(shape), [em.dim(max(lo, 0)) for lo, _, _ in config],
                  [interior + 1 for _, _, interior in config])
    em.emit(f"{outs[0]} = {full}{_index_text(cropped)}")


def _pad_into(em, x, value, out, eqn):
    """A pad with no negative widths, written into the output array itself."""
    config, out_var = eqn.params["padding_config"], eqn.outvars[0]
    em.allocate(out, out_var, em.shape(out_var.aval.shape))
    starts = [lo for lo, _, _ in config]
    steps = [interior + 1 for _, _, interior in config]
    if out_var in em.scalars:
        names = [value] * math.prod(out_var.aval.shape)
        known = em.elements[eqn.invars[0]]
        for name, position in zip(known, unrolled.positions(eqn.invars[0].aval.shape)):
            at = [lo + st * j for lo, st, j in zip(starts, steps, position)]
            names[unrolled.flat(at, out_var.aval.shape)] = name
        unrolled.store_elements(em, out, out_var, names)
        return
    fill(em, out, value, len(starts))
    assign_window(em, out, x, len(starts), [em.dim(lo) for lo in starts], steps)


def _concatenate(em, ins, outs, eqn):
    axis, rank = eqn.params["dimension"], len(eqn.outvars[0].aval.shape)
    total = " + ".join(f"{x}.shape[{axis}]" for x in ins)
    shape = "".join((total if k == axis else f"{ins[0]}.shape[{k}]") + ", " for k in range(rank))
    em.allocate(outs[0], eqn.outvars[0], f"({shape})")
    if eqn.outvars[0] in em.scalars:
        parts = [_split_elements(em.elements[v], v.aval.shape, axis) for v in eqn.invars]
        names = [name for chunks in zip(*parts) for chunk in chunks for name in chunk]
        unrolled.store_elements(em, outs[0], eqn.outvars[0], names)
        return
    start = "0"
    for x in ins:
        assign_window(em, outs[0], x, rank, [start if k == axis else "0" for k in range(rank)])
        start = f"{start} + {x}.shape[{axis}]" if start != "0" else f"{x}.shape[{axis}]"


def _split_elements(names, shape, axis):
    """C-ordered ``names`` of an array of ``shape`` as the runs that a concatenation along
    ``axis`` interleaves: one run per index of the axes before ``axis``."""
    run = math.prod(shape[axis:])
    return [names[k:k + run] for k in range(0, len(names), run)]


def _dim_size(em, ins, outs, eqn):
    dims = [em.dim(d) for d in eqn.params["dims"]]
    em.emit(f"{outs[0]} = np.int64({' * '.join(dims) or '1'})")


def _dot_operand(em, src, aval, groups):
    """``src`` as a C-ordered 3-D array and how BLAS reads each of its matrices.

    ``groups`` are the operand's (batch, rows, cols) axes. Returns ``(name, transposed)``:
    ``name[b]`` is the (rows, cols) matrix of batch ``b``, or, when ``transposed``, its
    (cols, rows) transpose, which BLAS reads as it is through ``name[b].T``. Only an operand
    whose axes are in neither order is copied.
    """
    batch, rows, cols = groups
    transposed = products.reads_transposed(aval.ndim, groups)
    if transposed:
        rows, cols = cols, rows
    sizes = ", ".join(" * ".join(f"{src}.shape[{i}]" for i in g) or "1"
                      for g in (batch, rows, cols))
    moved = permuted_copy(em, src, aval.ndim, batch + rows + cols)
    name = em.fresh("op")
    em.emit(f"{name} = workspace.contiguous({moved}).reshape(({sizes}))")
    return name, transposed


def _dot_general(em, ins, outs, eqn):
    """Print the product ``products.choose`` decided (``em.call.product``)."""
    product = em.call.product
    if product.form in ("dot", "matvec", "vecmat"):
        _matvec(em, ins, outs, eqn, product.form)
        return
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    a, b = ins
    la, ra = eqn.invars[0].aval, eqn.invars[1].aval
    helper = f"loops.{product.helper}"
    if la.ndim == ra.ndim == 2 and len(lc) == 1 and not lb:
        # a matrix product reads its operands as they are, whatever their layout (a
        # LAPACK result is column-major): gemm_into and dot_into copy only what BLAS
        # cannot read. (Made C-ordered first, a 512 x 512 one cost 0.8 ms a copy.)
        lt, rt = lc == (0,), rc == (1,)
        em.allocate(outs[0], eqn.outvars[0],
                    f"({_read(a, lt)}.shape[0], {_read(b, rt)}.shape[1])")
        _product(em, product, (a, lt), (b, rt), outs[0])
        return
    lf = tuple(i for i in range(la.ndim) if i not in lc and i not in lb)
    rf = tuple(i for i in range(ra.ndim) if i not in rc and i not in rb)
    lhs, lt = _dot_operand(em, a, la, (lb, lf, lc))
    rhs, rt = _dot_operand(em, b, ra, (rb, rc, rf))
    rows = f"{lhs}.shape[{2 if lt else 1}]"
    cols = f"{rhs}.shape[{1 if rt else 2}]"
    # the output dims are read off the operands, so the source holds for any lengths
    dims = ([f"{a}.shape[{i}]" for i in lb] + [f"{a}.shape[{i}]" for i in lf]
            + [f"{b}.shape[{j}]" for j in rf])
    prod = em.fresh("prod")
    if dims:
        em.allocate(outs[0], eqn.outvars[0], f"({''.join(d + ', ' for d in dims)})")
        em.emit(f"{prod} = {outs[0]}.reshape(({lhs}.shape[0], {rows}, {cols}))")
    else:
        em.emit(f"{prod} = workspace.empty((1, {rows}, {cols}), {ctor(eqn.outvars[0].aval.dtype)})")
    if product.form == "batched_matvec":
        _matvec_rows(em, prod, (lhs, lt), (rhs, rt), vector_on_right=not rf)
    elif product.form == "batched":
        em.emit(f"for bi in range({lhs}.shape[0]):")
        em.emit(f"    {helper}({_matrix(lhs, lt, 'bi')}, {_matrix(rhs, rt, 'bi')}, {prod}[bi])")
    else:
        _product(em, product, (f"{lhs}[0]", lt), (f"{rhs}[0]", rt), f"{prod}[0]")
    if not dims:
        em.emit(f"{outs[0]} = {prod}[0, 0, 0]")


def _read(name, transposed):
    """A stored matrix as BLAS reads it: ``name`` or its transpose."""
    return f"{name}.T" if transposed else name


def _product(em, product, lhs, rhs, out):
    """``out = lhs @ rhs``, each operand a (stored matrix, transposed) pair, by the helper
    ``product`` names: one BLAS call, or one shared out among threads by rows of ``out``
    or by the contraction (``products``)."""
    (a, lt), (b, rt) = lhs, rhs
    if product.helper == "product_by_rows":
        em.emit(f"loops.product_by_rows({a}, {_read(b, rt)}, {out}, {product.vector})")
    elif product.helper == "product_by_depth":
        em.emit(f"loops.product_by_depth({a}, {b}, {out}, {product.vector})")
    else:
        em.emit(f"loops.{product.helper}({_read(a, lt)}, {_read(b, rt)}, {out})")


def _matrix(name, transposed, b):
    return f"{name}[{b}].T" if transposed else f"{name}[{b}]"


def _matvec_rows(em, prod, lhs, rhs, vector_on_right):
    """Lines for ``prod[b] = lhs[b] @ rhs[b]`` where one side is a vector per batch."""
    (matrix, transposed), (vector, _) = (lhs, rhs) if vector_on_right else (rhs, lhs)
    vec, out = em.fresh("vec"), em.fresh("rows")
    em.emit(f"{vec} = {vector}.reshape(({vector}.shape[0], -1))")
    em.emit(f"{out} = {prod}.reshape(({prod}.shape[0], -1))")
    # both loops read the stored matrix along its rows: matvec(a, x) is a @ x, and
    # vecmat(x, a) is x @ a, which is also a.T @ x for a matrix read through a transpose
    em.emit(f"for bi in range({matrix}.shape[0]):")
    if transposed != vector_on_right:
        em.emit(f"    loops.matvec({matrix}[bi], {vec}[bi], {out}[bi])")
    else:
        em.emit(f"    loops.vecmat({vec}[bi], {matrix}[bi], {out}[bi])")


def _matvec(em, ins, outs, eqn, form):
    if form == "dot":
        em.emit(f"{outs[0]} = loops.dot({ins[0]}, {ins[1]})")
        return
    m, axis = products.matvec_form(eqn)
    matrix, vector = ins[m], ins[1 - m]
    em.allocate(outs[0], eqn.outvars[0], f"({matrix}.shape[{1 - axis}],)")
    if form == "matvec":
        em.emit(f"loops.matvec({matrix}, {vector}, {outs[0]})")
    else:
        em.emit(f"loops.vecmat({vector}, {matrix}, {outs[0]})")


def _blas_dtype(eqn):
    dt = eqn.invars[0].aval.dtype
    return (dtypes.is_inexact(dt) and eqn.params["preferred_element_type"] in (None, dt))


def _cumulative(em, ins, outs, eqn, code):
    """A cumulative op along its axis, ``code`` naming its combiner in ``loops``."""
    axis, rank = eqn.params["axis"], len(eqn.invars[0].aval.shape)
    rows, perm = _rows(em, ins[0], axis, rank)
    result = em.fresh("scan")
    em.emit(f"{result} = loops.cumulative_rows({rows}, loops.{code}, {eqn.params['reverse']})")
    _unrows(em, outs[0], result, f"{ins[0]}.shape", perm)


def _linear_recurrence(em, ins, outs, eqn):
    axis, rank = eqn.params["axis"], len(eqn.invars[1].aval.shape)
    a_rows, perm = _rows(em, ins[0], axis, rank)
    b_rows, _ = _rows(em, ins[1], axis, rank)
    result = em.fresh("rec")
    em.emit(f"{result} = loops.linear_recurrence_rows({a_rows}, {b_rows}, "
            f"{eqn.params['reverse']})")
    _unrows(em, outs[0], result, f"{ins[1]}.shape", perm)


def _argextreme(em, ins, outs, eqn, is_max):
    axis, aval = eqn.params["axis"], eqn.invars[0].aval
    rows, _ = _rows(em, ins[0], axis, len(aval.shape))
    out_aval = eqn.outvars[0].aval
    found = f"loops.argextreme_rows({rows}, {is_max})"
    if out_aval.shape:
        em.emit(f"{outs[0]} = {found}.astype({ctor(out_aval.dtype)})"
                f".reshape({em.shape(out_aval.shape)})")
    else:
        em.emit(f"{outs[0]} = {ctor(out_aval.dtype)}({found}[0])")


def _gather_layout(em, x, aval, axes):
    """``x`` with ``axes`` first, flattened to (prod(axes dims), rest) rows; returns names."""
    rank = len(aval.shape)
    rest = tuple(a for a in range(rank) if a not in axes)
    perm = tuple(axes) + rest
    moved = permuted_copy(em, x, rank, perm)
    lead = " * ".join(f"{x}.shape[{a}]" for a in axes) or "1"
    tail = " * ".join(f"{x}.shape[{a}]" for a in rest) or "1"
    rows = em.fresh("table")
    em.emit(f"{rows} = workspace.contiguous({moved}).reshape(({lead}, {tail}))")
    sizes = em.fresh("sizes")
    em.emit(f"{sizes} = np.array([{', '.join(f'{x}.shape[{a}]' for a in axes)}], np.int64)"
            if axes else f"{sizes} = np.zeros(0, np.int64)")
    return rows, sizes, perm


def _row_numbers(em, idx, idx_aval, sizes):
    k = idx_aval.shape[-1]
    flat_idx = em.fresh("idx")
    em.emit(f"{flat_idx} = workspace.contiguous({idx}).reshape((-1, {k})).astype(np.int64)")
    rows = em.fresh("at")
    em.emit(f"{rows} = loops.flat_rows({flat_idx}, {sizes})")
    return rows


def _gather(em, ins, outs, eqn):
    x, idx = ins
    axes = eqn.params["axes"]
    table, sizes, _ = _gather_layout(em, x, eqn.invars[0].aval, axes)
    rows = _row_numbers(em, idx, eqn.invars[1].aval, sizes)
    em.emit(f"{outs[0]} = loops.gather_rows({table}, {rows})"
            f".reshape({em.shape(eqn.outvars[0].aval.shape)})")


def _scatter(em, ins, outs, eqn, code):
    """A scatter combining updates into the operand by ``loops``' combiner ``code``."""
    x, idx, upd = ins
    axes = eqn.params["axes"]
    aval = eqn.invars[0].aval
    table, sizes, perm = _gather_layout(em, x, aval, axes)
    rows = _row_numbers(em, idx, eqn.invars[1].aval, sizes)
    updates = em.fresh("upd")
    em.emit(f"{updates} = workspace.contiguous({upd}).reshape(({rows}.shape[0], "
            f"{table}.shape[1]))")
    result = em.fresh("scattered")
    # the operand's last use: combine into it rather than into a copy of it
    inplace = em.call.overwrites
    em.emit(f"{result} = loops.scatter_rows({table}, {rows}, {updates}, "
            f"loops.{code}, {inplace})")
    _unrows(em, outs[0], result, f"{x}.shape", perm)


def _window_starts(em, x, starts, sizes):
    begins = []
    for axis, (s, size) in enumerate(zip(starts, sizes)):
        begin = em.fresh("start")
        em.emit(f"{begin} = loops.window_start(np.int64({s}), {em.dim(size)}, {x}.shape[{axis}])")
        begins.append(begin)
    return begins


def _dynamic_slice(em, ins, outs, eqn):
    x, starts = ins[0], ins[1:]
    sizes = eqn.params["slice_sizes"]
    begins = _window_starts(em, x, starts, sizes)
    parts = [f"{b}:{b} + {em.dim(size)}" for b, size in zip(begins, sizes)]
    em.emit(f"{outs[0]} = {x}{_index_text(parts)}")


def _dynamic_update_slice(em, ins, outs, eqn):
    x, upd, starts = ins[0], ins[1], ins[2:]
    begins = _window_starts(em, x, starts, eqn.invars[1].aval.shape)
    em.emit(f"{outs[0]} = {x}.copy()")
    assign_window(em, outs[0], upd, len(begins), begins)


def _sort(em, ins, outs, eqn):
    dim, num_keys = eqn.params["dimension"], eqn.params["num_keys"]
    rank = len(eqn.invars[0].aval.shape)
    rows = [_rows(em, x, dim, rank) for x in ins]
    perm = rows[0][1]
    order, r = em.fresh("order"), em.fresh("r")
    sorted_rows = [em.fresh("sorted") for _ in ins]
    for name, (src, _) in zip(sorted_rows, rows):
        em.emit(f"{name} = np.empty_like({src})")
    em.emit(f"for {r} in range({rows[0][0]}.shape[0]):")
    if num_keys == 1:
        em.emit(f"    {order} = np.argsort({rows[0][0]}[{r}], kind='mergesort')")
    else:
        keys = ", ".join(f"{src}[{r}]" for src, _ in rows[:num_keys])
        em.emit(f"    {order} = loops.sort_order(np.stack(({keys},)))")
    # element by element: a row assigned an array compiles numba's shape-mismatch error
    # formatting, ~3 s the first time in a process
    c = em.fresh("c")
    em.emit(f"    for {c} in range({order}.shape[0]):")
    for name, (src, _) in zip(sorted_rows, rows):
        em.emit(f"        {name}[{r}, {c}] = {src}[{r}, {order}[{c}]]")
    for out, name, x in zip(outs, sorted_rows, ins):
        _unrows(em, out, name, f"{x}.shape", perm)


def _erf_inv(em, ins, outs, eqn):
    """A loop of its own (``loops.erf_inv_into``): fused into a kernel's loop, every value
    would compute all of erf_inv's polynomials."""
    x = eqn.invars[0]
    if not x.aval.shape:
        em.emit(f"{outs[0]} = loops.erf_inv({ins[0]})")
        return
    flat = em.fresh("flat")
    em.emit(f"{flat} = workspace.contiguous({ins[0]}).reshape(-1)")
    em.allocate(outs[0], eqn.outvars[0], em.shape(x.aval.shape))
    em.emit(f"loops.erf_inv_into({flat}, {outs[0]}.reshape(-1))")


def _window_frame(eqn):
    """The arguments of ``loops.patches_into`` and ``patches_transpose_into`` after the
    two arrays: window, strides, low padding and dilations as 2-D (a 1-D window is a 2-D
    one of height 1, its arrays given a unit axis by the caller)."""
    p = eqn.params
    lead = (1,) * (2 - len(p["window"]))
    frame = [lead + tuple(p[k]) for k in ("window", "strides")]
    frame.append((0,) * len(lead) + tuple(lo for lo, _ in p["padding"]))
    frame += [lead + tuple(p[k]) for k in ("lhs_dilation", "rhs_dilation")]
    return ", ".join(str(t) for t in frame)


def _unit_axis(name, one_spatial):
    """``name`` with a unit spatial axis after the batch axis when the window is 1-D."""
    return f"{name}[:, np.newaxis]" if one_spatial else name


def _patches(em, ins, outs, eqn):
    out = eqn.outvars[0]
    em.allocate(outs[0], out, em.shape(out.aval.shape))
    one = len(eqn.params["window"]) == 1
    fill = literal(eqn.params["fill"], out.aval.dtype)
    em.emit(f"loops.{_window_loop(em, eqn, 'patches')}({_unit_axis(ins[0], one)}, "
            f"{_unit_axis(outs[0], one)}, {_window_frame(eqn)}, {fill})")


def _patches_transpose(em, ins, outs, eqn):
    out = eqn.outvars[0]
    em.allocate(outs[0], out, em.shape(out.aval.shape))
    one = len(eqn.params["window"]) == 1
    em.emit(f"loops.{_window_loop(em, eqn, 'patches_transpose')}("
            f"{_unit_axis(ins[0], one)}, {_unit_axis(outs[0], one)}, {_window_frame(eqn)})")


def _window_loop(em, eqn, name):
    """The loop of a window step: ``<name>_by_examples`` when the schedule shares it out
    among threads (``_decide_window``), else ``<name>_into``."""
    return f"{name}_by_examples" if em.call.threaded else f"{name}_into"


def _decide_window(eqn, context, blas=None):
    """A window step runs across threads in a parallel variant when it is large."""
    shape = eqn.outvars[0].aval.shape
    large = all(type(d) is int for d in shape) and math.prod(shape) >= PARALLEL_MIN_ELEMENTS
    return Call(eqn, threaded=large and context.threads, blas=blas)


def _product_patches_transpose(em, ins, outs, eqn):
    """One ``loops`` call on the cotangent as C-ordered (N, out..., F) and the kernel as
    the (F, K * C) matrix BLAS reads through a transpose."""
    g, w = ins
    out = eqn.outvars[0]
    em.allocate(outs[0], out, em.shape(out.aval.shape))
    one = len(eqn.params["window"]) == 1
    rows, kernel = em.fresh("cot"), em.fresh("kernel")
    em.emit(f"{rows} = workspace.contiguous({g})")
    em.emit(f"{kernel} = workspace.contiguous({w}).reshape(({w}.shape[0] * {w}.shape[1], "
            f"{w}.shape[2])).T")
    loop = _window_loop(em, eqn, "product_patches_transpose")
    em.emit(f"loops.{loop}({_unit_axis(rows, one)}, {kernel}, {_unit_axis(outs[0], one)}, "
            f"{_window_frame(eqn)})")


def _plane_window(eqn):
    """The loops take one or two spatial dims; other windows run the NumPy impl."""
    return len(eqn.params["window"]) in (1, 2)


def _sort_supported(eqn):
    avals = [v.aval for v in eqn.invars]
    if any(dtypes.is_complex(a.dtype) for a in avals):
        return False
    keys = avals[:eqn.params["num_keys"]]
    return len({a.dtype for a in keys}) == 1


def _pads_in_place(eqn):
    """A pad with no negative widths is written into an array of its own (``_pad_into``)."""
    return all(lo >= 0 and hi >= 0 for lo, hi, _ in eqn.params["padding_config"])


def _fills(eqn):
    """A reshape of a scalar fills an array of its own."""
    return not eqn.invars[0].aval.shape


def _real_operand(eqn):
    return not dtypes.is_complex(eqn.invars[0].aval.dtype)


for _prim, _lowering in (
        (layout.reshape_p, Library(_reshape, allocates=_fills, holds_elements=_reshape_holds)),
        (layout.transpose_p, Library(_transpose)),
        (layout.rev_p, Library(_rev, holds_elements=_all_held)),
        (layout.slice_p, Library(_slice, holds_elements=_tiny_part_holds)),
        (layout.pad_p, Library(_pad, allocates=_pads_in_place, holds_elements=_pad_holds)),
        (layout.concatenate_p, Library(_concatenate, allocates=lambda eqn: True,
                                       holds_elements=_all_held)),
        (layout.dim_size_p, Library(_dim_size)),
        (contraction.dot_general_p, Library(_dot_general, supports=_blas_dtype,
                                            writes_fresh=True, decide=products.decide,
                                            index_map=contraction.OUTER_PRODUCT)),
        (reductions.argmax_p, Library(partial(_argextreme, is_max=True), supports=_real_operand)),
        (reductions.argmin_p, Library(partial(_argextreme, is_max=False), supports=_real_operand)),
        (reductions.cumsum_p, Library(partial(_cumulative, code="CUMSUM"))),
        (reductions.cumprod_p, Library(partial(_cumulative, code="CUMPROD"))),
        (reductions.cummax_p, Library(partial(_cumulative, code="CUMMAX"))),
        (reductions.cummin_p, Library(partial(_cumulative, code="CUMMIN"))),
        (reductions.linear_recurrence_p, Library(_linear_recurrence)),
        (indexing.gather_p, Library(_gather)),
        (indexing.scatter_add_p, Library(partial(_scatter, code="SCATTER_ADD"),
                                         reuses_operand=True)),
        (indexing.scatter_p, Library(partial(_scatter, code="SCATTER_SET"),
                                         reuses_operand=True)),
        (indexing.scatter_mul_p, Library(partial(_scatter, code="SCATTER_MUL"),
                                         reuses_operand=True)),
        (indexing.dynamic_slice_p, Library(_dynamic_slice)),
        (indexing.dynamic_update_slice_p, Library(_dynamic_update_slice)),
        (sorting.sort_p, Library(_sort, supports=_sort_supported)),
        (special.erf_inv_p, Library(_erf_inv, writes_fresh=True)),
        (windows.patches_p, Library(_patches, supports=_plane_window, writes_fresh=True,
                                    decide=_decide_window)),
        (windows.patches_transpose_p, Library(_patches_transpose, supports=_plane_window,
                                              writes_fresh=True, decide=_decide_window)),
        (windows.product_patches_transpose_p, Library(
            _product_patches_transpose, supports=_plane_window, writes_fresh=True,
            decide=partial(_decide_window, blas=products.WINDOW_PRODUCT_BLAS)))):
    register("lower", _prim, _lowering)
