"""The client side of a blockwise call: the grid of blocks and the programs that run on it.

A ``Grid`` lines the Dask arrays among a call's arguments up on a grid of blocks: Dask's
own alignment for ``map_blocks`` (trailing axes, chunks unified, size-1 axes broadcast),
the leading axis alone for ``vmap`` and ``value_and_grad`` (other axes in one chunk, row
chunks those of the first Dask array). ``BlockPrograms`` traces the user's function on
block avals: once for every block when the leading length can stay symbolic (``rows``:
the program then holds for each length and its guards are checked against every block's
shapes here, before a task runs), otherwise once per shape class.
"""
import dataclasses

import numpy as np

from .. import api
from ..core import pytree
from ..core.shapes import SYMBOLIC_MIN, Sym
from ..core.symbolic import bind_dims, evaluate
from ..errors import ShapeError, TfIndexError, TfNumbaError, UnsupportedError
from ..transforms.simplify import simplify
from .worker import ShippedProgram, block_error

ROWS = "rows"           # the symbol of a block's leading length
TRACES_MAX = 64         # traces a function's cache keeps (shape classes x signatures)


def is_dask_array(x):
    import dask.array as da
    return isinstance(x, da.Array)


class Grid:
    """The block grid of ``arrays`` (Dask arrays). ``rows_only``: blocks are row ranges."""

    def __init__(self, arrays, rows_only):
        import dask.array as da
        if not arrays:
            raise UnsupportedError("tf_numba.dask needs at least one Dask array argument "
                                   "(the others are passed whole to every block)")
        for a in arrays:
            if any(np.isnan(c) for chunks in a.chunks for c in chunks):
                raise UnsupportedError(f"a Dask array of shape {a.shape} has unknown chunk "
                                       "sizes; call .compute_chunk_sizes() on it first")
        if rows_only:
            first = arrays[0]
            if first.ndim == 0:
                raise ShapeError("a Dask array argument mapped over its rows is 0-d")
            for a in arrays:
                if a.ndim == 0 or a.shape[0] != first.shape[0]:
                    raise ShapeError(
                        f"Dask array arguments have {first.shape[0]} and "
                        f"{a.shape[0] if a.ndim else 'no'} rows; mapped over rows, they need "
                        "the same number")
            self.arrays = [a.rechunk((first.chunks[0],) + (-1,) * (a.ndim - 1))
                           for a in arrays]
            self.axes = [(0,) + (None,) * (a.ndim - 1) for a in arrays]
            self.chunks = (first.chunks[0],)
        else:
            shapes = [tuple(a.shape) for a in arrays]
            try:
                np.broadcast_shapes(*shapes)
            except ValueError:
                raise ShapeError(
                    f"the Dask arrays' shapes {', '.join(map(str, shapes))} do not "
                    "broadcast: map_blocks lines blocks up as NumPy broadcasts arrays, by "
                    "their trailing axes (a 1-d array pairs with the last axis of a 2-d "
                    "one); give an array of one value per row a trailing axis of 1 "
                    "(y[:, None]), or map over rows with tf_numba.dask.vmap",
                    op="tf_numba.dask.map_blocks") from None
            ndim = max(a.ndim for a in arrays)
            pairs = []
            for a in arrays:
                pairs += [a, tuple(range(ndim - a.ndim, ndim))]
            unified, self.arrays = da.core.unify_chunks(*pairs)
            self.axes = [tuple(range(ndim - a.ndim, ndim)) for a in arrays]
            self.chunks = tuple(unified[k] for k in range(ndim))
        self.numblocks = tuple(len(c) for c in self.chunks)
        self.starts = [np.concatenate([[0], np.cumsum(c)]).astype(int) for c in self.chunks]

    @property
    def ndim(self):
        return len(self.chunks)

    def cells(self):
        return list(np.ndindex(*self.numblocks))

    def _index(self, j, cell):
        a = self.arrays[j]
        return tuple(0 if g is None or a.numblocks[k] == 1 else cell[g]
                     for k, g in enumerate(self.axes[j]))

    def block_key(self, j, cell):
        return (self.arrays[j].name,) + self._index(j, cell)

    def block_shape(self, j, cell):
        a = self.arrays[j]
        return tuple(int(a.chunks[k][i]) for k, i in enumerate(self._index(j, cell)))

    def rows_axis(self, j):
        """The axis of array ``j`` that runs along the grid's leading axis with that
        axis's blocks (None where it is broadcast there)."""
        for k, g in enumerate(self.axes[j]):
            if g == 0 and self.arrays[j].numblocks[k] == len(self.chunks[0]):
                return k
        return None

    def label(self, cell):
        ranges = ", ".join(f"{s[i]}:{s[i + 1]}" for s, i in zip(self.starts, cell))
        return f"block {tuple(int(i) for i in cell)} (index ranges {ranges})"


@dataclasses.dataclass
class ClassProgram:
    """The program of one shape class: shipped form, constants hoisted to inputs."""
    shipped: ShippedProgram
    consts: list
    out_avals: tuple


