"""The fuzzer's oracles: properties every random program must have.

Each oracle runs a ``RandomProgram`` two ways that must agree and raises ``Finding`` (with
a script that reproduces it) when they do not; it returns how many comparisons it made.
The reference is ``f`` called un-jitted (tnp on NumPy arrays, op by op).

- ``traced``: the traced program on the interpreter, and the plan's interpreted tier
  (lowering rewrites, simplification, segments) equal the reference.
- ``compiled``: ``jit(f, tiered=False)`` equals the reference, and on two threads equals
  itself on one, bit for bit (chunked reductions combine in order, README "Threads").
- ``tiered``: the default ``jit`` on its interpreted tier, then compiled, equals both.
- ``vmap``: ``vmap(f)`` equals ``f`` mapped by a Python loop.
- ``transpose``: ``<u, J v>`` from ``jvp`` equals ``<J^T u, v>`` from ``vjp``.
- ``finite_differences``: ``J v`` equals central differences, in float64.
- ``grad_jit``: ``jit(grad(g))`` equals ``grad(jit(g))``.
- ``bad_inputs``: inputs of a wrong shape, dtype or out-of-range indices give the same
  values traced and eager, or raise a ``TfNumbaError``; nothing else escapes.

Tolerances: values compare bit for bit where the design promises it (thread counts, the
tiers of one kernel); elsewhere within a relative tolerance per dtype plus what the
reference itself moves when its inputs move by a few ulps (a program's own
conditioning), with NaN and inf in the same places.
"""
import contextlib
import math
import signal
import textwrap
import warnings

import numpy as np

import tf_numba as tf
from tf_numba.core.ir import Literal
from tf_numba.errors import TfNumbaError

# float16 (NumPy's type of a bool's sin): each op runs in float32 and rounds once to
# float16, whose ulp is ~1e-3
RTOL = {"float64": 1e-12, "complex128": 1e-12, "float32": 2e-5, "complex64": 2e-5,
        "float16": 1e-2}
# the reference's own movement under input perturbation, counted this many times over
SENSITIVITY = 64.0
# ... and the output's typical movement (its 90th percentile) this many times, anywhere
TYPICAL = 4.0


class Finding(AssertionError):
    """An oracle's failure: its kind, what differed, and a script that shows it."""

    def __init__(self, kind, message, program, check=""):
        self.kind, self.message, self.program = kind, message, program
        self.reproduction = program.script(check) if program is not None else ""
        super().__init__(f"[{kind}] {message}\n\n--- reproduction ---\n{self.reproduction}")


class ProgramTimeout(BaseException):
    """A program ran past its time (raised by ``time_limit`` from a signal)."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise ``ProgramTimeout`` in this (main) thread after ``seconds``. A kernel stuck in
    compiled code is not interrupted: the campaign's watchdog kills its process."""
    if seconds is None:
        yield
        return

    def on_alarm(signum, frame):
        raise ProgramTimeout(f"ran longer than {seconds} s")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ------------------------------------------------------------------------------ comparing

def _leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _perturbed(args, rng, ulps=4.0):
    """``args`` with every inexact array moved by a few ulps, relatively."""
    moved = []
    for a in args:
        if np.asarray(a).dtype.kind in "fc":
            a = np.asarray(a)
            eps = np.finfo(a.dtype).eps * ulps
            noise = rng.standard_normal(a.shape)
            if a.dtype.kind == "c":
                noise = noise + 1j * rng.standard_normal(a.shape)
            a = (a * (1 + eps * noise)).astype(a.dtype)
        moved.append(a)
    return moved


def difference(got, want, moved=None, exact=False, rtol=None, normwise=False):
    """None if ``got`` matches ``want`` (lists of outputs), else what differs. ``moved`` is
    the reference at perturbed inputs: where it moves, so may ``got``. ``normwise``: an
    error is measured against the output's largest value (two implementations' rounding),
    not each value's own."""
    got, want = _leaves(got), _leaves(want)
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    moved = _leaves(moved) if moved is not None else [None] * len(want)
    for k, (g, w, m) in enumerate(zip(got, want, moved)):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {k}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if w.dtype.kind not in "fc" or exact:
            same = _same(g, w)
            if m is not None and not exact:     # (a comparison the rounding tips over)
                same |= ~_same(np.asarray(m), w)
            if not same.all():
                bad = np.argwhere(~same)
                at = tuple(bad[0]) if bad.size else ()
                return (f"output {k} ({w.dtype}{list(w.shape)}) differs at {len(bad)} "
                        f"places, first {at}: got {g[at]!r}, expected {w[at]!r}")
            continue
        m = None if m is None else np.asarray(m)
        tol = max(RTOL[w.dtype.name], rtol or 0)
        size = None
        if w.dtype.kind == "c":     # the parts apart: -inf+nanj is -inf and NaN
            # (which parts of a value past the finite numbers are NaN, and the signs of
            # its infinities, follow C99's rules in NumPy and numba's own in kernels:
            # only that it is not finite is compared)
            past = ~np.isfinite(w) & ~np.isfinite(g)
            g, w = np.where(past, 0, g), np.where(past, 0, w)
            with np.errstate(all="ignore"):     # (each part's error is of |w|'s size)
                size = np.repeat(np.abs(w)[..., None], 2, axis=-1)
            g, w = _parts(g), _parts(w)
            m = None if m is None else _parts(m)
        ok = _close(g, w, m, tol, normwise, size)
        if not ok.all():
            bad = np.argwhere(~ok)
            at = tuple(bad[0]) if bad.size else ()
            return (f"output {k} ({w.dtype}{list(w.shape)}) differs at {len(bad)} places, "
                    f"first {at}: got {g[at]!r}, expected {w[at]!r}")
    return None


def _parts(z):
    return np.stack([np.real(z), np.imag(z)], axis=-1)


def _same(g, w):
    if w.dtype.kind in "fc":
        return (g == w) | (np.isnan(g) & np.isnan(w))
    return g == w


def _close(g, w, m, rtol, normwise=False, size=None):
    """Elementwise: within ``rtol`` of ``size`` (by default ``|w|``; and what the
    perturbed reference ``m`` moves), with NaN and infinities where the reference has
    them (or where ``m`` changes them)."""
    with np.errstate(all="ignore"):
        finite_w, finite_g = np.isfinite(w), np.isfinite(g)
        same_kind = (finite_w == finite_g) & (np.isnan(w) == np.isnan(g))
        same_inf = ~(np.isinf(w) | np.isinf(g)) | (g == w)
        ok = same_kind & same_inf
        scale = np.abs(np.where(finite_w, w if size is None else size, 0))
        scale = np.where(np.isfinite(scale), scale, 0)
        allowed = rtol * (scale + (scale.max() if scale.size else 0) * (
            1 if normwise else rtol))
        if m is not None:
            unstable = np.isfinite(m) != finite_w
            ok |= unstable
            moves = np.abs(np.where(finite_w & np.isfinite(m), w - m, 0))
            # (one sample of a rounding's movement is small by chance at some places of
            # a large output: a typical movement over the output is allowed everywhere)
            typical = np.quantile(moves, 0.9) if moves.size else 0
            allowed = allowed + SENSITIVITY * moves + TYPICAL * typical
        err = np.abs(np.where(finite_w & finite_g, g - w, 0))
        return ok & (err <= allowed)


