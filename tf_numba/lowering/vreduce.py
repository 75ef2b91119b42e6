"""Row reductions for generated kernels that vectorize.

A sum carried through a loop (``acc = acc + x``) is one dependent chain of additions that
LLVM may not reorder without fastmath: one add per 3-4 cycles, 4-5x slower than NumPy.
``pairwise_sum`` is NumPy's own algorithm (8 interleaved partial sums in blocks of at most
128 elements, blocks combined by halving), so a row sums to the same bits as ``np.sum``
of a row. Each leaf's 8 partial sums are one <8 x T> vector add per 8 elements, written
in LLVM IR (``_leaf_sums``), and the two or four leaves under one node are summed side
by side, so their chains of dependent adds overlap: 128 rows of 1000 float32 went from
19 to 11 us (np.sum(axis=1): 22 us). ``row_max``/``row_min`` keep 8 running extremes and
a NaN flag (NaN propagates, as in ``np.max``); those 8 lanes become one vector operation
through LLVM's SLP vectorizer, which numba leaves off: ``kernel_cache`` turns it on while
it compiles a kernel (it changes no result, only the instructions).

The recursion of NumPy's pairwise sum is written with an explicit stack (numba cannot
cache self-recursive functions) held in a scratch array the kernel allocates once
(``scratch(dtype)``), not per row.

Changing anything here changes what cached kernels compute: bump
``kernel_cache.FORMAT_VERSION`` with it.
"""
import numpy as np
from llvmlite import ir
from numba import carray
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

from .deferred import DeferredJit

_deferred = DeferredJit(made=lambda: _register_native_helpers())
_jit = _deferred(cache=True, error_model="numpy", nogil=True)

_BLOCK = 128        # NumPy's PW_BLOCKSIZE
_DEPTH = 64         # halving 2**63 elements down to one block takes < 64 levels


def scratch_source(dtype_ctor):
    """Source of the scratch arrays ``pairwise_sum`` needs, allocated once per kernel
    (through ``workspace.empty``, as a kernel's other arrays, not numba's ``np.empty``)."""
    return (f"(workspace.empty((3, {_DEPTH}), np.int64), "
            f"workspace.empty(({_DEPTH},), {dtype_ctor}))")


_LANES = [ir.Constant(ir.IntType(32), j) for j in range(8)]


def _vector_load(context, builder, ary_type, ary, at):
    """The 8 elements ``a[at:at + 8]`` of a unit-stride array as one <8 x T> load."""
    data = context.make_array(ary_type)(context, builder, ary).data
    elem = context.get_value_type(ary_type.dtype)
    pointer = builder.bitcast(builder.gep(data, [at]), ir.VectorType(elem, 8).as_pointer())
    return builder.load(pointer, align=context.get_abi_sizeof(elem))


def _group_to_vector(builder, group, vec_type):
    """A numba 8-tuple as an <8 x T> vector."""
    vec = ir.Constant(vec_type, ir.Undefined)
    for j in range(8):
        vec = builder.insert_element(vec, builder.extract_value(group, j), _LANES[j])
    return vec


def _vector_to_group(builder, vec, group_type):
    """An <8 x T> vector as a numba 8-tuple of LLVM type ``group_type``."""
    group = ir.Constant(group_type, ir.Undefined)
    for j in range(8):
        group = builder.insert_value(group, builder.extract_element(vec, _LANES[j]), j)
    return group


