"""``jit``: trace once per input signature, lower to numba kernels, run compiled.

Dispatch is on (pytree structure, static argument values, leaf dtypes and shapes). A new
shape re-traces (milliseconds) but usually hits the kernel cache, because generated code
reads its lengths from the inputs. Called inside another trace, a jitted function is
inlined into it, so ``grad(jit(f))`` and ``jit(grad(f))`` both work.
"""
import collections
import functools
import sys
import weakref

import numpy as np

from . import config
from .api import TracedFunction, _normalize_argnums
from .core import pytree
from .core.trace import Tracer, current_builder
from .core.written import Written
from .lowering.compile_log import compiling_for
from .errors import ArgumentError, TfNumbaError
from .runtime import CpuEngine, default_runtime
from .tracebacks import RAISE_AGAIN, api_boundary, entry_point, leave
from .transforms.simplify import simplify


# every live jitted function, for clear_caches
_EVERY_JITTED = weakref.WeakSet()


class Specialization:
    """A traced, simplified and prepared specialization of a jitted function."""
    __slots__ = ("prepared", "plan", "out_tree", "program", "threads")

    def __init__(self, prepared, out_tree, program, threads=1):
        self.prepared, self.plan = prepared, prepared.plan
        self.out_tree, self.program, self.threads = out_tree, program, threads

    def as_text(self):
        """The program, the schedule of each kernel and the generated source."""
        return self.plan.variant_for(self.threads).as_text()

    @property
    def schedules(self):
        """The ``lowering.schedule.Schedule`` of each kernel of the plan this
        specialization runs with its engine's threads (NumPy steps between kernels have
        none)."""
        return self.plan.variant_for(self.threads).schedules

    def compile(self, *args):
        """Block until this specialization runs compiled (tiered plans compile in the
        background after their first call; pass the arguments to start it now: they must
        have the shapes and dtypes it was lowered for)."""
        plan = self.plan.variant_for(self.threads)
        leaves = None
        if args and not plan.ready:
            leaves = [np.asarray(x) if not isinstance(x, np.ndarray) else x
                      for x in pytree.flatten(args)[0]]
            self.prepared.check(leaves)
            plan.run(list(leaves), self.threads)
        plan.compile(leaves)
        return self
    compile = api_boundary(compile, "compile")