def _eval_each(program, args, visit):
    """``program`` on the interpreter, equation by equation, each value an equation makes
    passed through ``visit(eqn, its inputs, value)`` before it is read."""
    env = dict(zip(program.invars, args))
    env.update(program.consts)

    def read(v):
        return v.value if type(v) is Literal else env[v]
    for eqn in program.eqns:
        ins = [read(v) for v in eqn.invars]
        out = eqn.prim.impl(*ins, **eqn.params)
        outs = out if eqn.prim.multiple_results else [out]
        for v, x in zip(eqn.outvars, outs):
            env[v] = visit(eqn, ins, x)
    return [read(v) for v in program.outvars]


# sums of many terms (and products of many factors), whose rounding depends on the order
# of the terms: NumPy adds pairwise along a contiguous axis, one by one along another
SUMS = ("reduce_sum", "cumsum", "dot_general")
PRODUCTS = ("reduce_prod", "cumprod")


# primitives that move, pick or convert values (correctly rounded wherever it runs) and
# round nothing: moving their outputs would break identities a program relies on (the
# maximum broadcast back equals the element it came from)
EXACT = frozenset([
    "broadcast_in_dim", "concatenate", "pad", "reshape", "rev", "slice", "transpose",
    "dynamic_slice", "dynamic_update_slice", "gather", "scatter", "argmax", "argmin",
    "cummax", "cummin", "reduce_max", "reduce_min", "sort", "copy", "select", "max", "min",
    "neg", "abs", "real", "imag", "conj", "complex", "convert_element_type", "clamp",
    "stop_gradient", "sign", "floor", "ceil", "round", "copysign"])


def _rounded(eqn, ins, x, rng):
    """``x``, made by ``eqn`` from ``ins``, moved by what rounding may: a few ulps, or for
    a sum of ``n`` terms ``sqrt(n)`` ulps of the sum of the terms' magnitudes (the typical
    error of adding them in another order)."""
    if not _inexact(x) or eqn.prim.name in EXACT:
        return x
    if eqn.prim.name not in SUMS + PRODUCTS:
        return _perturbed([x], rng)[0]
    x = np.asarray(x)
    terms = max([np.size(a) for a in ins if np.ndim(a)] or [1])
    ulps = np.finfo(x.dtype).eps * np.sqrt(terms)
    noise = np.real(_random_like(x, rng)).astype(x.real.dtype)
    if eqn.prim.name in PRODUCTS:
        # (in another order the partial products may pass the range on the way, where
        # the factors below 1 alone underflow, or those above 1 overflow)
        ends = [eqn.prim.impl(*[bound(np.abs(a), 1.0) for a in ins], **eqn.params)
                for bound in (np.minimum, np.maximum)]
        return np.where(ends[0] == 0, 0, np.where(np.isinf(ends[1]), np.inf, 1)
                        * x * (1 + ulps * noise)).astype(x.dtype)
    magnitude = eqn.prim.impl(*[np.abs(a) for a in ins], **eqn.params)
    return (x + ulps * magnitude * noise).astype(x.dtype)


# how many times the reference is computed moved: at each place, the farthest counts
MOVED_SAMPLES = 4


def moved_reference(program, args, want):
    """The reference at inputs moved by a few ulps, each intermediate value too (NaN where
    that raises: a matrix made singular), ``MOVED_SAMPLES`` times: at each place, the
    value farthest from ``want`` (a predicate near its threshold tips one way or the
    other)."""
    farthest = None
    for seed in range(1, MOVED_SAMPLES + 1):
        rng = np.random.default_rng(seed)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                # (each value an equation makes is moved too: a kernel that computes it
                # in another order, or in wider registers, may round it differently)
                sample = _eval_each(program, _perturbed(args, rng),
                                    lambda eqn, ins, x: _rounded(eqn, ins, x, rng))
            except (TfNumbaError, np.linalg.LinAlgError):
                return [np.full(np.shape(w), np.nan, np.asarray(w).dtype) for w in want]
            sample = [np.asarray(m) for m in sample]
            if farthest is None:
                farthest = sample
                continue
            for k, (w, m) in enumerate(zip(want, sample)):
                w, f = np.asarray(w), farthest[k]
                if _inexact(w):     # (a NaN is the farthest of all)
                    further = np.nan_to_num(np.abs(m - w), nan=np.inf) > np.nan_to_num(
                        np.abs(f - w), nan=np.inf)
                else:
                    further = m != w
                farthest[k] = np.where(further, m, f)
    return farthest


# ------------------------------------------------------------------------------ runs

class Run:
    """A program ready to check: ``f``, its inputs, and the reference: the traced program
    on the interpreter (``want``, or the ``TfNumbaError`` it raised, ``error``)."""

    def __init__(self, program):
        from tf_numba.core.interpreter import eval_program
        self.program = program
        self.f = program.function()
        self.args = program.make_inputs()
        self.error = None
        check = ("from tf_numba.core.interpreter import eval_program\n"
                 "print(eval_program(tf.make_program(f)(*args), args))\n")
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                self.traced = tf.make_program(self.f)(*self.args)
            except Exception as err:        # noqa: BLE001 - it traced when it was drawn
                raise Finding("trace", f"tracing raised {type(err).__name__}: {err}",
                              program, check) from err
            try:
                self.want = eval_program(self.traced, list(self.args))
            except TfNumbaError as err:
                self.want, self.error = None, err
            except np.linalg.LinAlgError as err:     # a singular matrix: NumPy's error
                self.want, self.error = None, err
            except Exception as err:        # noqa: BLE001 - anything else is a finding
                raise Finding("crash", f"the interpreter raised {type(err).__name__}: "
                              f"{err}", program, check) from err
        self._moved = None

    @property
    def rtol(self):
        return RTOL["float32" if self.program.single_precision else "float64"]

    @property
    def moved(self):
        """The reference with its inputs and every value it computes moved by a few ulps
        (its conditioning: what rounding in another order may change)."""
        if self._moved is None:
            self._moved = moved_reference(self.traced, self.args, self.want)
        return self._moved

    def expect(self, kind, got, check, exact=False, want=None, moved=None):
        """``moved()``: ``want`` computed with its inputs and intermediates moved by a few
        ulps (by default the reference's, when ``want`` is the reference), asked for only
        when ``got`` differs from ``want`` by more than ``rtol``."""
        if want is None:
            want, moved = self.want, lambda: self.moved
        problem = difference(got, want, exact=exact, rtol=self.rtol)
        if problem and not exact and moved is not None:
            problem = difference(got, want, moved(), rtol=self.rtol)
        if problem:
            raise Finding(kind, problem, self.program, check)
        return 1

    def call(self, kind, fn, args, check, singular_ok=False):
        """``fn(*args)``; an error where the reference raised none (or none where it
        did), or an exception that is not tf_numba's, is a finding. ``singular_ok``: a
        derivative may solve with a matrix that is singular where the values need not
        (the R of a rank-deficient QR): its LinAlgError gives None."""
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                out = fn(*args)
            except (TfNumbaError, np.linalg.LinAlgError) as err:
                if singular_ok and isinstance(err, np.linalg.LinAlgError):
                    return None
                if self.error is None:
                    raise Finding(kind, f"raised {type(err).__name__} where the interpreter "
                                  f"returned: {err}", self.program, check) from err
                return None
            except Exception as err:   # noqa: BLE001 - anything else is a finding
                raise Finding(kind, f"raised {type(err).__name__}: {err}", self.program,
                              check) from err
        if self.error is not None:
            raise Finding(kind, f"returned where the interpreter raised "
                          f"{type(self.error).__name__}: {self.error}", self.program, check)
        return _leaves(out)