@intrinsic
def _leaf_sums(typingctx, a, starts, groups):
    """For each chain c, NumPy's 8 partial sums of the leaf of ``groups[c]`` (>= 1) full
    groups of 8 elements from ``starts[c]``: ``r[j] = a[s + j] + a[s + 8 + j] + ...`` in
    that order. Each chain is one <8 x T> vector add per group, in LLVM IR because
    numba's SLP pass turned the 8 scalar sums into shuffles and spills (a 128-element
    leaf took 24 ns); the chains run side by side while they all have groups left, so
    several leaves summed together overlap their add latencies. ``a`` must be
    unit-stride (``pairwise_sum`` checks)."""
    chains = starts.count
    group_type = types.UniTuple(a.dtype, 8)

    def codegen(context, builder, signature, args):
        ary_type, (ary, starts_v, groups_v) = signature.args[0], args
        add = builder.fadd if isinstance(ary_type.dtype, types.Float) else builder.add
        bases = [builder.extract_value(starts_v, c) for c in range(chains)]
        ends = [builder.extract_value(groups_v, c) for c in range(chains)]
        index_type, one = bases[0].type, ir.Constant(bases[0].type, 1)
        eight = ir.Constant(index_type, 8)

        def add_group(c, k):
            x = _vector_load(context, builder, ary_type, ary,
                             builder.add(bases[c], builder.mul(k, eight)))
            builder.store(add(builder.load(sums[c]), x), sums[c])

        sums = [cgutils.alloca_once_value(
            builder, _vector_load(context, builder, ary_type, ary, base)) for base in bases]
        common = ends[0]
        for end in ends[1:]:
            common = builder.select(builder.icmp_signed("<", end, common), end, common)
        with cgutils.for_range_slice(builder, one, common, one) as (k, _):
            for c in range(chains):
                add_group(c, k)
        for c in range(chains):
            with cgutils.for_range_slice(builder, common, ends[c], one) as (k, _):
                add_group(c, k)
        out = ir.Constant(context.get_value_type(signature.return_type), ir.Undefined)
        group_llvm = context.get_value_type(group_type)
        for c in range(chains):
            out = builder.insert_value(
                out, _vector_to_group(builder, builder.load(sums[c]), group_llvm), c)
        return out
    return types.UniTuple(group_type, chains)(a, starts, groups), codegen


@_jit
def _leaf_total(r, a, lo, n):
    """NumPy's end of a leaf of ``n >= 8`` elements: the 8 partial sums in pairs, then
    the elements past the last full group of 8, one by one."""
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for i in range(lo + n - n % 8, lo + n):
        res += a[i]
    return res