class Jitted:
    """The callable ``jit(f)`` returns; ``.lower(*args)`` shows the program and kernels.

    It keeps the specializations of its most recent ``MOST_SPECIALIZATIONS`` signatures
    (least recently prepared first out), so a loop over ever new shapes runs in bounded
    memory; an evicted one is prepared again from the plan and kernel caches."""
    MOST_SPECIALIZATIONS = 256

    def __init__(self, fn, static_argnums=(), static_argnames=(), tiered=None, engine=None,
                 regions=None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.tiered, self.regions = tiered, regions
        engine = CpuEngine() if engine is None else engine
        if engine.target() != CpuEngine.TARGET:
            raise TfNumbaError(f"runs on the CPU engine; got {engine!r}", op="jit")
        self.threads = engine.threads
        self.static_argnums = _normalize_argnums(static_argnums, None, "static_argnums")
        self.static_argnames = ((static_argnames,) if isinstance(static_argnames, str)
                                else tuple(static_argnames))
        self._prepared = collections.OrderedDict()
        _EVERY_JITTED.add(self)
        self._fast = {}      # positional-ndarray signature -> call of a compiled plan
        # [_fast_signature written for the structure of the first call with a fast entry]
        self._reader = [None]

    def __call__(self, *args, **kwargs):
        return self.call_slow(args, kwargs)   # the fast path lives in as_function()

    @api_boundary
    def call_slow(self, args, kwargs):
        """Dispatch on the full signature: inline under a trace, else prepare and run."""
        if current_builder() is not None or _has_tracer(args, kwargs):
            return self.fn(*args, **kwargs)
        with compiling_for(f"jit({getattr(self.fn, '__name__', 'function')})"):
            prepared, leaves = self._prepare(args, kwargs)
            out = pytree.unflatten(prepared.out_tree, prepared.plan.run(leaves, self.threads))
        if not kwargs and not self.static_argnums:
            signature = _fast_signature(args)
            if signature is not None:
                fast = self._fast
                fast[signature[0]] = _fast_call(prepared, self.threads, fast, signature[0])
                if len(fast) > self.MOST_SPECIALIZATIONS:
                    del fast[next(iter(fast))]          # the oldest entry
                if self._reader[0] is None:
                    self._reader[0] = _reader_for(args)
        return out

    def as_function(self):
        """A plain function with the fast path inlined (a Python function call costs
        less than an object's ``__call__``); ``.lower`` and ``.jitted`` ride along."""
        fast_table, call_slow, reader = self._fast, self.call_slow, self._reader

        fn, switches = self.fn, config._values

        @functools.wraps(self.fn)
        def jitted(*args, **kwargs):
            try:       # (free in Python 3.11+ when nothing is raised)
                if switches["jax_disable_jit"]:
                    return fn(*args, **kwargs)
                if not kwargs:
                    if len(args) == 1 and type(args[0]) is np.ndarray:
                        fast = fast_table.get((args[0].dtype, args[0].shape))
                        if fast is not None:
                            return fast(args)
                    else:
                        read = reader[0]
                        signature = None if read is None else read(args)
                        if signature is None:
                            signature = _fast_signature(args)
                        if signature is not None:
                            fast = fast_table.get(signature[0])
                            if fast is not None:
                                return fast(signature[1])
                return call_slow(args, kwargs)
            except TfNumbaError as err:
                if leave(err, sys._getframe()) and RAISE_AGAIN:
                    raise err  # (frames removed; TF_NUMBA_TRACEBACK_FILTERING=off shows them)
                raise
        entry_point(jitted)
        jitted.lower = self.lower
        jitted.jitted = self
        return jitted

    def _split(self, args, kwargs):
        n = len(args)
        statics = _normalize_argnums(self.static_argnums, n, "static_argnums") if n else ()
        static_vals = tuple((i, args[i]) for i in statics)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in statics)
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        return static_vals, static_kw, dyn_args, dyn_kw

    def _prepare(self, args, kwargs):
        static_vals, static_kw, dyn_args, dyn_kw = self._split(args, kwargs)
        leaves, tree = pytree.flatten((dyn_args, dyn_kw))
        leaves = [np.asarray(x) if not isinstance(x, np.ndarray) else x for x in leaves]
        try:
            key = (tree, static_vals, static_kw, tuple((x.dtype, x.shape) for x in leaves))
            hash(key)
        except TypeError:
            raise ArgumentError("static arguments of a jitted function must be hashable; got "
                               + ", ".join(type(v).__name__ for _, v in static_vals + static_kw)
                               ) from None
        known = self._prepared
        prepared = known.get(key)
        if prepared is None:
            prepared = known[key] = self._build(static_vals, static_kw, dyn_args, dyn_kw)
            if len(known) > self.MOST_SPECIALIZATIONS:
                known.popitem(last=False)
        else:
            known.move_to_end(key)
        return prepared, leaves

    def _build(self, static_vals, static_kw, dyn_args, dyn_kw):
        statics = dict(static_vals)
        n = len(statics) + len(dyn_args)

        def bound(*dynamic, **kw):
            it = iter(dynamic)
            full = [statics[i] if i in statics else next(it) for i in range(n)]
            return self.fn(*full, **kw, **dict(static_kw))

        traced = TracedFunction(lambda a, k: bound(*a, **k), (dyn_args, dyn_kw), {})
        program = simplify(traced.program)
        # the same path as Runtime users: prepare through a runtime's plan cache
        runtime = default_runtime(self.tiered, self.regions)
        prepared = runtime.prepare(program, traced.leaves, [CpuEngine.TARGET])
        return Specialization(prepared, traced.out_tree, program, self.threads)

    def lower(self, *args, **kwargs):
        """The Specialization for these arguments (``.as_text()`` prints it)."""
        return self._prepare(args, kwargs)[0]
    lower = api_boundary(lower, "lower")