def _inexact(a):
    return np.asarray(a).dtype.kind in "fc"


# ------------------------------------------------------------------------------ oracles

CHECK_JIT = """\
want = f(*args)
got = tf.jit(f, tiered=False)(*args)
for g, w in zip(got if isinstance(got, tuple) else [got],
                want if isinstance(want, tuple) else [want]):
    np.testing.assert_allclose(g, w, rtol={rtol}, equal_nan=True)
"""


# Narrow dtypes, which tf_numba gives as NumPy 2 does (bool // bool is int8) but whose
# values the eager call (NumPy's own operators between NumPy arrays) may round otherwise
# (float16 ufuncs in float32, rounded once): compared after widening, loosely
_NUMPY_NARROW = {"float16": "float32", "int8": "int64", "int16": "int64", "uint8": "int64"}


def _widened(values, narrow):
    with np.errstate(all="ignore"):
        return [np.asarray(x).astype(_NUMPY_NARROW.get(np.asarray(x).dtype.name,
                                                       np.asarray(x).dtype))
                if n else x for x, n in zip(values, narrow)]


def traced(run):
    """``f`` called eagerly (tnp on NumPy arrays; NumPy's own operators between them) and
    the tiered plan's interpreted tier equal the traced program on the interpreter."""
    from tf_numba.runtime import CpuEngine, Runtime
    from tf_numba.transforms.simplify import simplify
    check = ("from tf_numba.core.interpreter import eval_program\n"
             "print(f(*args), eval_program(tf.make_program(f)(*args), args))\n")
    eager = run.call("eager", run.f, run.args, check)
    if eager is None:
        return 0
    narrow = [np.asarray(e).dtype.name in _NUMPY_NARROW for e in eager]
    if any(narrow):
        got, expected = ([np.asarray(x).dtype.name for x in xs] for xs in (eager, run.want))
        if got != expected:
            raise Finding("eager", f"dtypes {got}, expected {expected}", run.program, check)
        eager, want = _widened(eager, narrow), _widened(run.want, narrow)
        problem = difference(eager, want, rtol=1e-2)
        if problem and not _unstable(run.want):
            raise Finding("eager", problem, run.program, check)
        n = 1
    else:
        n = run.expect("eager", eager, check)
    prepared = Runtime(tiered=True).prepare(simplify(run.traced), run.args,
                                            [CpuEngine.TARGET])
    check = ("from tf_numba.runtime import CpuEngine, Runtime\n"
             "from tf_numba.transforms.simplify import simplify\n"
             "from tf_numba.core.interpreter import eval_program\n"
             "program = tf.make_program(f)(*args)\n"
             "plan = Runtime(tiered=True).prepare(simplify(program), args, "
             "[CpuEngine.TARGET]).plan\n"
             "print(plan.interpret(list(args)), eval_program(program, args))\n")
    outs = run.call("interpreted-tier", lambda *a: prepared.plan.interpret(list(a)),
                    run.args, check)
    if outs is None:
        return n
    return n + run.expect("interpreted-tier", outs, check)


def compiled(run, threads=(1, 2)):
    """``jit(f, tiered=False)`` on each of ``threads`` equals the reference; the widths
    equal each other bit for bit."""
    from tf_numba.runtime import CpuEngine
    n, first = 0, None
    for width in threads:
        engine = CpuEngine(threads=width)
        check = ("from tf_numba.runtime import CpuEngine\n"
                 f"got = tf.jit(f, tiered=False, engine=CpuEngine(threads={width}))(*args)\n"
                 "print(got, f(*args))\n")
        outs = run.call("compiled", tf.jit(run.f, tiered=False, engine=engine), run.args,
                        check)
        if outs is None:
            return n
        if first is None:
            n += run.expect("compiled", outs, check)
            first = outs
        else:
            check = ("from tf_numba.runtime import CpuEngine\n"
                     "one = tf.jit(f, tiered=False)(*args)\n"
                     f"two = tf.jit(f, tiered=False, engine=CpuEngine(threads={width}))(*args)"
                     "\nprint(one, two)\n")
            # (kernels give the same bits on any number of threads; OpenBLAS and LAPACK
            # split their work by the threads they have, and round as it is split)
            if any(op.startswith(LIBRARY) for op in run.program.ops):
                problem = difference(outs, first, rtol=run.rtol, normwise=True)
                if problem:
                    raise Finding("threads", problem, run.program, check)
                n += 1
            else:
                n += run.expect("threads", outs, check, exact=True, want=first)
    return n


# families that call BLAS or LAPACK
LIBRARY = ("contract:", "linalg:")


def tiered(run, threads=(1, 2)):
    """The default (tiered) jit on each of ``threads``: its first call, interpreted, equals
    the reference; once compiled it equals ``jit(tiered=False)`` bit for bit."""
    from tf_numba.runtime import CpuEngine
    n = 0
    for width in threads:
        engine = f"engine=CpuEngine(threads={width})"
        jitted = tf.jit(run.f, engine=CpuEngine(threads=width))
        check = (f"from tf_numba.runtime import CpuEngine\njitted = tf.jit(f, {engine})\n"
                 "first = jitted(*args)\nprint(first, f(*args))\n")
        outs = run.call("tiered", jitted, run.args, check)
        if outs is None:
            return n
        n += run.expect("tiered", outs, check)
        jitted.lower(*run.args).compile(*run.args)
        outs = run.call("tiered", jitted, run.args, check)
        check = (f"from tf_numba.runtime import CpuEngine\njitted = tf.jit(f, {engine})\n"
                 "jitted(*args)\njitted.lower(*args).compile(*args)\n"
                 f"print(jitted(*args), tf.jit(f, tiered=False, {engine})(*args))\n")
        exact = run.call("tiered", tf.jit(run.f, tiered=False, engine=CpuEngine(threads=width)),
                         run.args, check)
        n += run.expect("tiered", outs, check, exact=True, want=exact)
    return n


def _stack(outs_per_example):
    return [np.stack(parts) for parts in zip(*outs_per_example)]