@_jit
def _block(a, lo, n):
    """NumPy's leaf: sequential below 8 elements, else 8 partial sums combined in pairs."""
    if n < 8:
        return _sequential_sum(a, lo, n)
    return _leaf_total(_leaf_sums(a, (lo,), (n // 8,))[0], a, lo, n)


@_jit
def _sequential_sum(a, lo, n):
    """``a[lo:lo + n]`` summed one by one from zero, as NumPy sums fewer than 8."""
    res = a.dtype.type(0)
    for i in range(lo, lo + n):
        res += a[i]
    return res


@_jit
def _block_pair(a, lo, n, h):
    """The two leaves of a node (``a[lo:lo+h]`` and ``a[lo+h:lo+n]``, each 8..128 long),
    summed as two chains side by side; the same additions as two ``_block`` calls."""
    starts, lens = (lo, lo + h), (h, n - h)
    r, s = _leaf_sums(a, starts, (lens[0] // 8, lens[1] // 8))
    return _leaf_total(r, a, starts[0], lens[0]) + _leaf_total(s, a, starts[1], lens[1])


@_jit
def _block_quad(a, lo, n, h):
    """A node whose two children (``h`` and ``n - h`` long) are each two leaves: the
    four leaves as four chains side by side, combined as NumPy combines them."""
    h2 = _half(n - h)
    lens = (_half(h), h - _half(h), h2, n - h - h2)
    starts = (lo, lo + lens[0], lo + h, lo + h + h2)
    r0, r1, r2, r3 = _leaf_sums(a, starts, (lens[0] // 8, lens[1] // 8, lens[2] // 8,
                                            lens[3] // 8))
    return ((_leaf_total(r0, a, starts[0], lens[0]) + _leaf_total(r1, a, starts[1], lens[1]))
            + (_leaf_total(r2, a, starts[2], lens[2])
               + _leaf_total(r3, a, starts[3], lens[3])))


@_jit
def _half(n):
    h = n // 2
    return h - h % 8


@_jit
def pairwise_sum(a, scratch):
    """Sum of the 1-D array ``a`` in NumPy's pairwise order; ``scratch`` from
    ``scratch_source``. A float sum runs in a C function made once per install
    (``register_native``), called through its symbol: as a numba callee, the sum's ~2000
    instructions were linked into every kernel that sums and optimized there again, ~0.3 s
    of each such kernel's compile. A row shorter than one group of 8 is summed here, one
    by one as NumPy does: a C call costs ~30 ns, and softmax rows of 5 were 768 calls of
    an MLP step."""
    n = a.shape[0]
    if n < 8:
        return _sequential_sum(a, 0, n)
    if a.strides[0] != a.itemsize:
        return _pairwise_strided(a, scratch)
    return _native_pairwise(a, scratch)


@_jit
def _pairwise_strided(a, scratch):
    """The vector loads read consecutive elements: sum a unit-stride copy. (Apart from
    ``pairwise_sum``: an allocation there made every call ~30 ns slower.)"""
    return _native_pairwise(a.copy(), scratch)


@_jit
def _pairwise_unit(a, scratch):
    """``pairwise_sum`` of a unit-stride ``a`` (or one of at most one element)."""
    n = a.shape[0]
    if n <= _BLOCK:
        return a.dtype.type(0) + _block(a, 0, n)
    return _pairwise_tree(a, scratch)


@_jit
def _pairwise_tree(a, scratch):
    """``pairwise_sum`` of a unit-stride array longer than one leaf."""
    n = a.shape[0]
    zero = a.dtype.type(0)
    frames, left = scratch
    # frames[0] = start, frames[1] = length, frames[2] = children done (0, 1)
    depth = 0
    frames[0, 0], frames[1, 0], frames[2, 0] = 0, n, 0
    while True:
        lo, m = frames[0, depth], frames[1, depth]
        h = _half(m)
        if m <= _BLOCK:
            value = _block(a, lo, m)
        elif m - h <= _BLOCK:                # two leaves (the right child is the longer)
            value = _block_pair(a, lo, m, h)
        elif h > _BLOCK and m - h - _half(m - h) <= _BLOCK:    # two nodes of two leaves
            value = _block_quad(a, lo, m, h)
        else:                                # deeper: descend into the left half
            depth += 1
            frames[0, depth], frames[1, depth], frames[2, depth] = lo, h, 0
            continue
        while True:                          # hand the value up until a right half opens
            if depth == 0:
                return zero + value
            depth -= 1
            if frames[2, depth] == 0:
                left[depth] = value
                frames[2, depth] = 1
                lo, m = frames[0, depth], frames[1, depth]
                h = _half(m)
                depth += 1
                frames[0, depth], frames[1, depth], frames[2, depth] = lo + h, m - h, 0
                break
            value = left[depth] + value


def _extreme_groups(greater):
    """An intrinsic ``(a, groups, init) -> (8 extremes, nan)``: over the first
    ``32 * groups`` elements of unit-stride ``a``, four chains of 8 lanes keep
    ``x if x > acc else acc`` (``<`` for min; equal values keep the earlier one, NaN
    never replaces), folded into ``init``'s 8 lanes in chain order; ``nan`` says whether
    any element was NaN. Four chains because one chain of compare-selects waits on each
    step's latency."""
    predicate = ">" if greater else "<"

    @intrinsic
    def extreme_groups(typingctx, a, groups, init):
        def codegen(context, builder, signature, args):
            ary_type, (ary, count, init_v) = signature.args[0], args
            vec_t = ir.VectorType(context.get_value_type(ary_type.dtype), 8)
            mask_t = ir.VectorType(ir.IntType(1), 8)
            start = _group_to_vector(builder, init_v, vec_t)
            accs = [cgutils.alloca_once_value(builder, start) for _ in range(4)]
            nans = cgutils.alloca_once_value(builder, ir.Constant(mask_t, None))
            zero = ir.Constant(count.type, 0)
            with cgutils.for_range_slice(builder, zero, count, ir.Constant(count.type, 1)) \
                    as (k, _):
                first = builder.mul(k, ir.Constant(count.type, 32))
                for c in range(4):
                    x = _vector_load(context, builder, ary_type, ary,
                                     builder.add(first, ir.Constant(k.type, 8 * c)))
                    acc = builder.load(accs[c])
                    builder.store(builder.select(builder.fcmp_ordered(predicate, x, acc), x,
                                                 acc), accs[c])
                    builder.store(builder.or_(builder.load(nans),
                                              builder.fcmp_unordered("uno", x, x)), nans)
            acc = builder.load(accs[0])
            for c in range(1, 4):
                x = builder.load(accs[c])
                acc = builder.select(builder.fcmp_ordered(predicate, x, acc), x, acc)
            out = _vector_to_group(builder, acc, context.get_value_type(signature.args[2]))
            any_nan = builder.icmp_unsigned("!=", builder.bitcast(builder.load(nans),
                                                                  ir.IntType(8)),
                                            ir.Constant(ir.IntType(8), 0))
            pair = context.get_value_type(signature.return_type)
            result = ir.Constant(pair, ir.Undefined)
            result = builder.insert_value(result, out, 0)
            return builder.insert_value(result, any_nan, 1)
        return types.Tuple((init, types.boolean))(a, groups, init), codegen
    return extreme_groups


_max_groups, _min_groups = _extreme_groups(True), _extreme_groups(False)


@_jit
def _pick(x, acc, is_max):
    return x if (x > acc if is_max else x < acc) else acc


@_jit
def row_extreme(a, init, is_max):
    """max (``is_max``) or min of ``init`` and the float 1-D array ``a``; a NaN anywhere
    makes the result NaN, as ``np.max``. Rows of 8 or more run in a C function called by
    its symbol (as ``pairwise_sum``, and for the same reason); shorter ones here."""
    if a.shape[0] < 8:
        return _sequential_extreme(a, 0, init, False, is_max)
    if a.strides[0] != a.itemsize:
        return _extreme_strided(a, init, is_max)
    return _native_extreme(a, init, is_max)


@_jit
def _extreme_strided(a, init, is_max):
    return _native_extreme(a.copy(), init, is_max)


@_jit
def _row_extreme_unit(a, init, is_max):
    """``row_extreme`` of a unit-stride ``a``."""
    n = a.shape[0]
    acc = init
    nan = False
    if n >= 8:
        one, two, three, four = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
        five, six, seven = np.uint64(5), np.uint64(6), np.uint64(7)
        p0, p1, p2, p3, p4, p5, p6, p7 = acc, acc, acc, acc, acc, acc, acc, acc
        vector_groups = n // 32 if a.strides[0] == a.itemsize else 0
        if vector_groups:
            p = (acc, acc, acc, acc, acc, acc, acc, acc)
            p, nan = (_max_groups(a, vector_groups, p) if is_max
                      else _min_groups(a, vector_groups, p))
            p0, p1, p2, p3, p4, p5, p6, p7 = p
        for k in range(4 * vector_groups, n // 8):
            i = np.uint64(8 * k)
            x0, x1, x2, x3 = a[i], a[i + one], a[i + two], a[i + three]
            x4, x5, x6, x7 = a[i + four], a[i + five], a[i + six], a[i + seven]
            p0, p1 = _pick(x0, p0, is_max), _pick(x1, p1, is_max)
            p2, p3 = _pick(x2, p2, is_max), _pick(x3, p3, is_max)
            p4, p5 = _pick(x4, p4, is_max), _pick(x5, p5, is_max)
            p6, p7 = _pick(x6, p6, is_max), _pick(x7, p7, is_max)
            nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3)
            nan |= (x4 != x4) | (x5 != x5) | (x6 != x6) | (x7 != x7)
        for p in (p1, p2, p3, p4, p5, p6, p7):
            p0 = _pick(p, p0, is_max)
        acc = p0
    return _sequential_extreme(a, n - n % 8, acc, nan, is_max)


@_jit
def _sequential_extreme(a, lo, acc, nan, is_max):
    """``acc`` taken over ``a[lo:]`` one by one (``nan``: a NaN was met before), then NaN
    if any was."""
    for i in range(lo, a.shape[0]):
        x = a[i]
        acc = _pick(x, acc, is_max)
        nan |= x != x
    return acc * np.nan if nan else acc


# ---------------------------------------------------------------- the sum as a C function

def _sum_signature(t):
    return t(types.CPointer(t), types.int64, types.CPointer(types.int64), types.CPointer(t))


def _extreme_signature(t):
    return t(types.CPointer(t), types.int64, t, types.int64)


# (helper, dtype name) -> the symbol kernels call, its C result type, the function it runs
# (a numba cfunc of it) and that function's signature for the dtype
_NATIVE = {
    ("sum", "float64"): ("tf_numba_pairwise_sum_f64", "double", "_c_sum",
                         _sum_signature),
    ("sum", "float32"): ("tf_numba_pairwise_sum_f32", "float", "_c_sum",
                         _sum_signature),
    ("extreme", "float64"): ("tf_numba_row_extreme_f64", "double", "_c_extreme",
                             _extreme_signature),
    ("extreme", "float32"): ("tf_numba_row_extreme_f32", "float", "_c_extreme",
                             _extreme_signature),
}


def register_native():
    """Register the symbols of ``_NATIVE`` (once per process): before anything that calls
    them is compiled or loaded, LLVM must resolve them (a kernel loaded from numba's disk
    cache included: ``kernel_cache.load_module`` calls this). Reading a helper of this
    module makes the helpers, which registers them."""
    from . import vreduce
    vreduce.pairwise_sum        # noqa: B018  (makes the helpers: _register_native_helpers)


def _register_native_helpers():
    """Make (or load from numba's cache) the C functions of ``_NATIVE`` and register their
    symbols; runs when this module's helpers are made, which they call."""
    import numba
    from numba import cfunc
    from . import native
    was = numba.core.config.SLP_VECTORIZE
    numba.core.config.SLP_VECTORIZE = 1      # the row helpers' lanes (see the docstring)
    try:
        for (_, dtype), (symbol, _, function, signature) in _NATIVE.items():
            made = cfunc(signature(numba.from_dtype(np.dtype(dtype))), cache=True,
                         error_model="numpy", nogil=True)(globals()[function])
            native.register(symbol, made.ctypes)
            _CFUNCS.append(made)             # (kept alive: its machine code is called)
    finally:
        numba.core.config.SLP_VECTORIZE = was


_CFUNCS = []


def _c_sum(data, n, frames, left):
    return _pairwise_unit(carray(data, (n,)), (carray(frames, (3, _DEPTH)),
                                               carray(left, (_DEPTH,))))


def _c_extreme(data, n, init, is_max):
    return _row_extreme_unit(carray(data, (n,)), init, is_max != 0)


def _native_pairwise(a, scratch):
    """``_pairwise_unit(a, scratch)``: through the C function for float32 and float64,
    as a numba callee otherwise (integer sums are exact in any order)."""


@overload(_native_pairwise)
def _native_pairwise_for(a, scratch):
    entry = _NATIVE.get(("sum", str(a.dtype)))
    if entry is None:
        return lambda a, scratch: _pairwise_unit(a, scratch)
    call = _native_call(entry[0], entry[1], ("pointer", "int64", "pointer", "pointer"))
    return lambda a, scratch: call(a.ctypes.data, a.shape[0], scratch[0].ctypes.data,
                                   scratch[1].ctypes.data)


def _native_extreme(a, init, is_max):
    """``_row_extreme_unit(a, init, is_max)`` through its C function (floats only)."""


@overload(_native_extreme)
def _native_extreme_for(a, init, is_max):
    symbol, result, _, _ = _NATIVE[("extreme", str(a.dtype))]
    call = _native_call(symbol, result, ("pointer", "int64", result, "int64"))
    return lambda a, init, is_max: call(a.ctypes.data, a.shape[0], init, 1 if is_max else 0)


_CALLS = {}


def _native_call(symbol, result, arguments):
    """The intrinsic calling ``symbol`` (one per symbol: numba caches by the object)."""
    if symbol not in _CALLS:
        from .native import calling
        _CALLS[symbol] = calling(symbol, result, arguments)
    return _CALLS[symbol]


_deferred.finish(globals())
