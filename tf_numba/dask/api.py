"""``map_blocks``, ``vmap`` and data-parallel ``value_and_grad`` over Dask arrays.

Each call traces the user's function on block avals (``blocks.BlockPrograms``), checks
every block's shapes against the program there, and builds a Dask graph whose tasks carry
the program (``worker.ShippedProgram``), not the Python function. Arguments that are not
Dask arrays, and arrays the function closes over, ride inside every task when they are
small (``INLINE_BYTES``), else are one graph key each (sent to a worker once, not pickled
into every task); ``value_and_grad`` scatters large ones to every worker of a
``distributed`` client instead.
"""
import functools
import operator
import uuid
import weakref

import numpy as np

from .. import api
from ..core import pytree
from ..errors import ArgumentError, ShapeError, UnsupportedError
from .blocks import BlockPrograms, Grid, is_dask_array
from .worker import add_parts, run_block, run_block_single, run_block_weighted


class BlockRun:
    """A task's callable: one shipped program, the block it runs on (for errors) and,
    for a gradient's share of a mean, its weight."""
    __slots__ = ("shipped", "block", "weight", "single")

    def __init__(self, shipped, block, weight=None, single=False):
        self.shipped, self.block, self.weight, self.single = shipped, block, weight, single

    def __call__(self, *inputs):
        if self.weight is not None:
            return run_block_weighted(self.shipped, self.block, self.weight, *inputs)
        if self.single:
            return run_block_single(self.shipped, self.block, *inputs)
        return run_block(self.shipped, self.block, *inputs)

    def __reduce__(self):
        return BlockRun, (self.shipped, self.block, self.weight, self.single)


class BlockRuns:
    """Several blocks' runs as one task: each ``BlockRun`` on its slice of the inputs,
    their outputs in a list, in order."""
    __slots__ = ("runs", "arities")

    def __init__(self, runs, arities):
        self.runs, self.arities = tuple(runs), tuple(arities)

    def __call__(self, *inputs):
        outs, at = [], 0
        for run, n in zip(self.runs, self.arities):
            outs.append(run(*inputs[at:at + n]))
            at += n
        return outs

    def __reduce__(self):
        return BlockRuns, (self.runs, self.arities)


INLINE_BYTES = 16 << 10      # a call's whole values up to this size ride in every task


class _Inputs:
    """How the values passed whole to every block reach the tasks. Up to
    ``INLINE_BYTES`` in all (a model's parameters), inside every task: a task then waits
    for no other key. As a graph key, a worker's first block waited until the key's task
    had run on some worker and was fetched from there; as a scatter, for a round trip
    to the scheduler and the workers before the graph left (both ~10-15 ms here, 3-5% of
    a value_and_grad of 2e6 x 64 rows on 2 workers). Larger values: with a
    ``distributed`` client (``value_and_grad``), one ``scatter`` to every worker; else
    one literal key of the graph each, sent to a worker once, not pickled into every
    task."""

    def __init__(self, graph, token, values, client=None):
        unique = list({id(v): v for v in values}.values())
        if sum(np.asarray(v).nbytes for v in unique) <= INLINE_BYTES:
            refs = unique
        elif client is not None:
            # hash=False: a fresh key each call; a content-hashed key can name data that
            # the previous call's futures are releasing right now ("could not find data")
            refs = client.scatter(unique, broadcast=True, hash=False)
        else:
            refs = [(f"tfn-input-{token}", k) for k in range(len(unique))]
            graph.update(zip(refs, unique))
        self._refs = {id(v): r for v, r in zip(unique, refs)}
        self._keep = unique        # the ids above stay valid while the graph is built

    def ref(self, value):
        return self._refs[id(value)]


def _as_input(leaf):
    """A leaf passed whole, as the array the program's input takes."""
    aval = api._aval(api._as_array(leaf))
    return np.asarray(leaf, aval.dtype)


def _split_leaves(leaves):
    """(Dask arrays, per leaf the index of its Dask array or None)."""
    arrays, index = [], []
    for leaf in leaves:
        if is_dask_array(leaf):
            index.append(len(arrays))
            arrays.append(leaf)
        else:
            index.append(None)
    return arrays, index