VMAP_BATCH = """\
r = np.random.default_rng({seed})
in_axes = {axes}
# the batch: the inputs, then {more} shuffled copies, stacked along in_axes
def shuffled(a):
    return r.permutation(np.array(a).ravel()).reshape(np.shape(a)).astype(np.asarray(a).dtype)
examples = [list(args)] + [[a if ax is None else shuffled(a) for a, ax in zip(args, in_axes)]
                           for _ in range({more})]
batched = [a if ax is None else np.stack([e[i] for e in examples], axis=ax)
           for i, (a, ax) in enumerate(zip(args, in_axes))]
"""


def vmap(run, rng):
    """``vmap(f, in_axes)`` over a batch of shuffled copies equals the traced program
    run on each copy by the interpreter."""
    from tf_numba.core.interpreter import eval_program
    if run.error is not None:
        return 0
    size = int(rng.integers(1, 4))
    axes = []
    for a in run.args:
        ndim = np.ndim(a)
        axes.append(None if rng.random() < (0.3 if ndim else 0.5)
                    else int(rng.integers(-ndim - 1, ndim + 1)))
    if all(x is None for x in axes):
        return 0
    seed = int(rng.integers(2**31))
    setup = VMAP_BATCH.format(seed=seed, axes=tuple(axes), more=size - 1)
    namespace = {"np": np, "args": list(run.args)}
    exec(setup, namespace)
    examples, batched = namespace["examples"], namespace["batched"]
    check = setup + ("print(tf.vmap(f, in_axes=in_axes)(*batched))\n"
                     "print([f(*e) for e in examples])\n")
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            loop = [eval_program(run.traced, list(e)) for e in examples]
    except (TfNumbaError, np.linalg.LinAlgError):
        return 0                # a shuffled copy that f rejects: nothing to compare
    outs = run.call("vmap", tf.vmap(run.f, in_axes=tuple(axes)), batched, check)
    if outs is None:
        return 0
    return run.expect("vmap", outs, check, want=_stack(loop), moved=lambda: _stack(
        [moved_reference(run.traced, e, w) for e, w in zip(examples, loop)]))


def _differentiable(run):
    """(positions of the inexact inputs, positions of the inexact outputs), or None when
    there is nothing to differentiate or the reference is not finite."""
    if run.error is not None or any(i.values == "special" for i in run.program.inputs):
        return None
    ins = [i for i, a in enumerate(run.args) if _inexact(a)]
    outs = [k for k, w in enumerate(run.want) if _inexact(w)]
    if not ins or not outs:
        return None
    if not all(np.isfinite(np.asarray(run.args[i])).all() for i in ins):
        return None
    if not all(np.isfinite(np.asarray(run.want[k])).all() for k in outs):
        return None
    return ins, outs


def _substituted(args, ins, xs):
    """``args`` with those at positions ``ins`` replaced by ``xs``."""
    full = list(args)
    for i, x in zip(ins, xs):
        full[i] = x
    return full


def _restricted(run, ins, outs):
    """``g(*inexact inputs) -> tuple of inexact outputs``, the rest held fixed."""
    def g(*xs):
        res = _leaves(run.f(*_substituted(run.args, ins, xs)))
        return tuple(res[k] for k in outs)
    return g


def _random_like(a, rng):
    a = np.asarray(a)
    r = rng.standard_normal(a.shape)
    if a.dtype.kind == "c":
        r = r + 1j * rng.standard_normal(a.shape)
    return r.astype(a.dtype)


def _pair(a, b):
    """The real inner product ``Re(sum(a * b))`` (JAX's: cotangents pair by transposition,
    not conjugation)."""
    return float(np.real(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128))))


def _magnitude(a, b):
    return float(np.sum(np.abs(np.asarray(a, np.complex128) * np.asarray(b, np.complex128))))


JITTER = 1e-3
AD_RTOL = {"float64": 1e-9, "complex128": 1e-9, "float32": 2e-3, "complex64": 2e-3}

CHECK_AD = """\
ins, outs = {ins}, {outs}   # the inexact inputs and outputs
def restricted(fn):     # fn of the inexact inputs, to its inexact outputs
    def g(*xs):
        full = list(args)
        for i, x in zip(ins, xs):
            full[i] = x
        res = fn(*full)
        res = list(res) if isinstance(res, tuple) else [res]
        return tuple(res[k] for k in outs)
    return g
g = restricted(f)
primals = [args[i] for i in ins]
r = np.random.default_rng({seed})
"""


def transpose(run, rng):
    """``<u, J v> == <J^T u, v>``: vjp is the transpose of jvp's linear map."""
    found = _differentiable(run)
    if found is None:
        return 0
    ins, outs = found
    g = _restricted(run, ins, outs)
    seed = int(rng.integers(2**31))
    r = np.random.default_rng(seed)
    primals = [run.args[i] for i in ins]
    tangents = [_random_like(p, r) for p in primals]
    check = CHECK_AD.format(ins=ins, outs=outs, seed=seed) + textwrap.dedent("""\
        def like(a):
            x = r.standard_normal(np.shape(a))
            x = x + 1j * r.standard_normal(np.shape(a)) if np.iscomplexobj(a) else x
            return x.astype(np.asarray(a).dtype)
        tangents = [like(p) for p in primals]
        _, jv = tf.jvp(g, tuple(primals), tuple(tangents))
        cot = tuple(like(o) for o in g(*primals))
        _, pullback = tf.vjp(g, *primals)
        jtu = pullback(cot)
        def pair(a, b):
            return sum(np.real(np.sum(np.asarray(x, complex) * np.asarray(y, complex)))
                       for x, y in zip(a, b))
        print(pair(cot, jv), pair(jtu, tangents))
        """)
    jv = run.call("transpose", lambda *p: tf.jvp(g, tuple(p), tuple(tangents))[1], primals,
                  check, singular_ok=True)
    if jv is None:
        return 0
    cot = tuple(_random_like(run.want[k], r) for k in outs)
    pulled = run.call("transpose", lambda *p: tf.vjp(g, *p)[1](cot), primals, check,
                      singular_ok=True)
    if pulled is None:
        return 0
    if len(pulled) != len(primals):
        raise Finding("transpose", f"vjp gave {len(pulled)} cotangents for {len(primals)} "
                      "inputs", run.program, check)
    for p, c in zip(primals, pulled):
        if np.shape(c) != np.shape(p) or np.asarray(c).dtype != np.asarray(p).dtype:
            raise Finding("transpose", f"a cotangent of {np.asarray(c).dtype}"
                          f"{list(np.shape(c))} for an input of {np.asarray(p).dtype}"
                          f"{list(np.shape(p))}", run.program, check)
    for w, t in zip([run.want[k] for k in outs], jv):
        if np.shape(t) != np.shape(w) or np.asarray(t).dtype != np.asarray(w).dtype:
            raise Finding("transpose", f"a tangent of {np.asarray(t).dtype}"
                          f"{list(np.shape(t))} for an output of {np.asarray(w).dtype}"
                          f"{list(np.shape(w))}", run.program, check)
    left = sum(_pair(u, v) for u, v in zip(cot, jv))
    right = sum(_pair(c, t) for c, t in zip(pulled, tangents))
    scale = sum(_magnitude(u, v) for u, v in zip(cot, jv)) + sum(
        _magnitude(c, t) for c, t in zip(pulled, tangents))
    if not (np.isfinite(left) and np.isfinite(right)):
        return 0
    rtol = AD_RTOL["float32" if run.program.single_precision else "float64"]
    # (a Jacobian that cancels to about zero leaves rounding of the size of its terms,
    # which the pairings do not show: |u| |v| sqrt(eps) of it is let pass)
    eps = np.finfo(np.float32 if run.program.single_precision else np.float64).eps
    floor = np.sqrt(eps * sum(_magnitude(u, u) for u in cot)
                    * sum(_magnitude(t, t) for t in tangents))
    if abs(left - right) > rtol * scale + floor + 1e-300:
        raise Finding("transpose", f"<u, J v> = {left!r} but <J^T u, v> = {right!r} "
                      f"(scale {scale:.3g})", run.program, check)
    return 1