class BlockPrograms:
    """The programs of ``fn`` over a grid's blocks (see the module docstring).

    ``leaves``: the call's flattened arguments; ``dask_leaves``: for each of them, the
    index of its Dask array in ``grid.arrays`` or None (passed whole to every block).
    """

    def __init__(self, fn, leaves, in_tree, dask_leaves, grid, traces=None, rows=None):
        self.fn, self.leaves, self.in_tree = fn, leaves, in_tree
        self.dask_leaves, self.grid = dask_leaves, grid
        self.out_tree = None
        # ``traces``: the caller's cache of traces of ``fn`` across calls, by stand-ins (a
        # training loop's steps trace once), dropped when full: like jit, a function is
        # traced once per signature, its closed-over arrays read then
        self._traces = {} if traces is None else traces
        self._classes = {}      # class key -> ClassProgram, or None: no symbolic program
        self._checked = {}      # block shapes -> symbol values, for a symbolic class
        self._cells = {}        # cell -> for_cell's answer
        # one symbolic program only pays when the leading axis has several lengths (of
        # the blocks that will run: ``rows``, when the caller runs only some)
        self._symbolic = len(set(grid.chunks[0] if rows is None else rows)) > 1

    def _stand_ins(self, cell, symbolic):
        """ShapeDtype stand-ins of the leaves at ``cell``, the rows symbolic or not."""
        out = []
        for leaf, j in zip(self.leaves, self.dask_leaves):
            if j is None:
                aval = api._aval(api._as_array(leaf))
                out.append(api.ShapeDtype(aval.shape, aval.dtype))
                continue
            shape = list(self.grid.block_shape(j, cell))
            k = self.grid.rows_axis(j)
            if symbolic and k is not None:
                shape[k] = ROWS
            out.append(api.ShapeDtype(tuple(shape), self.grid.arrays[j].dtype))
        return out

    def _trace(self, cell, symbolic):
        stand_ins = self._stand_ins(cell, symbolic)
        key = (self.in_tree, tuple((x.shape, x.dtype) for x in stand_ins))
        found = self._traces.get(key)
        if found is None:
            found = self._traces[key] = self._trace_new(stand_ins)
            if len(self._traces) > TRACES_MAX:
                self._traces.clear()
        cls, out_tree = found
        if self.out_tree is None:
            self.out_tree = out_tree
        elif out_tree != self.out_tree:
            raise UnsupportedError(
                f"the function returns {out_tree} on {self.grid.label(cell)} and "
                f"{self.out_tree} on other blocks; it must return one structure for all")
        return cls

    def _trace_new(self, stand_ins):
        trees = []

        def flat_fn(*flat):
            out = self.fn(*pytree.unflatten(self.in_tree, flat))
            out_leaves, tree = pytree.flatten(out)
            trees.append(tree)
            return out_leaves

        program = simplify(api.make_program(flat_fn)(*stand_ins))
        # closed-over arrays travel as inputs, once per graph, not inside every task
        const_vars = [v for v, _ in program.consts]
        consts = [c for _, c in program.consts]
        program = program.replace(invars=program.invars + tuple(const_vars), consts=(),
                                  input_names=None, input_defaults=None)
        return ClassProgram(ShippedProgram(program), consts, program.out_avals), trees[0]

    def for_cell(self, cell):
        """(ClassProgram, output shapes) for the block at ``cell``; a ShapeError naming
        the block if its shapes break the program's guards or its trace."""
        found = self._cells.get(cell)
        if found is None:
            found = self._cells[cell] = self._for_cell(cell)
        return found

    def _for_cell(self, cell):
        shapes = tuple(self.grid.block_shape(j, cell) for j in range(len(self.grid.arrays)))
        if self._symbolic and self.grid.chunks[0][cell[0]] >= SYMBOLIC_MIN:
            key = ("symbolic",) + tuple(
                tuple(d for k, d in enumerate(s) if k != self.grid.rows_axis(j))
                for j, s in enumerate(shapes))
            if key not in self._classes:
                try:
                    self._classes[key] = self._trace(cell, True)
                except TfNumbaError:    # the program needs concrete lengths: one per class
                    self._classes[key] = None
            cls = self._classes[key]
            if cls is not None:
                if shapes not in self._checked:
                    self._checked[shapes] = self._check(cls, cell)
                values = self._checked[shapes]
                return cls, [tuple(int(evaluate(d, values)) if isinstance(d, Sym) else d
                                   for d in aval.shape) for aval in cls.out_avals]
        cls = self._classes.get(shapes)
        if cls is None:
            try:
                cls = self._classes[shapes] = self._trace(cell, False)
            except (ShapeError, TfIndexError) as err:
                raise block_error(err, self.grid.label(cell)) from None
        return cls, [aval.shape for aval in cls.out_avals]

    def _check(self, cls, cell):
        """The symbol values at ``cell``, after checking the program's guards there."""
        stand_ins = self._stand_ins(cell, False)
        stand_ins += [api.ShapeDtype(np.shape(c), np.asarray(c).dtype) for c in cls.consts]
        try:
            return bind_dims(cls.shipped.program, stand_ins)
        except (ShapeError, TfIndexError) as err:
            raise block_error(err, self.grid.label(cell)) from None