def _fast_call(prepared, threads, table=None, key=None):
    """The leanest call of a compiled specialization: straight into the kernel when the
    plan is one kernel with nothing to convert, the output is one array, one thread runs
    it and it calls no BLAS (otherwise ``Plan.run`` picks the parallel variant and sets
    the BLAS width). Before the plan that runs this width (a wide call's variant) is
    compiled, a call through ``Plan.run`` (interpreted until its kernels arrive) that puts
    the lean call in its place in ``table`` once they have: the interpreted tier skips the
    general pytree walk too (~60 us a step for a list of dicts of parameters)."""
    plan = prepared.plan
    if not plan.variant_for(threads).settled:
        out_tree, run = prepared.out_tree, plan.waiting_runner(threads)

        def call_until_compiled(args):
            outs = run(list(args))
            if plan.variant_for(threads).settled:
                table[key] = _fast_call(prepared, threads)
            return outs[0] if out_tree is pytree.LEAF else pytree.unflatten(out_tree, outs)
        return call_until_compiled
    plan = plan.variant_for(threads).final
    if (plan.single and plan.segments[0].plain and prepared.out_tree is pytree.LEAF
            and threads == 1 and not plan.blas):
        segment = plan.segments[0]
        kernel = segment.kernel.dispatcher

        def call(args):
            try:
                return kernel(*args)
            except IndexError:
                segment.explain(list(args))
                raise
        return call
    out_tree, run = prepared.out_tree, plan.runner(threads)
    if out_tree is pytree.LEAF:
        return lambda args: run(list(args))[0]
    return lambda args: pytree.unflatten(out_tree, run(list(args)))


def _fast_signature(args):
    """``(key, leaves)`` for the common calls: positional NumPy arrays and scalars, and
    lists, tuples and dicts of them nested to any depth (parameters), read without the
    general pytree walk (which cost ~17 us a call for ``f(params, x)``); None for anything
    else. ``leaves`` are in pytree order (a dict's by sorted key, as ``pytree.flatten``).
    A NumPy scalar and a 0-d array of its dtype have the same key: jit returns 0-d arrays,
    and either may come back in as a parameter."""
    key, leaves = [], []
    try:
        if not _read_leaves(args, key, leaves):
            return None
    except TypeError:                   # dict keys that do not sort
        return None
    return tuple(key), leaves


# Structures with more leaves are read by the walk (a reader's source grows with them).
_MOST_LEAVES_READ = 256


def _reader_for(args):
    """A function equal to ``_fast_signature`` on calls whose arguments have the structure
    of ``args`` (the same containers, lengths and dict keys, ndarray leaves) and None on
    others, written as straight-line code: the walk costs ~3 us a call for
    ``step(params, x, y)``, a tenth of a small interpreted step. None if ``args`` has a
    leaf that is not an ndarray."""
    written, checks, key, leaves, unpack = Written(ndarray=np.ndarray), [], [], [], []
    const = written.bind

    def visit(name, value, marked=True):
        kind = type(value)
        if kind is np.ndarray:
            checks.append(f"type({name}) is not ndarray")
            key.extend((f"{name}.dtype", f"{name}.shape"))
            leaves.append(name)
            return len(leaves) <= _MOST_LEAVES_READ
        if kind is list or kind is tuple:
            items = list(value)
            if marked:
                checks.append(f"type({name}) is not {const(kind)} or len({name}) != "
                              f"{len(items)}")
                key.append(const((kind, len(items))))
        elif kind is dict:
            names = tuple(sorted(value))
            checks.append(f"type({name}) is not dict or len({name}) != {len(names)}")
            key.append(const((kind, names)))
            items = [value[k] for k in names]
        else:
            return False
        children = [f"{name}_{i}" for i in range(len(items))]
        if kind is dict:
            reads = [f"{name}.get({const(k)})" for k in names]
        else:
            reads = [f"{name}[{i}]" for i in range(len(items))]
        # each level's checks pass before its children are read
        unpack.append((len(checks), [f"{c} = {r}" for c, r in zip(children, reads)]))
        return all(visit(c, v) for c, v in zip(children, items))
    try:
        if not visit("a", list(args), marked=False):
            return None
    except TypeError:                   # dict keys that do not sort
        return None
    lines = ["def read(args):", f"    if len(args) != {len(args)}:", "        return None",
             "    a = args"]
    done = 0
    for upto, assigns in unpack:
        if upto > done:
            lines += [f"    if {' or '.join(checks[done:upto])}:", "        return None"]
            done = upto
        lines += [f"    {line}" for line in assigns]
    if len(checks) > done:
        lines += [f"    if {' or '.join(checks[done:])}:", "        return None"]
    lines.append(f"    return ({''.join(k + ', ' for k in key)}), [{', '.join(leaves)}]")
    return written.function("\n".join(lines) + "\n", "read")