# ops whose output reorders its input: values of a large array lie closer together than
# an ordinary step, so a step reorders them
ORDERING = ("gather:along", "reduce:median", "reduce:max", "reduce:min", "reduce:ptp",
            "reduce:nanmax", "reduce:argmax", "reduce:argmin")


# piecewise constant, with steps as close together as the argument is large (2 // x at
# small x): the derivative is 0, and differences over any step cross many of them
STEPS = {"binary://", "binary:%", "binary:floor_divide", "binary:remainder", "binary:fmod",
         "unary:floor", "unary:ceil", "unary:rint", "unary:trunc",
         "unary:sign"}      # (z / |z| for complex z, whose derivative JAX too calls 0)


# the ulps by which a program's values may be off (each step's rounding, carried through)
FD_ULPS = 64


def finite_differences(run, rng):
    """``J v`` from jvp equals central differences of ``f`` (float64 programs), where the
    differences at two step sizes agree (a kink between them is skipped)."""
    found = _differentiable(run)
    if found is None or run.program.ops & STEPS:
        return 0
    step = 1e-8 if run.program.ops & set(ORDERING) else 1e-6
    ins, outs = found
    if run.program.single_precision:
        return 0
    g = _restricted(run, ins, outs)
    seed = int(rng.integers(2**31))
    r = np.random.default_rng(seed)
    # moved off the ties of equal inputs (a broadcast input's copies): a maximum there is
    # not differentiable, and two step sizes agree on the wrong slope; the move is far
    # larger than the steps
    primals = [np.asarray(run.args[i]) + JITTER * np.real(_random_like(run.args[i], r))
               for i in ins]
    tangents = [_random_like(p, r) for p in primals]
    check = CHECK_AD.format(ins=ins, outs=outs, seed=seed) + textwrap.dedent(f"""\
        def like(a):
            x = r.standard_normal(np.shape(a))
            x = x + 1j * r.standard_normal(np.shape(a)) if np.iscomplexobj(a) else x
            return x.astype(np.asarray(a).dtype)
        primals = [p + {JITTER} * np.real(like(p)) for p in primals]
        tangents = [like(p) for p in primals]
        _, jv = tf.jvp(g, tuple(primals), tuple(tangents))
        h = {step}
        plus = g(*[p + h * t for p, t in zip(primals, tangents)])
        minus = g(*[p - h * t for p, t in zip(primals, tangents)])
        print(jv, [(a - b) / (2 * h) for a, b in zip(plus, minus)])
        """)
    jv = run.call("finite-differences",
                  lambda *p: tf.jvp(g, tuple(p), tuple(tangents))[1], primals, check,
                  singular_ok=True)
    if jv is None:
        return 0

    def central(h):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                plus = g(*[p + h * t for p, t in zip(primals, tangents)])
                minus = g(*[p - h * t for p, t in zip(primals, tangents)])
            except (TfNumbaError, np.linalg.LinAlgError):
                return None
            # (what rounding the values by a few ulps, through the program, does to the
            # quotient: a derivative far below the values' own size is lost in it; LAPACK
            # rounds to the size of the matrix, so to the largest value of an output)
            return [((np.asarray(a) - np.asarray(b)) / (2 * h),
                     FD_ULPS * np.finfo(np.float64).eps * sizes(np.abs(a) + np.abs(b))
                     / (2 * h), (np.abs(a) + np.abs(b)) / 2) for a, b in zip(plus, minus)]

    normwise = any(op.startswith("linalg:") for op in run.program.ops)

    def sizes(x):
        finite = x[np.isfinite(x)]
        return np.full_like(x, finite.max()) if normwise and finite.size else x
    wide, narrow = central(step), central(step / 4)
    if wide is None or narrow is None:
        return 0
    n = 0
    for k, (t, (d1, _, _), (d2, rounding, size)) in enumerate(zip(jv, wide, narrow)):
        t = np.asarray(t)
        with np.errstate(all="ignore"):
            scale = np.abs(d1) + np.abs(d2) + 1e-3 * (np.abs(d2).max() if d2.size else 0) \
                + 1e-6
            tol = 1e-4 * scale + rounding
            smooth = np.abs(d1 - d2) <= tol
            # (a step that moves a value by more than its size, cos(exp(x y)) at
            # exp(x y) = 1e7, differences no slope: the two sizes may agree by chance)
            resolved = step * np.abs(t) <= size + 1
            ok = (np.abs(t - d1) <= tol) | (np.abs(t - d2) <= tol) | ~smooth | ~resolved \
                | ~np.isfinite(d1) | ~np.isfinite(d2)
        if not ok.all() and _infinities(tf.make_program(
                lambda *p: tf.jvp(g, p, tuple(tangents))[1])(*primals), primals):
            # (a tangent through an infinite value or derivative is 0 * inf, NaN, in JAX
            # as here: 0 ** y at y < 0, cbrt at relu's 0; the differences of a constant
            # are 0)
            ok |= np.isnan(t)
        if not ok.all():
            at = tuple(np.argwhere(~ok)[0])
            raise Finding("finite-differences",
                          f"output {k}: jvp {t[at]!r} but central differences "
                          f"{d1[at]!r} (h={step}) and {d2[at]!r} (h={step / 4})",
                          run.program, check)
        n += 1
    return n


class _Loss:
    """``loss(*xs) = sum(Re(out) * u)`` over the inexact outputs (``u`` drawn from
    ``seed``, as ``CHECK_AD``'s scripts draw it), a function of the inexact inputs."""

    def __init__(self, run, found, rng):
        self.ins, self.outs = found
        self.g = _restricted(run, *found)
        self.seed = int(rng.integers(2**31))
        r = np.random.default_rng(self.seed)
        self.cot = [r.standard_normal(np.shape(run.want[k])) for k in self.outs]
        self.primals = [run.args[i] for i in self.ins]
        self.argnums = tuple(range(len(self.ins)))

    def __call__(self, *xs):
        return sum(tf.numpy.sum(tf.numpy.real(o) * u) for o, u in zip(self.g(*xs), self.cot))