def _tasks(programs, grid, leaves, dask_leaves, graph, token, weights=None, single=False,
           client=None, cells=None):
    """{cell: task} for every block (or those of ``cells``): the shipped program on its
    block keys and inputs."""
    passed = {i: _as_input(leaf) for i, (leaf, j) in enumerate(zip(leaves, dask_leaves))
              if j is None}
    classes = {cell: programs.for_cell(cell)[0]
               for cell in (grid.cells() if cells is None else cells)}
    consts = [c for cls in classes.values() for c in cls.consts]
    inputs = _Inputs(graph, token, list(passed.values()) + consts, client)
    tasks = {}
    for cell, cls in classes.items():
        args = [grid.block_key(j, cell) if j is not None else inputs.ref(passed[i])
                for i, j in enumerate(dask_leaves)]
        args += [inputs.ref(c) for c in cls.consts]
        weight = None if weights is None else weights[cell]
        tasks[cell] = (BlockRun(cls.shipped, grid.label(cell), weight, single), *args)
    return tasks


def _output_chunks(grid, programs, k):
    """The chunks of output ``k``: along the grid's axes from the blocks' output shapes,
    then one chunk per extra trailing axis. ShapeError if the blocks do not form a grid."""
    shapes = {cell: programs.for_cell(cell)[1][k] for cell in grid.cells()}
    first = shapes[(0,) * grid.ndim]
    if len(first) < grid.ndim:
        raise UnsupportedError(
            f"output {k} of a block has rank {len(first)} (shape {first}), the blocks have "
            f"rank {grid.ndim}: a blockwise output keeps the rank of the blocks (reduce "
            "with keepdims=True, or combine the blocks with Dask afterwards)")
    chunks = [tuple(shapes[tuple(i if a == axis else 0 for a in range(grid.ndim))][axis]
                    for i in range(grid.numblocks[axis])) for axis in range(grid.ndim)]
    chunks += [(d,) for d in first[grid.ndim:]]
    for cell, shape in shapes.items():
        expected = tuple(chunks[a][cell[a]] if a < grid.ndim else chunks[a][0]
                         for a in range(len(chunks)))
        if tuple(shape) != expected:
            raise ShapeError(
                f"output {k} of {grid.label(cell)} has shape {tuple(shape)}, but the blocks "
                f"beside it need {expected} there to form a grid", op="tf_numba.dask")
    return tuple(chunks)


def _arrays(prefix, fn, leaves, in_tree, grid, traces):
    """The Dask arrays (in ``fn``'s output structure) of ``fn`` applied to every block."""
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
    _, dask_leaves = _split_leaves(leaves)
    programs = BlockPrograms(fn, leaves, in_tree, dask_leaves, grid, traces)
    cells = grid.cells()
    for cell in cells:
        programs.for_cell(cell)         # every trace and guard check before the graph
    n_out = programs.out_tree.num_leaves
    chunks = [_output_chunks(grid, programs, k) for k in range(n_out)]
    fingerprints = sorted({programs.for_cell(c)[0].shipped.fingerprint for c in cells})
    token = tokenize(prefix, [a.name for a in grid.arrays], fingerprints,
                     [leaf for leaf, j in zip(leaves, dask_leaves) if j is None])
    graph = {}
    tasks = _tasks(programs, grid, leaves, dask_leaves, graph, token, single=n_out == 1)
    names = [f"{prefix}-{k}-{token}" for k in range(n_out)]
    avals = programs.for_cell(cells[0])[0].out_avals
    for cell, task in tasks.items():
        if n_out == 1:
            graph[(names[0],) + cell + (0,) * (len(chunks[0]) - grid.ndim)] = task
            continue
        graph[(f"{prefix}-{token}",) + cell] = task
        for k in range(n_out):
            pad = (0,) * (len(chunks[k]) - grid.ndim)
            graph[(names[k],) + cell + pad] = (operator.getitem, (f"{prefix}-{token}",) + cell,
                                               k)
    outs = []
    for k in range(n_out):
        layer = HighLevelGraph.from_collections(names[k], graph, dependencies=grid.arrays)
        outs.append(da.Array(layer, names[k], chunks[k],
                             meta=np.empty((0,) * len(chunks[k]), avals[k].dtype)))
    return pytree.unflatten(programs.out_tree, outs)


