"""A program cut into segments: runs of lowerable equations, each one compiled kernel
(``CompiledSegment``), and between them the equations with no lowering for their operands,
run by their NumPy impl (``InterpretedStep``).
"""
import numba
import numpy as np

from ..core.interpreter import eval_program
from ..core.ir import Program, Var
from ..core.symbolic import bind_dims, is_symbolic, specialize
from ..errors import TfNumbaError
from ..ops import layout
from . import library  # noqa: F401  (registers the library steps' lowerings)
from .codegen import generate
from .partition import FusedRegion, partition
from ..kernel_vocab.rules import lowerable
from .workspace import Workspaces, new_workspace


class InterpretedStep:
    def __init__(self, eqn):
        self.eqn = eqn


class CompiledSegment:
    """One kernel: converts rank-0 inputs to scalars and rank-0 outputs to 0-d arrays."""

    def __init__(self, program, kernel_cache, parallel=False, products_on_numpy=True,
                 given=()):
        self.program = program
        generated = generate(program, parallel=parallel, products_on_numpy=products_on_numpy,
                             given=given)
        self.source, self.schedule = generated.source, generated.schedule
        sched = generated.schedule
        self.parallel = sched.threaded or sched.threaded_calls     # runs wide
        self.blas, self.serial_products = sched.blas, sched.serial_products
        self.kernel = kernel_cache.get(self.source, parallel=sched.threaded)
        self.cache = kernel_cache
        self.const_values = [c for _, c in program.consts]
        self.scalar_in = [(i, v.aval.dtype.type) for i, v in enumerate(program.invars)
                          if not v.aval.shape]
        self.scalar_out = [(i, v.aval.dtype) for i, v in enumerate(program.outvars)
                           if not v.aval.shape]
        # outputs written into arrays the caller passes (the plan keeps them between
        # calls: ``given``), and the positions of those the kernel returns
        self.given = sched.given
        self.returned = [i for i, v in enumerate(program.outvars) if v not in self.given]
        self.given_at = [program.outvars.index(v) for v in self.given]
        # the kernel returns its one output bare, and nothing when it returns none
        self.bare = len(self.returned) == 1
        # the kernel takes its private intermediates from a workspace (its last parameter)
        self.workspaces = Workspaces() if sched.uses_workspace else None
        # nothing to convert on the way in or out: the kernel's own call takes the inputs
        # (then the given arrays, if any), and ``plain`` ones return every output
        self.direct = not (self.scalar_in or self.const_values or self.scalar_out
                           or self.workspaces is not None)
        self.plain = self.direct and not self.given
        self.first = True

    def __call__(self, args, given=None):
        """Outputs for ``args`` (a list this call may modify), the ``given`` outputs
        written into those arrays (``new_given()``; default: new ones)."""
        try:
            if self.first:
                return self._convert(self._prepare_args(args), given, first=True)
            if self.plain:
                out = self.kernel.dispatcher(*args)
                return (out,) if self.bare else out
            return self._convert(self._prepare_args(args), given)
        except IndexError:
            self.explain(args)
            raise

    def new_given(self):
        """Arrays for the outputs the kernel writes into arrays it is given."""
        return [np.empty(v.aval.shape, v.aval.dtype) for v in self.given]

    def explain(self, args):
        """Raise the interpreter's error for ``args`` (it names the op, the index, the size
        and the user's line, where the kernel could only say an index was out of range);
        returns if the interpreter finds nothing wrong."""
        try:
            self.evaluate(args[:len(self.program.invars)])
        except TfNumbaError as err:
            raise err from None         # the kernel's bare IndexError says nothing more

    def _prepare_args(self, args):
        for i, t in self.scalar_in:
            args[i] = t(args[i])
        if self.const_values:
            args = list(args) + self.const_values
        return args

    def signature(self, args):
        """The numba argument types of a call with ``args`` (the segment's inputs)."""
        args = self._prepare_args(list(args)) + self.new_given()
        if self.workspaces is not None:
            args.append(new_workspace(0))
        return tuple(numba_type(a) for a in args)

    def evaluate(self, args):
        """The outputs this kernel would give for ``args``, by the NumPy interpreter."""
        program = self.program
        if is_symbolic(program):
            program = specialize(program, bind_dims(program, args))
        return eval_program(program, list(args))

    def _convert(self, args, given=None, first=False):
        workspaces = self.workspaces
        if self.given:
            given = self.new_given() if given is None else given
            args = list(args) + given
        if workspaces is not None:
            ws = workspaces.acquire()
            args = list(args) + [ws]
        if first:
            outs = self.cache.call_first(self.kernel, args)
            self.first = False
        else:
            outs = self.kernel.dispatcher(*args)
        if workspaces is not None:
            workspaces.release(ws)
        if self.bare:
            outs = (outs,)
        if self.given:
            returned, outs = outs or (), [None] * len(self.program.outvars)
            for i, out in zip(self.returned, returned):
                outs[i] = out
            for i, out in zip(self.given_at, given):
                outs[i] = out
        if self.scalar_out:
            outs = list(outs)
            # a kernel returns a rank-0 value as a Python scalar; jit returns arrays, 0-d
            # ones included, which its fast path takes back in as parameters
            for i, dtype in self.scalar_out:
                outs[i] = np.asarray(outs[i], dtype)
        return outs