def grad_jit(run, rng):
    """``jit(grad(loss)) == grad(jit(loss))`` for ``loss = sum(Re(out) * u)``, both equal to
    the un-jitted ``grad(loss)`` within what that moves at inputs moved by a few ulps."""
    found = _differentiable(run)
    if found is None:
        return 0
    loss = _Loss(run, found, rng)
    primals, argnums = loss.primals, loss.argnums
    check = CHECK_AD.format(ins=loss.ins, outs=loss.outs, seed=loss.seed) + textwrap.dedent("""\
        cot = [r.standard_normal(np.shape(o)) for o in g(*primals)]
        loss = lambda *xs: sum(tnp.sum(tnp.real(o) * u) for o, u in zip(g(*xs), cot))
        argnums = tuple(range(len(primals)))
        print(tf.jit(tf.grad(loss, argnums), tiered=False)(*primals))
        print(tf.grad(tf.jit(loss, tiered=False), argnums)(*primals))
        print(tf.grad(loss, argnums)(*primals))
        """)
    plain = tf.grad(loss, argnums)
    want = run.call("grad-jit", plain, primals, check, singular_ok=True)
    if want is None:
        return 0
    inner = run.call("grad-jit", tf.grad(tf.jit(loss, tiered=False), argnums), primals, check,
                     singular_ok=True)
    outer = run.call("grad-jit", tf.jit(plain, tiered=False), primals, check,
                     singular_ok=True)
    if inner is None or outer is None:
        return 0
    for got in (outer, inner):
        problem = difference(got, want, rtol=run.rtol) and difference(
            got, want, moved_reference(tf.make_program(plain)(*primals), primals, want),
            rtol=run.rtol)
        if problem:
            raise Finding("grad-jit", problem, run.program, check)
    return 1


def mixed(run, rng):
    """A plan of several kernels, run with some of them compiled and the others on the
    interpreter (a tiered plan's state while its kernels arrive: ``Tiers.run_checked``),
    equals the reference."""
    from tf_numba.lowering.segments import CompiledSegment
    from tf_numba.runtime import CpuEngine, Runtime
    from tf_numba.transforms.simplify import simplify
    if run.error is not None:
        return 0
    plan = Runtime(tiered=False).prepare(simplify(run.traced), run.args,
                                         [CpuEngine.TARGET]).plan
    kernels = [s for s in plan.segments if type(s) is CompiledSegment]
    if len(kernels) < 2:
        return 0
    chosen = [k for k in range(len(kernels)) if rng.random() < 0.5] or [0]
    if len(chosen) == len(kernels):
        chosen.pop()
    check = ("from tf_numba.lowering.segments import CompiledSegment\n"
             "from tf_numba.runtime import CpuEngine, Runtime\n"
             "from tf_numba.transforms.simplify import simplify\n"
             "program = simplify(tf.make_program(f)(*args))\n"
             "plan = Runtime(tiered=False).prepare(program, args, [CpuEngine.TARGET]).plan\n"
             "plan.run(list(args))     # compiles every kernel\n"
             "kernels = [s for s in plan.segments if type(s) is CompiledSegment]\n"
             f"compiled = [kernels[k] for k in {chosen}]   # the others interpreted\n"
             "print(plan._run_segments(list(args), lambda seg, a: seg(a) if seg in compiled "
             "else seg.evaluate(a)), f(*args))\n")
    whole = run.call("mixed", lambda *a: plan.run(list(a)), run.args, check)
    if whole is None:
        return 0
    run.expect("mixed", whole, check)
    compiled = [kernels[k] for k in chosen]
    outs = run.call("mixed", lambda *a: plan._run_segments(
        list(a), lambda seg, x: seg(x) if seg in compiled else seg.evaluate(x)),
        run.args, check)
    return 1 + run.expect("mixed", outs, check)


# ------------------------------------------------------------------------------ JAX

# JAX computes its transcendental functions its own way (XLA's), a few ulps from NumPy's
JAX_RTOL = {"float64": 1e-9, "complex128": 1e-9, "float32": 1e-4, "complex64": 1e-4}

CHECK_JAX = """\
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
class JaxNumpy:       # tnp as jax.numpy (tnp.at(x) is JAX's x.at)
    def __getattr__(self, name):
        return getattr(jnp, name)
    at = staticmethod(lambda x: x.at)
namespace = dict(np=np, tnp=JaxNumpy(), lax=jax.lax, tf=type("tf", (), dict(nn=jax.nn)))
exec({source!r}, namespace)   # f's source
jax_f = namespace["f"]
"""


class _JaxNumpy:
    """``tnp`` as ``jax.numpy``: a program's source run with this namespace is the same
    program in JAX (``tnp.at(x)`` is JAX's ``x.at``)."""

    def __init__(self, jnp):
        self._jnp = jnp

    def __getattr__(self, name):
        return getattr(self._jnp, name)

    @staticmethod
    def at(x):
        return x.at


@contextlib.contextmanager
def _jax_x64():
    """JAX with float64 (as tf_numba computes), set back as it was after."""
    import jax
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


def _jax_function(program, jax):
    """``f`` in JAX: its source with ``tnp``, ``lax`` and ``tf.nn`` taken from JAX."""
    import jax.numpy as jnp
    namespace = {"np": np, "tnp": _JaxNumpy(jnp), "lax": jax.lax,
                 "tf": type("tf", (), {"nn": jax.nn})}
    exec(compile(program.source(), "<random program in JAX>", "exec"), namespace)
    return namespace["f"]


# an integer divided by zero is 0 in NumPy (and tf_numba), -1 or the dividend in XLA; an
# integer's reciprocal is an integer in NumPy (1 // x), a float in JAX
INTEGER_DIVISION = {"binary://", "binary:%", "binary:floor_divide", "binary:remainder",
                    "binary:fmod", "unary:reciprocal"}
# a complex power of zero is 0 in NumPy (npy_cpow, and tf_numba) where the exponent's real
# part is positive, NaN in XLA
POWERS = {"binary:**", "binary:power", "binary:float_power"}


def _jax_rtol(run):
    """JAX computes a function of int32 or bool values in float32 (NumPy in float64)."""
    single = run.program.single_precision or run.program.dtypes & {"int32", "bool"}
    return JAX_RTOL["float32" if single else "float64"]


def _jax_comparable(run):
    """May JAX's values be compared with the reference? Not for a program whose random
    draws come from tf_numba's generator, nor one the interpreter rejected, nor one that
    may divide integers by zero, nor one that may raise a complex zero to a power."""
    program = run.program
    integers = any(d.startswith("int") or d == "bool" for d in program.dtypes)
    complex_ = any(d.startswith("complex") for d in program.dtypes)
    return run.error is None and not any(op.startswith("random:") for op in program.ops) \
        and not (integers and program.ops & INTEGER_DIVISION) \
        and not (complex_ and program.ops & POWERS)