# ---------------------------------------------------------------- the public functions

def map_blocks(f, *args, **kwargs):
    """``f`` applied to every block of the Dask arrays among ``args``: a Dask array (or
    the pytree of them that ``f`` returns).

    Blocks line up as in ``dask.array.map_blocks`` (chunks unified, size-1 axes broadcast);
    other arguments are passed whole to every block. The output chunks come from tracing
    ``f`` on the blocks' shapes, once for all blocks when their leading length can stay
    symbolic, else once per shape class; a block whose shapes break the program raises
    the ShapeError that preparing the program for it would, naming the block, here.

    >>> x = dask.array.ones((10, 3), chunks=(4, 3))
    >>> tf.dask.map_blocks(lambda b, w: tnp.tanh(b * w), x, np.arange(3.0)).compute()
    """
    args = _positional(f, args, kwargs, "map_blocks")
    leaves, in_tree = pytree.flatten(args)
    arrays, _ = _split_leaves(leaves)
    try:
        traces = _MAP_BLOCKS_TRACES.setdefault(f, {})
    except TypeError:           # not weakly referenceable: trace every call
        traces = {}
    return _arrays("tfn-map-blocks", f, leaves, in_tree, Grid(arrays, rows_only=False),
                   traces)


_MAP_BLOCKS_TRACES = weakref.WeakKeyDictionary()    # f -> its traces (blocks.BlockPrograms)