def numba_type(value):
    """numba's type for a kernel argument, as ``numba.typeof`` gives it: built directly
    for arrays, NumPy scalars and tuples of them, because ``numba.typeof`` of the first
    array imports ``numpy.ma`` (~20 ms of a tiered first call)."""
    kind = type(value)
    if kind is np.ndarray:
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return numba.types.Array(numba.from_dtype(value.dtype), value.ndim, layout,
                                 readonly=not flags.writeable, aligned=flags.aligned)
    if isinstance(value, np.generic):
        return numba.from_dtype(value.dtype)
    if kind is tuple:
        return numba.types.BaseTuple.from_types([numba_type(v) for v in value])
    return numba.typeof(value)


def split(program):
    """The program's equations cut into groups: lists of consecutive lowerable equations
    (one kernel each) and, between them, single equations to interpret."""
    groups, current = [], []
    for eqn in program.eqns:
        if lowerable(eqn):
            current.append(eqn)
        else:
            if current:
                groups.append(current)
                current = []
            groups.append(eqn)
    if current:
        groups.append(current)
    return groups


# loop nests per kernel, at most: numba's compile time grows faster than the nests do
# (2-D nests: ~83 ms each in a kernel of 10, 114 ms of 40, 212 ms of 160;
# perf/COMPILE_COST.md), so a larger group is cut into kernels of about this many
MAX_KERNEL_NESTS = 32


def cut_large_groups(groups):
    """``groups`` (of ``split``) with each group of more than ``MAX_KERNEL_NESTS`` loop
    nests cut into consecutive groups of about that many, at the steps the partitioner
    runs in that order (a fused region is never cut). The values that cross a cut become
    outputs of one kernel and inputs of the next; each kernel computes what it did."""
    out = []
    for group in groups:
        if not isinstance(group, list):
            out.append(group)
            continue
        steps = partition(Program((), (), group, ()))
        weights = [_nests(step) for step in steps]
        if sum(weights) <= MAX_KERNEL_NESTS:
            out.append(group)
            continue
        parts, current, weight = [], [], 0
        for step, w in zip(steps, weights):
            if current and weight + w > MAX_KERNEL_NESTS:
                parts.append(current)
                current, weight = [], 0
            current.extend(step.eqns if type(step) is FusedRegion else [step.eqn])
            weight += w
        parts.append(current)
        out.extend(parts)
    return out


def cut_into_regions(groups):
    """``groups`` (of ``split``) with each group cut into one kernel per step the
    partitioner makes: a fused region or a library step, with the cheap steps before it
    (views, a scalar's arithmetic, a dim's size: not worth a kernel call of their own).
    Identical steps (an MLP's layers) then print identical sources and share one kernel,
    and no kernel grows with the program."""
    out = []
    for group in groups:
        if not isinstance(group, list):
            out.append(group)
            continue
        kernels, current = [], []
        for step in partition(Program((), (), group, ())):
            current.extend(step.eqns if type(step) is FusedRegion else [step.eqn])
            if not _cheap(step):
                kernels.append(current)
                current = []
        if current and kernels:
            kernels[-1].extend(current)     # trailing cheap steps join the last kernel
        elif current:
            kernels.append(current)
        out.extend(kernels)
    return out


# library steps that make a view or read a shape: no loop of their own
_CHEAP_LIBRARY_STEPS = frozenset((layout.reshape_p, layout.transpose_p, layout.slice_p,
                                  layout.rev_p, layout.dim_size_p))


def _cheap(step):
    if type(step) is FusedRegion:
        return not step.space           # arithmetic on scalars
    return step.eqn.prim in _CHEAP_LIBRARY_STEPS


def count_nests(group):
    """The loop nests one kernel of ``group``'s equations would have."""
    return sum(_nests(step) for step in partition(Program((), (), group, ())))


def _nests(step):
    """How many loop nests a step generates: one per fused region, those of the programs
    a loop or a branch runs, and none for a library step's own call."""
    if type(step) is FusedRegion:
        return 1
    return sum(_nests(s) for p in step.eqn.params.values() for s in _programs_steps(p))


def _programs_steps(param):
    if isinstance(param, Program):
        return partition(param)
    if type(param) is tuple and param and all(isinstance(p, Program) for p in param):
        return [s for p in param for s in partition(p)]
    return []


def segment_program(program, groups, g, uses_after, consts):
    """The sub-program of kernel group ``g``: its free inputs (consts ride along with it),
    and the values it defines that later groups or the outputs read."""
    group = groups[g]
    defined = {v for e in group for v in e.outvars}
    ins, seen = [], set()
    for e in group:
        for v in e.invars:
            if type(v) is Var and v not in defined and v not in seen:
                seen.add(v)
                ins.append(v)
    own_consts = [(v, consts[v]) for v in ins if v in consts]
    if len(groups) == 1:
        # the whole program is one kernel: take the program's inputs as they are, so a run
        # hands its arguments straight to it; a const that is an output rides along too
        # (a gradient's cotangent that a closure held)
        own_consts += [(v, consts[v]) for v in dict.fromkeys(program.outvars)
                       if type(v) is Var and v in consts and v not in seen]
        return Program(list(program.invars), own_consts, group, list(program.outvars))
    outs = [v for e in group for v in e.outvars if v in uses_after[g]]
    return Program([v for v in ins if v not in consts], own_consts, group, outs)


def uses_after(program, groups):
    """For each group index, the vars it defines that something after it needs."""
    needed = {v for v in program.outvars if type(v) is Var}
    result = [None] * len(groups)
    for g in range(len(groups) - 1, -1, -1):
        group = groups[g] if isinstance(groups[g], list) else [groups[g]]
        result[g] = set(needed)
        for e in group:
            needed.update(v for v in e.invars if type(v) is Var)
    return result