def _jax_call(run, fn, args):
    """``fn(*args)`` in JAX, as NumPy arrays; None where JAX cannot run the program (a
    function or argument it does not have), or warns that it will not (a scatter of
    float64 updates into int32: JAX adds, then casts; tf_numba casts the updates)."""
    with warnings.catch_warnings(record=True) as said, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            outs = [np.asarray(o) for o in _leaves(fn(*args))]
        except Exception:       # noqa: BLE001 - JAX's limits are not tf_numba's findings
            return None
    if any(issubclass(w.category, (FutureWarning, DeprecationWarning)) for w in said):
        return None
    return outs


def jax_values(run, rng):
    """JAX (float64 enabled) computes the reference's values: dtypes, shapes, and values
    within ``JAX_RTOL`` and what the reference moves at inputs moved by a few ulps."""
    if not _jax_comparable(run):
        return 0
    try:
        import jax      # noqa: F401
    except ImportError:
        return 0
    check = CHECK_JAX.format(source=run.program.source()) + "print(jax_f(*args), f(*args))\n"
    with _jax_x64() as jax:
        got = _jax_call(run, _jax_function(run.program, jax), run.args)
    if got is None:
        return 0
    problem = _jax_difference(got, run.want, None, _jax_rtol(run)) and _jax_difference(
        got, run.want, run.moved, _jax_rtol(run))
    if problem and not _infinities(run.traced, run.args):
        raise Finding("jax-values", problem, run.program, check)
    return 1


def _infinities(program, args):
    """Does ``program`` make an infinite or NaN value on the way? Where it goes past
    them is a convention: C99's rules for complex ones (NumPy's; XLA's differ), and the
    order of a product (0 * 1e300 * 1e300 is 0 one way, NaN the other: JAX multiplies in
    a tree)."""
    seen = []

    def visit(eqn, ins, x):
        if _inexact(x) and not np.isfinite(x).all():
            seen.append(x)
        return x
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        _eval_each(program, args, visit)
    return bool(seen)