def _positional(fn, args, kwargs, what):
    """``args`` with the arguments given by keyword put in their places (``in_axes`` and
    ``data_argnums`` count positions, as the blocks' tasks pass them)."""
    if not kwargs:
        return args
    import inspect
    name = getattr(fn, "__name__", fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):     # no signature to read (some C callables)
        raise ArgumentError(f"cannot tell where the keyword arguments {sorted(kwargs)} go in "
                            f"{name!r}: pass them by position",
                            op=f"tf_numba.dask.{what}") from None
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as err:
        raise ArgumentError(f"{name!r}: {err}", op=f"tf_numba.dask.{what}") from None
    given, parameters = bound.arguments, list(signature.parameters.values())
    positional = [q for q in parameters
                  if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    last = max((i for i, q in enumerate(positional) if q.name in given), default=-1)
    # one left out before the last one given takes its default (bind checked the others)
    args = tuple(given[q.name] if q.name in given else q.default
                 for q in positional[:last + 1])
    args += tuple(v for q in parameters if q.kind == q.VAR_POSITIONAL
                  for v in given.get(q.name, ()))
    rest = [q.name for q in parameters if q.kind == q.KEYWORD_ONLY and q.name in given]
    rest += [k for q in parameters if q.kind == q.VAR_KEYWORD for k in given.get(q.name, {})]
    if rest:
        raise UnsupportedError(
            f"passes arguments to {name!r} by position, and {sorted(rest)} are keyword-only "
            "there: bind them first (functools.partial) or make them positional",
            op=f"tf_numba.dask.{what}")
    return args


def _per_arg(spec, args, what):
    if isinstance(spec, (tuple, list)):
        if len(spec) != len(args):
            raise ArgumentError(f"tf_numba.dask {what} has {len(spec)} entries but the "
                               f"function was called with {len(args)} positional arguments")
        return tuple(spec)
    return (spec,) * len(args)


def _rows_args(args, mapped, what):
    """``args`` with the leaves of the mapped arguments as Dask arrays (NumPy ones chunked
    like the first Dask array); the others checked not to be Dask arrays."""
    import dask.array as da
    leaves = [pytree.flatten(a)[0] for a in args]
    first = next((x for m, ls in zip(mapped, leaves) if m for x in ls if is_dask_array(x)),
                 None)
    if first is None:
        raise UnsupportedError("needs a Dask array among the arguments it maps over",
                               op=f"tf_numba.dask.{what}")
    out = []
    for i, (a, m, ls) in enumerate(zip(args, mapped, leaves)):
        if not m:
            if any(is_dask_array(x) for x in ls):
                fix = ("add it to data_argnums (the arguments whose rows the loss is a mean "
                       "or sum over)" if what == "value_and_grad"
                       else "give it in_axes 0 to map over its rows")
                raise UnsupportedError(
                    f"argument {i} of tf_numba.dask.{what} holds a Dask array but is not "
                    f"mapped over: {fix}, or compute it to a NumPy array first")
            out.append(a)
            continue
        out.append(pytree.tree_map(
            lambda x: x if is_dask_array(x) else da.from_array(
                np.asarray(x), chunks=(first.chunks[0],) + (-1,) * (np.ndim(x) - 1)), a))
    return out


def vmap(f, in_axes=0):
    """``tf_numba.vmap(f, in_axes)`` over the chunked leading axis of Dask arrays: vmap
    inside each block of rows, outputs Dask arrays chunked like the rows.

    ``in_axes``: 0 (mapped over rows) or None (passed whole), for all arguments or one
    entry per positional argument. Mapped arguments are Dask arrays (or NumPy arrays,
    chunked like the first Dask array); their row chunks become those of the first.

    >>> norms = tf.dask.vmap(lambda w, x: tnp.sum((x * w) ** 2), in_axes=(None, 0))(w, X)
    """
    traces = {}

    @functools.wraps(f)
    def mapped(*args, **kwargs):
        args = _positional(f, args, kwargs, "vmap")
        axes = _per_arg(in_axes, args, "vmap in_axes")
        for i, ax in enumerate(axes):
            if ax not in (0, None):
                raise UnsupportedError(
                    f"maps over the leading (chunked) axis: in_axes entry {i} is {ax!r}, use "
                    "0 or None (move the axis to the front first)", op="tf_numba.dask.vmap")
        args = _rows_args(args, [ax == 0 for ax in axes], "vmap")
        leaves, in_tree = pytree.flatten(tuple(args))
        arrays, _ = _split_leaves(leaves)
        block_fn = api.vmap(f, in_axes=axes)
        return _arrays("tfn-vmap", block_fn, leaves, in_tree, Grid(arrays, rows_only=True),
                       traces.setdefault(axes, {}))
    return mapped


def _client_of(get):
    """The ``distributed`` client whose scheduler ``get`` (from ``_scheduler``) is, or None
    (the threaded scheduler, or ``dask.config.set(scheduler="threads")`` over a client)."""
    client = getattr(get, "__self__", None)
    try:
        from distributed import Client
    except ImportError:
        return None
    return client if isinstance(client, Client) else None


def value_and_grad(loss, argnums=0, data_argnums=1, reduction="mean"):
    """``tf_numba.value_and_grad(loss, argnums)`` of a loss that is a mean (or, with
    ``reduction="sum"``, a sum) over the rows of the Dask arrays at ``data_argnums``.

    Each block of rows computes its value and gradient; the blocks' results, weighted by
    their share of the rows (n_b / N: a mean over uneven chunks weighs every row alike,
    as on one machine; the sums differ from one machine's by rounding only), are combined
    by a tree reduction (``split_every`` from Dask's config, default 4; its levels run as
    tasks until the parts are small, ``CLIENT_SUM_BYTES``, then at the client). Returns
    ``(value, grads)`` as NumPy values, like ``tf_numba.value_and_grad``. The other
    arguments (the parameters) ride inside every task when small (``INLINE_BYTES``);
    larger ones are scattered to every worker of a ``distributed`` client once per call.

    >>> vg = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    >>> value, g = vg(w, X, y)             # X, y: Dask arrays with the same rows
    """
    if reduction not in ("mean", "sum"):
        raise ArgumentError(f"reduction must be 'mean' or 'sum', got {reduction!r}")

    traces = {}

    @functools.wraps(loss)
    def value_and_grad_fn(*args, **kwargs):
        args = _positional(loss, args, kwargs, "value_and_grad")
        nums = api._normalize_argnums(argnums, len(args))
        data = api._normalize_argnums(data_argnums, len(args), "data_argnums")
        both = sorted(set(nums) & set(data))
        if both:
            raise ArgumentError(f"arguments {both} are in both argnums and data_argnums: "
                               "gradients are taken with respect to parameters, not data")
        args = _rows_args(args, [i in data for i in range(len(args))], "value_and_grad")
        leaves, in_tree = pytree.flatten(tuple(args))
        arrays, dask_leaves = _split_leaves(leaves)
        grid = Grid(arrays, rows_only=True)
        programs = BlockPrograms(api.value_and_grad(loss, argnums), leaves, in_tree,
                                 dask_leaves, grid, traces,
                                 rows=[n for n in grid.chunks[0] if n])
        total = sum(grid.chunks[0])
        if total == 0:
            raise ShapeError("the Dask arrays at data_argnums have no rows: a mean or sum "
                             "over them has nothing to take the gradient of",
                             op="tf_numba.dask.value_and_grad")
        weights = {cell: 1 if reduction == "sum" else grid.chunks[0][cell[0]] / total
                   for cell in grid.cells()}
        flat = api._eager_results(_reduce(programs, grid, leaves, dask_leaves, weights))
        return pytree.unflatten(programs.out_tree, flat)
    return value_and_grad_fn


CLIENT_SUM_BYTES = 1 << 20  # a tree level whose parts total this little ends at the client


def _reduce(programs, grid, leaves, dask_leaves, weights):
    """The weighted sum over blocks of the programs' outputs, by a tree reduction.

    When the blocks' outputs total at most ``CLIENT_SUM_BYTES`` (a model's value and
    gradient), the client gathers them and runs the tree itself, in block order (the
    same bits however the blocks were run); on a ``distributed`` client the blocks that
    one worker holds then run as one task per thread of that worker
    (``_runs_by_holder``). Larger outputs are summed by the tree's levels as tasks until
    a level's parts total ``CLIENT_SUM_BYTES``, and the client finishes the same tree.
    A task costs a round trip to the scheduler, its bookkeeping on the client, the
    scheduler and the worker, and for a combine task a fetch between workers: on 2e6 x 64
    rows (perf/dask_bench.py, 1 and 2 workers, 7 paired rounds) the client's tree took
    5-9 ms a call off the task tree's in 8 blocks and 14-17 ms in 128, and running each
    worker's blocks as one task a further ~10 ms in 8 blocks and ~40 ms in 32 (9 paired
    rounds), ~1 ms of wall per task on 2 workers sharing 2 cores."""
    import dask
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
    # a block with no rows adds nothing to a sum or a mean (its weight is 0, but its own
    # mean is 0/0: NaN); a filtered array's computed chunk sizes often include some. It is
    # not traced either: a loss may well not trace on no rows (x[0], a max)
    cells = [cell for cell in grid.cells() if grid.chunks[0][cell[0]]]
    for cell in cells:
        programs.for_cell(cell)         # every trace and guard check before the graph
    # fresh keys each call: the answer comes back as NumPy values, so nothing shares
    # them, and an equal call just before may still be releasing keys of the same name
    # (its result then reused, or "could not find data" mid-release)
    token = tokenize("tfn-value-and-grad", [a.name for a in grid.arrays], uuid.uuid4().hex)
    graph = {}
    get = _scheduler()
    client = _client_of(get)
    tasks = _tasks(programs, grid, leaves, dask_leaves, graph, token, weights=weights,
                   client=client, cells=cells)
    fan_in = dask.config.get("split_every", None)
    fan_in = fan_in if isinstance(fan_in, int) and fan_in >= 2 else 4
    part_bytes = _part_bytes(programs.for_cell(cells[0])[0].out_avals)
    if len(cells) * part_bytes <= CLIENT_SUM_BYTES:
        runs = ([[c] for c in cells] if client is None
                else _runs_by_holder(client, grid, cells))
        level = [(f"tfn-blocks-{token}", i) for i in range(len(runs))]
        for key, run in zip(level, runs):
            graph[key] = (BlockRuns([tasks[c][0] for c in run],
                                    [len(tasks[c]) - 1 for c in run]),
                          *(arg for c in run for arg in tasks[c][1:]))
    else:
        level = [(f"tfn-block-{token}", i) for i in range(len(cells))]
        graph.update(zip(level, tasks.values()))
        depth = 0
        while len(level) > 1 and len(level) * part_bytes > CLIENT_SUM_BYTES:
            depth += 1
            groups = _groups(level, fan_in)
            level = [(f"tfn-combine-{depth}-{token}", i) for i in range(len(groups))]
            graph.update({key: (add_parts, *group) for key, group in zip(level, groups)})
        runs = None
    layer = HighLevelGraph.from_collections(f"tfn-value-and-grad-{token}", graph,
                                            dependencies=grid.arrays)
    parts = get(layer.cull(set(level)), level)
    if runs is not None:                # back in block order, for the tree's bits
        by_cell = {c: part for run, outs in zip(runs, parts) for c, part in zip(run, outs)}
        parts = [by_cell[c] for c in cells]
    while len(parts) > 1:
        parts = [add_parts(*group) for group in _groups(parts, fan_in)]
    return list(parts[0])


def _runs_by_holder(client, grid, cells):
    """``cells`` in groups that run as one task each: the blocks whose inputs are all in
    one worker's memory, dealt in order among that worker's threads; a block whose
    inputs are not held by one worker (not computed yet, or split between workers) runs
    as a task of its own, where Dask places it (arrays persisted one by one may hold a
    block's rows of X on one worker and of y on another). A block held by several workers
    goes to the least loaded of them. Grouping follows where the data already is, so the
    scheduler, placing each task beside its inputs, moves none (an annotation that sends
    the tasks elsewhere moves the same data as it would ungrouped), and a worker that
    holds more blocks than another runs longer: work stealing would copy whole blocks to
    rebalance them, every step of a training loop over the same data. It costs the
    client two requests to the scheduler when an input is persisted."""
    futures = client.futures_of(grid.arrays)
    if not futures:                 # no input is persisted: nothing is held yet
        return [[cell] for cell in cells]
    held, threads = client.who_has(futures), client.nthreads()
    mine, alone = {}, []
    for cell in cells:
        holders = [set(held.get(grid.block_key(j, cell), ())) for j in range(len(grid.arrays))]
        common = set.intersection(*holders)
        if common:      # a block held by several (replicated): the least loaded of them
            worker = min(common, key=lambda a: (len(mine.get(a, ())) / threads.get(a, 1), a))
            mine.setdefault(worker, []).append(cell)
        else:
            alone.append([cell])
    runs = []
    for worker, held_cells in mine.items():
        n = max(1, min(threads.get(worker, 1), len(held_cells)))
        runs += [held_cells[i * len(held_cells) // n:(i + 1) * len(held_cells) // n]
                 for i in range(n)]
    return runs + alone


def _scheduler():
    """The ``get`` that ``dask.compute`` would run a graph of Delayed values with.

    ``_reduce`` calls it on the culled graph itself: ``dask.compute`` would first wrap
    the graph in expressions and run Dask's expression optimizer over them, which finds
    nothing to change in block tasks and a tree over them. On a LocalCluster of 2 worker
    processes (8 blocks, 8 interleaved rounds) that cost the client ~3 ms of CPU a call
    (35 -> 32 ms at 2e6 x 64 rows, where 2 workers on 2 cores lose it from their tasks),
    and 5-6 ms of wall a call at 8e4 rows, where the fixed cost is most of the call."""
    import dask.base
    import dask.threaded
    return dask.base.get_scheduler() or dask.threaded.get


def _groups(level, fan_in):
    return [level[i:i + fan_in] for i in range(0, len(level), fan_in)]


def _part_bytes(avals):
    """Bytes of one block's outputs; unbounded if a length is symbolic."""
    sizes = [np.dtype(a.dtype).itemsize * np.prod(a.shape) if all(
        isinstance(d, int) for d in a.shape) else np.inf for a in avals]
    return float(sum(sizes))