def _read_leaves(items, key, leaves):
    for b in items:
        kind = type(b)
        if kind is np.ndarray:
            key += (b.dtype, b.shape)
            leaves.append(b)
        elif kind is list or kind is tuple:
            key.append((kind, len(b)))     # marks where a container starts and ends
            if not _read_leaves(b, key, leaves):
                return False
        elif kind is dict:
            names = tuple(sorted(b))
            key.append((kind, names))
            if not _read_leaves([b[name] for name in names], key, leaves):
                return False
        elif isinstance(b, np.generic):
            key += (b.dtype, ())
            leaves.append(b)
        else:
            return False
    return True


def _has_tracer(args, kwargs):
    leaves, _ = pytree.flatten((args, kwargs))
    return any(type(x) is Tracer for x in leaves)


def jit(fn=None, *, static_argnums=(), static_argnames=(), tiered=None, engine=None,
        regions=None, in_shardings=None, out_shardings=None, donate_argnums=(), donate_argnames=(),
        keep_unused=False, device=None, backend=None, inline=False, compiler_options=None):
    """Compile ``fn`` with numba, as ``jax.jit``: ``jit(f)`` or ``@jit(static_argnums=1)``.

    ``tiered`` (default: on unless ``TF_NUMBA_TIERED=0``): the first calls of a new
    specialization run on the NumPy interpreter while numba compiles in the background;
    ``jit(f).lower(*args).compile(*args)`` waits for the compiled kernels.
    ``engine``: the ``CpuEngine`` whose ``threads`` large fused loops may use (default
    ``CpuEngine()``, one thread): ``jit(f, engine=CpuEngine(threads=2))``.
    ``regions``: compile one kernel per fused region or library step, shared by identical
    regions (True), or one kernel per run of compiled steps (False); by default a program
    gets region kernels when it is large (``plan.regions_default``).
    JAX's placement and buffer options are taken and change nothing on one CPU device:
    ``in_shardings``/``out_shardings``, ``donate_argnums``/``donate_argnames`` (a donated
    input is not reused: NumPy arrays stay the caller's), ``keep_unused``, ``device``,
    ``backend`` ('cpu'), ``inline``, ``compiler_options``. Under ``tf.disable_jit()`` the
    function runs as Python, op by op.
    """
    if backend not in (None, "cpu"):
        raise ArgumentError(f"backend={backend!r}: tf_numba runs on the CPU only", op="jit")
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, tiered=tiered,
                                 engine=engine, regions=regions, in_shardings=in_shardings,
                                 out_shardings=out_shardings, donate_argnums=donate_argnums,
                                 donate_argnames=donate_argnames, keep_unused=keep_unused,
                                 device=device, backend=backend, inline=inline,
                                 compiler_options=compiler_options)
    return Jitted(fn, static_argnums, static_argnames, tiered, engine, regions).as_function()




def clear_caches():
    """Forget every compiled specialization, prepared plan, transformed program and kernel
    held in memory (``jax.clear_caches``); the next calls prepare again (from the on-disk
    kernel cache where it has them)."""
    from .lowering.kernel_cache import KERNELS
    from .runtime.runtime import _DEFAULTS
    from .transforms.cache import TRANSFORMS
    for jitted in list(_EVERY_JITTED):
        jitted._prepared.clear()
        jitted._fast.clear()
    for runtime in list(_DEFAULTS.values()):
        runtime.plans.clear()
    TRANSFORMS.clear()
    KERNELS.clear()