def _jax_difference(got, want, moved, rtol):
    """``difference`` of JAX's outputs from the reference, less JAX's conventions: an
    output JAX gives another dtype (JAX computes an int32's sine in float32, NumPy in
    float64) is not compared, nor values past the edge of their range in either (where
    one overflows to inf, the other may round below it)."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    moved = _leaves(moved) if moved is not None else [None] * len(want)
    kept = [(g, w, m) for g, w, m in zip(got, want, moved)
            if np.shape(g) != np.shape(w) or np.asarray(g).dtype == np.asarray(w).dtype]
    if not kept:
        return None
    got, want, moved = (list(x) for x in zip(*kept))
    for k, (g, w) in enumerate(zip(got, want)):
        if np.shape(g) == np.shape(w) and _inexact(w):
            with np.errstate(all="ignore"):
                edge = np.finfo(np.asarray(w).dtype).max / 1e4
                past = ((np.abs(g) > edge) | np.isnan(g)) & ((np.abs(w) > edge) | np.isnan(w))
            got[k] = np.where(past, w, g)
    return difference(got, want, moved, rtol=rtol, normwise=True)


def jax_grads(run, rng):
    """``grad`` of ``loss = sum(Re(out) * u)`` equals JAX's (float64 programs). Where they
    differ, central differences of the loss along the difference decide: a point where
    they are not smooth (a kink, whose derivative is a convention) is passed over, and
    one where they side with JAX is a finding."""
    found = _differentiable(run)
    if found is None or not _jax_comparable(run) or run.program.single_precision:
        return 0
    try:
        import jax      # noqa: F401
    except ImportError:
        return 0
    loss = _Loss(run, found, rng)
    ins, outs, cot = loss.ins, loss.outs, loss.cot
    primals, argnums = loss.primals, loss.argnums
    check = (CHECK_JAX.format(source=run.program.source())
             + CHECK_AD.format(ins=ins, outs=outs, seed=loss.seed)
             + textwrap.dedent("""\
        cot = [r.standard_normal(np.shape(o)) for o in g(*primals)]
        jax_g = restricted(jax_f)
        loss = lambda *xs: sum(tnp.sum(tnp.real(o) * u) for o, u in zip(g(*xs), cot))
        jax_loss = lambda *xs: sum(jnp.sum(jnp.real(o) * u) for o, u in zip(jax_g(*xs), cot))
        argnums = tuple(range(len(primals)))
        print(tf.grad(loss, argnums)(*primals))
        print(jax.grad(jax_loss, argnums)(*[jnp.asarray(p) for p in primals]))
        """))
    ours = run.call("jax-grads", tf.grad(loss, argnums), primals, check,
                    singular_ok=True)
    if ours is None:
        return 0
    with _jax_x64() as jax:
        import jax.numpy as jnp
        jax_f = _jax_function(run.program, jax)

        def jax_loss(*xs):
            full = list(run.args)
            for i, x in zip(ins, xs):
                full[i] = x
            res = _leaves(jax_f(*full))
            return sum(jnp.sum(jnp.real(res[k]) * u) for k, u in zip(outs, cot))
        theirs = _jax_call(run, jax.grad(jax_loss, argnums),
                           [jnp.asarray(p) for p in primals])
    if theirs is None:
        return 0
    if _jax_difference(ours, theirs, None, _jax_rtol(run)) is None:
        return 1
    # the difference's direction d (conjugated: the pairing is Re(sum(g * d)))
    d = [np.conj(np.asarray(a) - np.asarray(b)) for a, b in zip(ours, theirs)]
    size = np.sqrt(sum(_magnitude(x, x) for x in d))
    if not np.isfinite(size) or size == 0:
        raise Finding("jax-grads", _jax_difference(ours, theirs, None, _jax_rtol(run)),
                      run.program, check)
    d = [x / size for x in d]
    slopes = []
    for h in (1e-6, 2.5e-7):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            up = loss(*[p + h * x for p, x in zip(primals, d)])
            down = loss(*[p - h * x for p, x in zip(primals, d)])
        slopes.append(float(np.real(up - down)) / (2 * h))
    mine = sum(_pair(a, x) for a, x in zip(ours, d))
    jaxs = sum(_pair(b, x) for b, x in zip(theirs, d))
    scale = abs(mine) + abs(jaxs) + 1e-8 * sum(_magnitude(a, a) for a in ours) ** 0.5
    smooth = abs(slopes[0] - slopes[1]) <= 1e-4 * scale
    if smooth and abs(slopes[1] - jaxs) < abs(slopes[1] - mine):
        problem = _jax_difference(ours, theirs, None, _jax_rtol(run))
        raise Finding("jax-grads", f"{problem}; along their difference, the slope is "
                      f"{mine!r} by grad, {jaxs!r} by JAX, {slopes[1]!r} by central "
                      "differences", run.program, check)
    return 1


def bad_inputs(run, rng, jit=False):
    """Inputs that do not fit: each gives a TfNumbaError or values that the traced and
    the eager call agree on; no other exception."""
    args = [np.asarray(a) for a in run.args]
    if not args:
        return 0
    program = run.program
    # (what, which input, an expression of that input ``a`` that makes the bad one)
    mutants = []
    k = int(rng.integers(len(args)))
    a = args[k]
    mutants.append(("a leading axis", k, "np.stack([a, a])"))
    if a.ndim:
        axis = int(rng.integers(a.ndim))
        mutants.append((f"axis {axis} one longer", k,
                        f"np.concatenate([a, a.take([0], axis={axis})], axis={axis})"
                        if a.shape[axis] else
                        f"np.ones(a.shape[:{axis}] + (2,) + a.shape[{axis + 1}:], a.dtype)"))
        mutants.append(("one axis fewer", k,
                        "a[0]" if a.shape[0] else "np.zeros(a.shape[1:], a.dtype)"))
    if a.dtype.kind == "f":
        mutants.append(("float16", k, "a.astype(np.float16)"))
    live = _live_inputs(run)
    for k, (spec, x) in enumerate(zip(program.inputs, args)):
        # (an index that no output depends on is not read: a dead gather is left out)
        if spec.index_bound is not None and x.size and k in live:
            at = int(rng.integers(x.size))
            value = rng.choice([spec.index_bound, -spec.index_bound - 1, 10**9])
            mutants.append(("an index out of range", k,
                            f"np.where(np.arange(a.size).reshape(a.shape) == {at}, {value}, "
                            "a).astype(a.dtype)"))
    n = 0
    for what, i, code in mutants:
        mutated = list(run.args)
        with np.errstate(all="ignore"):
            mutated[i] = eval(code, {"np": np, "a": args[i]})
        check = (f"a = np.asarray(args[{i}])\nargs[{i}] = {code}   # {what}\n"
                 "print(f(*args))\nprint(tf.make_program(f)(*args))\n")
        n += _one_bad_input(run, mutated, what, check, jit)
    return n


def _live_inputs(run):
    """Positions of the inputs that a gather or scatter of the simplified program reads
    as indices (through any steps between): an index that only dead code reads, or that
    is read only as a number, need not be in range."""
    from tf_numba.core.ir import Var
    from tf_numba.transforms.simplify import simplify
    program = simplify(run.traced)
    index_of = {}       # a value -> the inputs it is made from
    for k, v in enumerate(program.invars):
        index_of[v] = {k}
    live = set()
    for eqn in program.eqns:
        sources = [index_of.get(v, set()) if type(v) is Var else set() for v in eqn.invars]
        made = set().union(*sources)
        for v in eqn.outvars:
            index_of[v] = made
        if eqn.prim.name.startswith(("gather", "scatter")):
            live |= sources[1]          # (operand, indices[, updates])
    return live


def _elements_made(program, trips=1):
    """The most elements one step of ``program`` makes, a loop body's steps counted once
    per trip (a symbolic length counts 1)."""
    from tf_numba.core.ir import Program
    most = 0
    for eqn in program.eqns:
        for v in eqn.outvars:
            most = max(most, trips * math.prod(d for d in v.aval.shape if type(d) is int))
        length = eqn.params.get("length")
        inner = trips * (length if type(length) is int else 1)
        for param in eqn.params.values():
            for sub in param if type(param) is tuple else (param,):
                if isinstance(sub, Program):
                    most = max(most, _elements_made(sub, inner))
    return most


def _one_bad_input(run, mutated, what, check, jit):
    from random_programs import MAX_ELEMENTS
    from tf_numba.runtime import CpuEngine, Runtime
    try:
        program = tf.make_program(run.f)(*[tf.ShapeDtype(np.shape(a), np.asarray(a).dtype)
                                           for a in mutated])
    except Exception:       # noqa: BLE001 - the calls below say what it is
        program = None
    # (an outer product of a longer input is longer squared; a scan over a row of 70000
    # instead of 2 rows, each step 70000 elements, makes 70000^2 of them)
    if program is not None and _elements_made(program) > 4 * MAX_ELEMENTS:
        return 0

    def traced():
        program = tf.make_program(run.f)(*mutated)
        leaves = [np.asarray(x) for x in tf.tree_util.tree_leaves(mutated)]
        prepared = Runtime(tiered=True).prepare(program, leaves, [CpuEngine.TARGET])
        return prepared.plan.interpret(leaves)
    calls = [("traced", traced), ("eager", lambda: run.f(*mutated))]
    if jit:
        calls.append(("compiled", lambda: tf.jit(run.f, tiered=False)(*mutated)))
    results = {}
    for name, call in calls:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                results[name] = _leaves(call())
            except (TfNumbaError, np.linalg.LinAlgError, MemoryError) as err:
                # (a shape changed may ask for more than there is: tril of a long row is
                # a square)
                results[name] = err
            except Exception as err:     # noqa: BLE001
                if name == "eager":
                    # NumPy's own operators run on NumPy arrays in the eager call: their
                    # errors are NumPy's to give
                    results[name] = err
                    continue
                raise Finding("bad-input", f"{what}: the {name} call raised "
                              f"{type(err).__name__}: {err}", run.program, check) from err
    values = {k: v for k, v in results.items() if not isinstance(v, Exception)}
    if what == "an index out of range":
        for name in values:
            raise Finding("bad-input", f"{what}: the {name} call returned", run.program,
                          check)
    # (the eager call computes float16 and int8 as NumPy does: compared where it is not)
    eager = values.get("eager")
    if eager is not None and (what == "float16" or any(
            np.asarray(e).dtype.name in _NUMPY_NARROW for e in eager)):
        del values["eager"]
    if len(values) >= 2:
        (n0, v0), *others = values.items()
        for name, v in others:
            # (normwise: a matmul's terms that cancel leave rounding of their size; and
            # what the mutant's values move at inputs moved by a few ulps: a variance of
            # equal rows is rounding alone)
            problem = difference(v, v0, rtol=run.rtol, normwise=True)
            if problem and program is not None:
                moved = moved_reference(program, [np.asarray(a) for a in mutated], v0)
                problem = difference(v, v0, moved, rtol=run.rtol, normwise=True)
            if problem and not _unstable(v0):
                raise Finding("bad-input", f"{what}: {name} and {n0} differ: {problem}",
                              run.program, check)
    return 1


def _unstable(values):
    """Outputs with NaN or inf (whose neighbours a changed shape moves): compared loosely."""
    return any(_inexact(v) and not np.isfinite(np.asarray(v)).all() for v in values)


INTERPRETED = ("traced", "vmap", "transpose", "finite_differences", "bad_inputs")
REFERENCES = ("jax_values", "jax_grads")
COMPILED = ("compiled", "grad_jit")
ALL = INTERPRETED + REFERENCES + COMPILED + ("tiered", "mixed")


def check(program, oracles=INTERPRETED, timeout=None, seed=0):
    """Run ``oracles`` (names) on ``program``; the number of comparisons made. Raises
    ``Finding`` for a failure, ``ProgramTimeout`` for a program that ran too long."""
    rng = np.random.default_rng(seed)
    with time_limit(timeout):
        run = Run(program)
        n = 0
        for name in oracles:
            oracle = globals()[name]
            n += oracle(run) if name in ("traced", "compiled", "tiered") else oracle(run, rng)
    return n
