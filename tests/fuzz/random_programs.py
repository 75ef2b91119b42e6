"""Random programs over ``tnp`` and ``lax`` for the differential fuzzer.

A program is drawn (``programs()``, a hypothesis strategy) as Python source: a function
``f`` of NumPy inputs, one line per operation, and the NumPy code that makes its inputs
from a seed. Running the source is the only way a program runs, so a failure prints as a
script anyone can run (``RandomProgram.script``). Each line is checked by ``eval_shape``
as it is drawn; a draw that tf_numba rejects is left out, so a program always traces.

Draws shrink toward simple programs: fewer lines, float64, C order, small shapes, the
first operand at hand.
"""
import dataclasses
import math
import re
import textwrap

import numpy as np
from hypothesis import strategies as st

import tf_numba as tf
from tf_numba.errors import TfNumbaError

# the first of each list is where hypothesis shrinks to
DTYPES = ("float64", "float32", "int64", "int32", "bool", "complex128", "complex64")
LAYOUTS = ("C", "F", "strided", "negative", "transposed", "broadcast")
INEXACT = ("float64", "float32", "complex128", "complex64")
FLOATS = ("float64", "float32")

# Sizes around the compiler's switches: a loop body's arrays of at most 16 elements are
# unrolled into scalars (lowering/unrolled.py), a short last axis (<= 7) with >= 32 rows
# each is reduced column by column by the interpreter (ops/reductions.py), NumPy's
# pairwise sum works in blocks of 128 (lowering/vreduce.py), matrix-vector products up to
# 128 x 128 are loops and larger ones BLAS (lowering/loops.py), and regions of >= 2^15
# elements calling math (2^17 of arithmetic) are cut into chunks of 2^13 elements that
# two threads share (lowering/codegen.py).
SIZE_CLASSES = {
    "tiny": (1, 2, 3, 4),
    "small": (1, 2, 3, 4, 5, 7, 8, 0),
    "medium": (3, 8, 16, 31, 33, 64, 128, 129, 130),
}
# large programs: one or two axes whose product crosses the chunking thresholds
LARGE_SHAPES = ((1 << 15,), (1 << 17,), ((1 << 17) + 5,), (256, 129), (300, 128), (129, 300),
                (1030, 33), (2, 70000), (40000, 4), (8, 4100))


# no value of a program is larger (its memory and time stay small)
MAX_ELEMENTS = 1 << 19


class _Rejected(Exception):
    """A draw that would make too large an input: drawn again."""


@dataclasses.dataclass(frozen=True)
class Input:
    """An input of ``f``: its shape, dtype, memory layout and how its values are drawn."""
    name: str
    shape: tuple
    dtype: str
    layout: str = "C"
    values: str = "normal"      # normal | special (NaN, inf, zeros) | index:<bound>

    def source(self):
        """NumPy code (reading ``rng``) that makes this input."""
        shape = self.shape
        if self.layout == "strided":
            base = self._values(tuple(2 * d for d in shape))
            return f"{base}[{', '.join(['::2'] * len(shape))}]"
        if self.layout == "negative":
            return f"{self._values(shape)}[{', '.join(['::-1'] * len(shape))}]"
        if self.layout == "F":
            return f"np.asfortranarray({self._values(shape)})"
        if self.layout == "transposed":
            return f"{self._values(shape[::-1])}.T"
        if self.layout == "broadcast":
            return f"np.broadcast_to({self._values((1,) + shape[1:])}, {shape})"
        return self._values(shape)

    def _values(self, shape):
        dtype = self.dtype
        if self.values.startswith("index:"):
            bound = int(self.values.split(":")[1])
            return f"rng.integers(0, {bound}, {shape}).astype(np.{dtype})"
        if dtype == "bool":
            return f"(rng.random({shape}) < 0.5)"
        if dtype.startswith("int"):
            return f"rng.integers(-5, 6, {shape}).astype(np.{dtype})"
        if dtype.startswith("complex"):
            return (f"(rng.normal(0, 1, {shape}) + 1j * rng.normal(0, 1, {shape}))"
                    f".astype(np.{dtype})")
        real = f"rng.normal(0, 2, {shape})"
        if self.values == "special":
            # a few in a large array: one NaN in each row of a reduction hides the rest
            share = min(0.2, 8 / max(math.prod(shape), 1))
            real = (f"np.where(rng.random({shape}) < {share:.3g}, rng.choice(np.array([np.nan, "
                    f"np.inf, -np.inf, 0.0, -0.0, 1e300, 1e-310]), {shape}), {real})")
        return real if dtype == "float64" else f"{real}.astype(np.{dtype})"

    @property
    def index_bound(self):
        return int(self.values.split(":")[1]) if self.values.startswith("index:") else None


@dataclasses.dataclass(frozen=True)
class RandomProgram:
    """``f``'s source, its inputs, and the operations it uses (``ops``), by family."""
    seed: int
    inputs: tuple
    lines: tuple
    outputs: tuple
    out_avals: tuple          # (shape, dtype name) of each output
    ops: frozenset
    dtypes: frozenset = frozenset()     # of every value, inputs and lines

    @property
    def single_precision(self):
        """Does any value pass through float32 or complex64?"""
        return bool(self.dtypes & {"float32", "complex64"})

    def source(self):
        args = ", ".join(i.name for i in self.inputs)
        body = "".join(f"    {line}\n" for line in self.lines)
        out = self.outputs[0] if len(self.outputs) == 1 else f"({', '.join(self.outputs)},)"
        return f"def f({args}):\n{body}    return {out}\n"

    def inputs_source(self):
        return "".join(f"{i.name} = {i.source()}\n" for i in self.inputs)

    def function(self):
        namespace = _namespace()
        exec(compile(self.source(), "<random program>", "exec"), namespace)
        return namespace["f"]

    def make_inputs(self):
        namespace = {"np": np, "rng": np.random.default_rng(self.seed)}
        with np.errstate(all="ignore"):        # 1e300 cast to float32 is inf
            exec(self.inputs_source(), namespace)
        return [namespace[i.name] for i in self.inputs]

    @property
    def single_output(self):
        return len(self.outputs) == 1

    def script(self, check=""):
        """A runnable script: the imports, ``f``, its inputs, then ``check`` (lines that
        use ``f`` and the inputs ``args``)."""
        names = ", ".join(i.name for i in self.inputs)
        return (HEADER + "\n" + self.source() + "\n\n"
                + f"rng = np.random.default_rng({self.seed})\n" + self.inputs_source()
                + f"args = [{names}]\n" + textwrap.dedent(check))

    def to_json(self):
        """The program as JSON values (``from_json`` makes it again): how a campaign's log
        keeps a finding to check again."""
        fields = dataclasses.asdict(self)
        fields["ops"], fields["dtypes"] = sorted(self.ops), sorted(self.dtypes)
        return fields

    @classmethod
    def from_json(cls, fields):
        def tuples(x):
            return tuple(tuples(y) for y in x) if isinstance(x, list) else x
        fields = dict(fields)
        fields["inputs"] = tuple(Input(**dict(i, shape=tuple(i["shape"])))
                                 for i in fields["inputs"])
        for name in ("lines", "outputs", "out_avals"):
            fields[name] = tuples(fields[name])
        fields["ops"], fields["dtypes"] = frozenset(fields["ops"]), frozenset(fields["dtypes"])
        return cls(**fields)

    def __repr__(self):
        return "RandomProgram:\n" + self.script()

    def _repr_pretty_(self, printer, cycle):     # hypothesis prints falsifying examples so
        printer.text(repr(self))


HEADER = ("import numpy as np\nimport tf_numba as tf\nimport tf_numba.numpy as tnp\n"
          "from tf_numba import lax\n")


def _namespace():
    return {"np": np, "tf": tf, "tnp": tf.numpy, "lax": tf.lax}


class _Builder:
    """The state of one program being drawn: its values (inputs and lines) and their
    shapes and dtypes."""

    def __init__(self, draw, dims, large, dtypes=DTYPES):
        self.draw = draw
        self.dtypes = dtypes       # of new inputs (index inputs aside)
        self.dims = dims           # the lengths new inputs' axes are drawn from
        self.large = large         # large shapes for new inputs
        self.inputs = []
        self.lines = []
        self.avals = {}            # name -> ShapeDtype
        self.order = []            # names, oldest first
        self.ops = set()
        self.index_inputs = []
        self.chain = False         # each line reads the line before when it can
        self.partners = PARTNERS    # how a binary operation's second operand broadcasts

    # ------------------------------------------------------------------ values
    def fresh(self):
        return f"v{len(self.order)}"

    def shape(self, rank=None, min_rank=0, max_rank=3):
        if self.large is not None and rank is None:
            return self.large
        if rank is None:
            rank = self.draw(st.integers(min_rank, max_rank))
        shape = tuple(self.draw(st.sampled_from(self.dims)) for _ in range(rank))
        while math.prod(shape) > MAX_ELEMENTS:      # (the leading axes go first)
            shape = shape[1:]
        return shape

    def new_input(self, shape, dtype=None, values=None):
        draw = self.draw
        if math.prod(shape) > MAX_ELEMENTS:
            raise _Rejected(f"an input of {shape}")
        if dtype is None or (dtype not in self.dtypes and values is None):
            dtype = draw(st.sampled_from(self.dtypes))
        layout = draw(st.sampled_from(LAYOUTS)) if shape else "C"
        if layout in ("transposed", "broadcast") and len(shape) < 2:
            layout = "C"
        if values is None:
            # (shrinking toward 0: the simplest inputs are ordinary numbers)
            values = "special" if (dtype in FLOATS and draw(st.integers(0, 9)) == 9) \
                else "normal"
        name = self.fresh()
        spec = Input(name, tuple(shape), dtype, layout, values)
        self.inputs.append(spec)
        self._record(name, tf.ShapeDtype(spec.shape, np.dtype(dtype)))
        return name

    def _record(self, name, aval):
        self.avals[name] = aval
        self.order.append(name)

    def pick(self, accept=lambda a: True, new=None):
        """A value whose aval ``accept``s: one at hand (the later ones likelier), or a new
        input made by ``new()`` when none fits or the draw says so."""
        names = [n for n in self.order if accept(self.avals[n])]
        if new is not None and (not names or self.draw(st.integers(0, 3)) == 3):
            return new()
        if not names:
            return None
        # shrinks toward the latest value: programs stay chains
        k = self.draw(st.integers(0, len(names) - 1))
        return names[len(names) - 1 - k]

    def any_value(self, dtypes=DTYPES, min_rank=0):
        """A value to operate on (in a chained program, the latest when it fits)."""
        latest = self.avals[self.order[-1]] if self.order else None
        if self.chain and latest is not None and latest.dtype.name in dtypes \
                and len(latest.shape) >= min_rank:
            return self.order[-1]
        return self.pick(lambda a: a.dtype.name in dtypes and len(a.shape) >= min_rank,
                         new=lambda: self.new_input(
                             self.shape(min_rank=min_rank),
                             self.draw(st.sampled_from(
                                 [d for d in dtypes if d in self.dtypes] or self.dtypes))))

    # ------------------------------------------------------------------ lines
    def add(self, expr, family, *, outputs=None):
        """Append ``v = expr`` if tf_numba traces it; returns the new names or None."""
        args = list(self.order)
        fn = eval(f"lambda {', '.join(args)}: {expr}", _namespace())
        try:
            out = tf.eval_shape(fn, *[self.avals[a] for a in args])
        except TfNumbaError:
            return None
        except Exception as err:     # noqa: BLE001 - an error that is not tf_numba's
            from oracles import Finding
            raise Finding("trace", f"tracing raised {type(err).__name__}: {err}",
                          self.program([f"v = {expr}"], ["v"]),
                          "tf.make_program(f)(*args)\n") from err
        leaves = list(out) if isinstance(out, (tuple, list)) else [out]
        if not leaves or not all(isinstance(x, tf.ShapeDtype) for x in leaves):
            return None
        if any(math.prod(x.shape) > MAX_ELEMENTS for x in leaves):
            return None
        names = []
        for leaf in leaves:
            name = self.fresh()
            self._record(name, leaf)
            names.append(name)
        target = names[0] if not isinstance(out, (tuple, list)) else (
            ", ".join(names) + ("," if len(names) == 1 else ""))
        self.lines.append(f"{target} = {expr}")
        self.ops.add(family)
        return names


    def program(self, lines=(), outputs=None):
        """The program drawn so far (with ``lines`` appended)."""
        outputs = list(outputs or [self.order[-1]])
        return RandomProgram(
            seed=self.draw(st.integers(0, 2**31 - 1)), inputs=tuple(self.inputs),
            lines=tuple(self.lines) + tuple(lines), outputs=tuple(outputs),
            out_avals=tuple((self.avals[o].shape, self.avals[o].dtype.name)
                            for o in outputs if o in self.avals),
            ops=frozenset(self.ops),
            dtypes=frozenset(a.dtype.name for a in self.avals.values()))


# ---------------------------------------------------------------------------- operations
# Unary functions: (name, domain). A domain other than "any" is entered through a guard
# when the draw says so (otherwise NaN/inf come out, and their positions are checked).
UNARY = [
    ("sin", "any"), ("cos", "any"), ("tanh", "any"), ("exp", "any"), ("log", "positive"),
    ("sqrt", "positive"), ("negative", "any"), ("abs", "any"), ("square", "any"),
    ("expm1", "any"), ("log1p", "positive"), ("tan", "any"), ("arctan", "any"),
    ("sinh", "any"), ("cosh", "any"), ("arcsin", "unit"), ("arccos", "unit"),
    ("arcsinh", "any"), ("arccosh", "ge1"), ("arctanh", "unit"), ("exp2", "any"),
    ("log2", "positive"), ("log10", "positive"), ("cbrt", "any"), ("reciprocal", "nonzero"),
    ("sign", "any"), ("floor", "any"), ("ceil", "any"), ("rint", "any"), ("trunc", "any"),
    ("isfinite", "any"), ("isnan", "any"), ("signbit", "any"), ("logical_not", "any"),
    ("conj", "any"), ("real", "any"), ("imag", "any"), ("deg2rad", "any"),
    ("sinc", "any"), ("positive", "any"), ("fabs", "any"), ("invert", "any"),
    ("spacing", "any"),
]
NN_UNARY = ["relu", "sigmoid", "softplus", "gelu", "silu", "log_sigmoid", "elu", "selu",
            "soft_sign", "leaky_relu", "relu6", "celu", "hard_tanh"]
NN_AXIS = ["softmax", "log_softmax", "logsumexp", "standardize"]
GUARDS = {"positive": "(tnp.abs({x}) + 0.5)", "nonzero": "(tnp.abs({x}) + 0.5)",
          "unit": "(tnp.tanh({x}) * 0.9)", "ge1": "(tnp.abs({x}) + 1.5)"}

BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
          "hypot", "fmax", "fmin", "copysign", "fmod", "remainder", "floor_divide",
          "logaddexp", "greater", "less_equal", "equal", "not_equal", "logical_and",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "heaviside",
          "nextafter", "left_shift", "right_shift", "float_power"]
OPERATORS = ["+", "-", "*", "/", "**", "//", "%", "<", ">=", "==", "&", "|", "^"]
LITERALS = ["2.0", "0.5", "-1.5", "3", "-2", "0", "1", "True", "1e-3", "np.float32(1.5)"]

REDUCTIONS = ["sum", "max", "min", "mean", "prod", "any", "all", "argmax", "argmin", "std",
              "var", "ptp", "count_nonzero", "nansum", "nanmax", "median"]
CUMULATIVE = ["cumsum", "cumprod", "nancumsum", "diff"]


def _axis(draw, rank, allow_none=True, allow_tuple=True):
    if rank == 0:
        return "None"
    choices = ["int", "negative"] + (["none"] if allow_none else []) + (
        ["tuple"] if allow_tuple and rank > 1 else [])
    kind = draw(st.sampled_from(choices))
    if kind == "none":
        return "None"
    if kind == "tuple":
        axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                             unique=True))
        return str(tuple(axes))
    axis = draw(st.integers(0, rank - 1))
    return str(axis - rank if kind == "negative" else axis)


def _elementwise_unary(b):
    draw = b.draw
    x = b.any_value()
    kind = draw(st.sampled_from(["numpy", "nn", "astype"]))
    if kind == "nn":
        return b.add(f"tf.nn.{draw(st.sampled_from(NN_UNARY))}({x})", "nn")
    if kind == "astype":
        return b.add(f"{x}.astype(np.{draw(st.sampled_from(DTYPES))})", "astype")
    name, domain = draw(st.sampled_from(UNARY))
    arg = x
    if domain != "any" and draw(st.booleans()) is False:
        arg = GUARDS[domain].format(x=x)
    return b.add(f"tnp.{name}({arg})", "unary:" + name)


PARTNERS = ("same", "literal", "size1", "fewer", "scalar", "grow")


def _broadcast_partner(b, shape):
    """An operand that broadcasts against ``shape``: a value of that shape, a literal, a
    0-d value, or a new input with some axes of length 1 or fewer leading axes."""
    draw = b.draw
    kind = draw(st.sampled_from(b.partners))
    if kind == "literal":
        return draw(st.sampled_from(LITERALS))
    if kind == "same":
        return b.pick(lambda a: a.shape == shape,
                      new=lambda: b.new_input(shape))
    if kind == "scalar":
        return b.pick(lambda a: a.shape == (), new=lambda: b.new_input(()))
    if kind == "fewer":
        return b.new_input(shape[draw(st.integers(0, len(shape))):])
    if kind == "grow":        # the partner is larger: the result gains axes or lengths
        extra = tuple(draw(st.sampled_from((2, 3))) for _ in range(draw(st.integers(0, 1))))
        grown = extra + tuple(d if d != 1 else draw(st.sampled_from((1, 2, 3)))
                              for d in shape)
        return b.new_input(grown)
    ones = tuple(1 if draw(st.booleans()) else d for d in shape)
    return b.new_input(ones)


def _integral(b, operand):
    """Is ``operand`` (a name or a literal) of an integer or bool dtype?"""
    if operand in b.avals:
        return b.avals[operand].dtype.kind in "biu"
    return operand.lstrip("-").isdigit() or operand == "True"


def _elementwise_binary(b):
    draw = b.draw
    x = b.any_value()
    y = _broadcast_partner(b, b.avals[x].shape)
    if draw(st.booleans()):
        x, y = y, x
    op = draw(st.sampled_from(OPERATORS)) if draw(st.booleans()) else None
    name = None if op else draw(st.sampled_from(BINARY))
    if (op == "**" or name == "power") and (_integral(b, y) or draw(st.booleans())):
        # an integer to a negative integer power is an error in NumPy (a finding of its
        # own: perf/FUZZ.md), not drawn
        y = f"(tnp.abs({y}) % 3)"
    if op:
        return b.add(f"({x} {op} {y})", "binary:" + op)
    if name in ("power", "float_power") and draw(st.booleans()):
        x = f"(tnp.abs({x}) + 0.5)"
    if name in ("left_shift", "right_shift"):
        y = f"(tnp.abs({y}) % 5)"
    if name == "heaviside" and draw(st.booleans()):
        y = "0.5"
    return b.add(f"tnp.{name}({x}, {y})", "binary:" + name)


def _where(b):
    draw = b.draw
    x = b.any_value()
    shape = b.avals[x].shape
    kind = draw(st.sampled_from(["compare", "bool"]))
    if kind == "bool":
        c = b.pick(lambda a: a.dtype == np.bool_ and a.shape == shape,
                   new=lambda: b.new_input(shape, "bool"))
    else:
        c = f"({b.pick(lambda a: a.shape == shape) or x} > 0)"
    y = _broadcast_partner(b, shape)
    return b.add(f"tnp.where({c}, {x}, {y})", "where")


def _reduction(b):
    draw = b.draw
    x = b.any_value(min_rank=draw(st.sampled_from([1, 0])))
    rank = len(b.avals[x].shape)
    name = draw(st.sampled_from(REDUCTIONS))
    single = name in ("argmax", "argmin", "median")
    axis = _axis(draw, rank, allow_tuple=not single)
    keep = draw(st.booleans()) and name not in ("ptp",)
    extra = ", keepdims=True" if keep else ""
    if name == "std" and draw(st.booleans()):
        extra += ", ddof=1"
    return b.add(f"tnp.{name}({x}, axis={axis}{extra})", "reduce:" + name)


def _cumulative(b):
    draw = b.draw
    x = b.any_value(min_rank=1)
    rank = len(b.avals[x].shape)
    name = draw(st.sampled_from(CUMULATIVE))
    axis = _axis(draw, rank, allow_none=name != "diff", allow_tuple=False)
    return b.add(f"tnp.{name}({x}, axis={axis})", "cumulative:" + name)


def _slice_text(draw, shape):
    parts = []
    for d in shape:
        kind = draw(st.sampled_from(["all", "range", "step", "negative", "index", "new"]))
        if kind == "all":
            parts.append(":")
        elif kind == "index" and d > 0:
            parts.append(str(draw(st.integers(-d, d - 1))))
        elif kind == "new":
            parts.append("None")
            parts.append(":")
        else:
            lo = draw(st.integers(-d - 1, d + 1)) if d else 0
            hi = draw(st.integers(-d - 1, d + 1)) if d else 0
            step = {"range": 1, "step": draw(st.integers(2, 3)),
                    "negative": -draw(st.integers(1, 3))}.get(kind, 1)
            parts.append(f"{lo}:{hi}:{step}" if kind != "range" else f"{lo}:{hi}")
    return ", ".join(parts) if parts else "..."


def _factor(draw, size):
    """A shape of ``size`` elements, of rank 1 to 3."""
    if size == 0:
        return (0, draw(st.sampled_from([1, 3])))
    divisors = [d for d in range(1, min(size, 64) + 1) if size % d == 0]
    a = draw(st.sampled_from(divisors))
    rest = size // a
    if draw(st.booleans()):
        return (a, rest)
    divisors = [d for d in range(1, min(rest, 64) + 1) if rest % d == 0]
    c = draw(st.sampled_from(divisors))
    return (a, c, rest // c)


def _layout(b):
    draw = b.draw
    x = b.any_value()
    shape = b.avals[x].shape
    rank = len(shape)
    kind = draw(st.sampled_from(["slice", "transpose", "reshape", "swap", "expand", "squeeze",
                                 "flip", "roll", "broadcast_to", "ravel", "tile", "repeat",
                                 "pad", "tri", "diagonal", "moveaxis"]))
    if kind == "slice":
        return b.add(f"{x}[{_slice_text(draw, shape)}]", "layout:slice")
    if kind == "transpose":
        perm = draw(st.permutations(range(rank)))
        return b.add(f"tnp.transpose({x}, {tuple(perm)})", "layout:transpose")
    if kind == "reshape":
        new = _factor(draw, math.prod(shape))
        if draw(st.booleans()):
            new = (-1,) + new[1:]
        return b.add(f"tnp.reshape({x}, {new})", "layout:reshape")
    if kind == "ravel":
        return b.add(f"tnp.ravel({x})", "layout:reshape")
    if kind == "swap" and rank >= 2:
        return b.add(f"tnp.swapaxes({x}, 0, -1)", "layout:transpose")
    if kind == "moveaxis" and rank >= 2:
        return b.add(f"tnp.moveaxis({x}, -1, 0)", "layout:transpose")
    if kind == "expand":
        return b.add(f"tnp.expand_dims({x}, {draw(st.integers(-rank - 1, rank))})",
                     "layout:expand")
    if kind == "squeeze" and 1 in shape:
        return b.add(f"tnp.squeeze({x}, axis={shape.index(1)})", "layout:expand")
    if kind == "flip":
        return b.add(f"tnp.flip({x}, axis={_axis(draw, rank)})", "layout:flip")
    if kind == "roll" and rank:
        return b.add(f"tnp.roll({x}, {draw(st.integers(-3, 3))}, axis={_axis(draw, rank)})",
                     "layout:roll")
    if kind == "broadcast_to":
        target = tuple(draw(st.sampled_from((2, 3))) if d == 1 else d for d in shape)
        if draw(st.booleans()):
            target = (draw(st.sampled_from((1, 2, 3))),) + target
        return b.add(f"tnp.broadcast_to({x}, {target})", "layout:broadcast")
    if kind == "tile":
        reps = tuple(draw(st.integers(1, 2)) for _ in range(max(rank, 1)))
        return b.add(f"tnp.tile({x}, {reps})", "layout:tile")
    if kind == "repeat":
        return b.add(f"tnp.repeat({x}, {draw(st.integers(1, 3))}, axis={_axis(draw, rank)})",
                     "layout:repeat")
    if kind == "pad" and rank:
        width = draw(st.integers(0, 2))
        mode = draw(st.sampled_from(["constant", "edge", "reflect", "wrap"]))
        return b.add(f"tnp.pad({x}, {width}, mode='{mode}')", "layout:pad")
    if kind == "tri" and rank >= 2:
        name = draw(st.sampled_from(["tril", "triu"]))
        return b.add(f"tnp.{name}({x}, {draw(st.integers(-1, 1))})", "layout:tri")
    if kind == "diagonal" and rank >= 2:
        return b.add(f"tnp.diagonal({x}, {draw(st.integers(-1, 1))})", "layout:diagonal")
    return None


def _join(b):
    draw = b.draw
    x = b.any_value(min_rank=draw(st.sampled_from([1, 0])))
    shape = b.avals[x].shape
    stack = draw(st.booleans()) or not shape
    count = draw(st.integers(1, 3))
    parts = [x]
    axis = draw(st.integers(0, len(shape) - (0 if stack else 1))) if shape or stack else 0
    for _ in range(count - 1):
        if stack:
            other = shape
        else:
            other = tuple(draw(st.sampled_from((0, 1, 2, 5))) if i == axis else d
                          for i, d in enumerate(shape))
        dtype = b.avals[x].dtype.name if draw(st.booleans()) else None
        parts.append(b.pick(lambda a, o=other: a.shape == o,
                            new=lambda o=other, dt=dtype: b.new_input(o, dt)))
    fn = draw(st.sampled_from(["stack", "hstack", "vstack"])) if stack else "concatenate"
    if fn in ("hstack", "vstack"):
        return b.add(f"tnp.{fn}([{', '.join(parts)}])", "join")
    return b.add(f"tnp.{fn}([{', '.join(parts)}], axis={axis})", "join")


def _gather(b):
    draw = b.draw
    x = b.any_value(min_rank=1)
    shape = b.avals[x].shape
    rank = len(shape)
    axis = draw(st.integers(0, rank - 1))
    n = shape[axis]
    if n == 0:
        return None
    kind = draw(st.sampled_from(["take", "fancy", "along", "input", "scatter", "dynamic"]))
    if kind == "dynamic":
        start = draw(st.integers(-n - 2, n + 2))
        size = draw(st.integers(0, n))
        return b.add(f"lax.dynamic_slice_in_dim({x}, {start}, {size}, axis={axis})",
                     "gather:dynamic")
    count = draw(st.integers(1, 5))
    idx = draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count))
    if kind == "take":
        return b.add(f"tnp.take({x}, np.array({idx}), axis={axis})", "gather:take")
    if kind == "fancy":
        return b.add(f"{x}[{':, ' * axis}np.array({idx})]", "gather:fancy")
    if kind == "along":
        return b.add(f"tnp.take_along_axis({x}, tnp.argsort({x}, axis={axis}), axis={axis})",
                     "gather:along")
    if kind == "input":
        ishape = b.shape(rank=draw(st.integers(0, 2)))
        ishape = tuple(min(d, 8) for d in ishape)
        name = b.new_input(ishape, draw(st.sampled_from(["int64", "int32"])), f"index:{n}")
        b.index_inputs.append(name)
        return b.add(f"tnp.take({x}, {name}, axis={axis})", "gather:input")
    # scatter: x.at[idx] with an update that broadcasts against the selected rows
    method = draw(st.sampled_from(["set", "add", "multiply", "min", "max"]))
    if method == "set":
        idx = sorted(set(i % n for i in idx))
    upd_shape = (len(idx),) + shape[:axis] + shape[axis + 1:] if axis == 0 else None
    if axis != 0 or upd_shape is None:
        index = f"{':, ' * axis}np.array({idx})"
        target_shape = shape[:axis] + (len(idx),) + shape[axis + 1:]
    else:
        index = f"np.array({idx})"
        target_shape = upd_shape
    u = _broadcast_partner(b, target_shape)
    return b.add(f"tnp.at({x})[{index}].{method}({u})", "scatter:" + method)


def _contraction(b):
    draw = b.draw
    kind = draw(st.sampled_from(["matmul", "dot", "einsum", "tensordot", "outer", "inner",
                                 "vdot"]))
    dims = b.dims if b.large is None else (1, 64, 129, 200)
    x = b.any_value(dtypes=INEXACT + ("int64", "int32", "bool"), min_rank=1)
    shape = b.avals[x].shape
    if kind in ("outer", "vdot"):
        y = b.any_value(min_rank=1)
        return b.add(f"tnp.{kind}({x}, {y})", "contract:" + kind)
    k = shape[-1]
    out = draw(st.sampled_from(dims))
    yrank = draw(st.integers(1, 3))
    if kind == "inner":
        yshape = (out,) * (yrank - 1) + (k,)
    elif yrank == 1:
        yshape = (k,)
    else:
        batch = shape[:-2][-(yrank - 2):] if yrank > 2 and len(shape) > 2 else \
            tuple(draw(st.sampled_from((1, 2))) for _ in range(yrank - 2))
        yshape = batch + (k, out)
    dtype = b.avals[x].dtype.name if draw(st.booleans()) else None
    y = b.pick(lambda a: a.shape == yshape, new=lambda: b.new_input(yshape, dtype))
    if kind == "matmul":
        if draw(st.booleans()):
            return b.add(f"({x} @ {y})", "contract:matmul")
        return b.add(f"tnp.matmul({x}, {y})", "contract:matmul")
    if kind == "dot":
        return b.add(f"tnp.dot({x}, {y})", "contract:dot")
    if kind == "inner":
        return b.add(f"tnp.inner({x}, {y})", "contract:inner")
    if kind == "tensordot":
        y_axis = len(yshape) - 2 if len(yshape) > 1 else 0
        return b.add(f"tnp.tensordot({x}, {y}, axes=([{len(shape) - 1}], [{y_axis}]))",
                     "contract:tensordot")
    letters = "abcdefgh"
    xs = letters[:len(shape)]
    ys = (letters[len(shape):len(shape) + len(yshape) - 1] + xs[-1]) if len(yshape) > 0 \
        else ""
    ys = ys[-len(yshape):]
    keep = "".join(c for c in xs + ys if draw(st.booleans()) and c != xs[-1])
    keep = "".join(dict.fromkeys(keep))
    return b.add(f"tnp.einsum('{xs},{ys}->{keep}', {x}, {y})", "contract:einsum")


LINALG = ["inv", "solve", "det", "slogdet", "cholesky", "qr", "svdvals", "eigvalsh", "norm",
          "matrix_power", "pinv", "lstsq_like", "eigh"]
FFT = ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn"]


def _linalg(b):
    draw = b.draw
    name = draw(st.sampled_from(LINALG + ["fft"] * 3))
    n = draw(st.sampled_from((1, 2, 3, 4, 8, 17)))
    batch = tuple(draw(st.sampled_from((1, 2))) for _ in range(draw(st.integers(0, 1))))
    dtype = draw(st.sampled_from(FLOATS + ("complex128",)))
    if name == "fft":
        x = b.any_value(dtypes=INEXACT, min_rank=1)
        fn = draw(st.sampled_from(FFT))
        if fn in ("fft2",) and len(b.avals[x].shape) < 2:
            fn = "fft"
        extra = f", n={draw(st.integers(1, 9))}" if fn in ("fft", "irfft", "rfft") and \
            draw(st.booleans()) else ""
        return b.add(f"tnp.fft.{fn}({x}{extra})", "fft:" + fn)
    a = b.pick(lambda v: v.dtype.name in INEXACT and len(v.shape) >= 2
               and v.shape[-1] == v.shape[-2] and v.shape[-1] > 0,
               new=lambda: b.new_input(batch + (n, n), dtype))
    well = f"({a} + {b.avals[a].shape[-1] + 2} * tnp.eye({b.avals[a].shape[-1]}))"
    if name in ("inv", "det", "slogdet", "matrix_power", "pinv", "svdvals", "norm"):
        arg = well if name in ("inv", "det", "slogdet", "matrix_power") else a
        if name == "matrix_power":
            return b.add(f"tnp.linalg.matrix_power({arg}, {draw(st.integers(0, 3))})",
                         "linalg:" + name)
        return b.add(f"tnp.linalg.{name}({arg})", "linalg:" + name)
    if name == "solve":
        rhs = b.new_input(b.avals[a].shape[:-1] + (draw(st.sampled_from((1, 2))),), dtype)
        return b.add(f"tnp.linalg.solve({well}, {rhs})", "linalg:solve")
    if name == "lstsq_like":
        return b.add(f"tnp.linalg.solve({well}, {a})", "linalg:solve")
    spd = f"({a} @ tnp.conj(tnp.swapaxes({a}, -1, -2)) + tnp.eye({b.avals[a].shape[-1]}))"
    if name == "cholesky":
        return b.add(f"tnp.linalg.cholesky({spd})", "linalg:cholesky")
    if name in ("eigvalsh",):
        return b.add(f"tnp.linalg.eigvalsh({spd})", "linalg:eigvalsh")
    if name == "eigh":
        return b.add(f"tnp.linalg.eigh({spd})[0]", "linalg:eigh")
    if name == "qr":
        return b.add(f"tnp.linalg.qr({a})[1]", "linalg:qr")
    return None


def _body(draw, c, dtype, depth=2):
    """An expression of ``c`` with ``c``'s shape and dtype (a loop's or a branch's body)."""
    expr = c
    for _ in range(draw(st.integers(1, depth))):
        if dtype in INEXACT:
            step = draw(st.sampled_from(["tnp.sin({e})", "({e} * 0.5)", "({e} + 1.0)",
                                         "tnp.tanh({e})", "({e} * {e})", "tnp.cos({e})",
                                         "({e} - tnp.mean({e}))", "tnp.flip({e})",
                                         "({e} / (1.0 + {e} * {e}))", "tnp.cumsum({e})"]))
        elif dtype == "bool":
            step = draw(st.sampled_from(["tnp.logical_not({e})", "({e} ^ True)"]))
        else:
            step = draw(st.sampled_from(["({e} + 1)", "({e} * 3 % 7)", "({e} - {e} // 2)"]))
        expr = step.format(e=expr)
    return expr


def _control(b):
    draw = b.draw
    kind = draw(st.sampled_from(["cond", "fori", "while", "scan", "switch"]))
    x = b.any_value(min_rank=1 if kind == "scan" else 0)
    aval = b.avals[x]
    dtype, shape = aval.dtype.name, aval.shape
    if kind == "scan" and (not shape or shape[0] > 130):
        return None             # (a step is interpreted ~10 us: scans stay short)
    if kind in ("cond", "switch"):
        p = b.pick(lambda a: a.dtype.name in ("float64", "float32", "int64", "int32"))
        pred = f"tnp.sum({p}) > 0" if p else "True"
        first, second = _body(draw, "a", dtype), _body(draw, "a", dtype)
        if kind == "switch":
            idx = f"tnp.int32(tnp.sum({p}) > 0) + 1" if p else "1"
            third = _body(draw, "a", dtype)
            return b.add(f"lax.switch({idx}, [lambda a: {first}, lambda a: {second}, "
                         f"lambda a: {third}], {x})", "control:switch")
        return b.add(f"lax.cond({pred}, lambda a: {first}, lambda a: {second}, {x})",
                     "control:cond")
    trips = draw(st.sampled_from((0, 1, 2, 3, 5)))
    if kind == "fori":
        body = _body(draw, "c", dtype, depth=3)
        return b.add(f"lax.fori_loop(0, {trips}, lambda i, c: {body}, {x})", "control:fori")
    if kind == "while":
        body = _body(draw, "c[1]", dtype, depth=3)
        return b.add(f"lax.while_loop(lambda c: c[0] < {trips}, lambda c: (c[0] + 1, {body}), "
                     f"(0, {x}))[1]", "control:while")
    # scan over the leading axis of x, with a carry shaped as a row of x
    c = b.pick(lambda a: a.shape == shape[1:] and a.dtype == aval.dtype,
               new=lambda: b.new_input(shape[1:], dtype))
    body = _body(draw, "(c + x)", dtype)
    reverse = ", reverse=True" if draw(st.booleans()) else ""
    return b.add(f"lax.scan(lambda c, x: ({body}, c * x), {c}, {x}{reverse})",
                 "control:scan")


def _random(b):
    draw = b.draw
    x = b.any_value(dtypes=FLOATS)
    aval = b.avals[x]
    key = f"tf.random.key({draw(st.integers(0, 5))})"
    if draw(st.booleans()):
        key = f"tf.random.fold_in({key}, {draw(st.integers(0, 3))})"
    if draw(st.booleans()):
        key = f"tf.random.split({key})[{draw(st.integers(0, 1))}]"
    sampler = draw(st.sampled_from(["normal", "uniform", "bernoulli", "gumbel", "laplace",
                                    "exponential"]))
    dtype = "" if sampler == "bernoulli" else f", dtype=np.{aval.dtype.name}"
    sample = f"tf.random.{sampler}({key}, {aval.shape}{dtype})"
    return b.add(f"({x} * {sample})", "random:" + sampler)


def _nn_axis(b):
    draw = b.draw
    x = b.any_value(dtypes=FLOATS, min_rank=1)
    rank = len(b.avals[x].shape)
    name = draw(st.sampled_from(NN_AXIS))
    return b.add(f"tf.nn.{name}({x}, axis={draw(st.integers(-rank, rank - 1))})", "nn_axis")


NORMALIZE = ["({x} - tnp.mean({x}, axis={a}, keepdims=True))",
             "({x} / (1.0 + tnp.max(tnp.abs({x}), axis={a}, keepdims=True)))",
             "tnp.exp({x} - tnp.max({x}, axis={a}, keepdims=True))",
             "({x} * tnp.sum({x} * {x}, axis={a}, keepdims=True))",
             "tnp.tanh({x} - tnp.min({x}, axis={a}, keepdims=True))"]


def _normalize(b):
    """A value less (or over) a statistic of itself along an axis: a reduction and the
    step that reads it back, two loop nests (the shape of softmax and layer_norm). A
    chain of them crosses the compiler's cut of kernels at ``MAX_KERNEL_NESTS``."""
    draw = b.draw
    x = b.any_value(dtypes=FLOATS, min_rank=1)
    rank = len(b.avals[x].shape)
    form = draw(st.sampled_from(NORMALIZE))
    return b.add(form.format(x=x, a=draw(st.integers(-rank, rank - 1))), "normalize")


# family -> (draw, weight)
FAMILIES = {
    "unary": (_elementwise_unary, 6),
    "binary": (_elementwise_binary, 6),
    "where": (_where, 1),
    "reduce": (_reduction, 3),
    "cumulative": (_cumulative, 1),
    "layout": (_layout, 3),
    "join": (_join, 1),
    "gather": (_gather, 2),
    "contract": (_contraction, 2),
    "linalg": (_linalg, 1),
    "control": (_control, 2),
    "random": (_random, 1),
    "nn_axis": (_nn_axis, 1),
    "normalize": (_normalize, 1),
}
_FAMILY_DRAWS = [name for name, (_, w) in FAMILIES.items() for _ in range(w)]


# Plans (``programs(plan=...)``) that steer programs down the compiler's paths:
# short chains that fuse into one loop nest (an elementwise function, a step against an
# operand with axes of length 1 or fewer axes, then a reduction) ...
KERNEL_PLAN = (("unary",), ("binary", "where", "layout"), ("reduce", "reduce", "cumulative"))
# ... kernels on either side of a library call the interpreter runs (a plan of several
# kernels, which may run half compiled) ...
CUT_PLAN = (("unary", "binary"), ("linalg",), ("unary", "normalize", "binary"))
# ... and more loop nests than one kernel takes (lowering/segments.MAX_KERNEL_NESTS)
LONG_PLAN = (("normalize",),) * 20


@st.composite
def programs(draw, max_lines=6, families=None, sizes=("small", "tiny", "medium", "large"),
             dtypes=None, plan=None, partners=PARTNERS, min_rank=0):
    """A ``RandomProgram`` of at most ``max_lines`` lines drawn from ``families`` (all by
    default), its new inputs of ``dtypes`` (all by default). ``plan``, a sequence of
    tuples of families, draws one line from each in turn instead, each reading the one
    before. ``partners``: the ways a binary operation's second operand may broadcast
    (``PARTNERS``). ``min_rank``: of the first input."""
    size = draw(st.sampled_from(sizes))
    large = draw(st.sampled_from([s for s in LARGE_SHAPES if len(s) >= min_rank])) \
        if size == "large" else None
    dims = SIZE_CLASSES.get(size, SIZE_CLASSES["small"])
    b = _Builder(draw, dims, large, dtypes or DTYPES)
    b.partners = partners
    names = [f for f in _FAMILY_DRAWS if families is None or f in families]
    first = b.new_input(b.shape(min_rank=min_rank))
    if plan is None:
        plan = [names] * draw(st.integers(1, max_lines))
    else:
        b.chain = True
    for choices in plan:
        for _ in range(3):      # a draw tf_numba rejects is drawn again, twice at most
            try:
                if FAMILIES[draw(st.sampled_from(list(choices)))][0](b):
                    break
            except _Rejected:
                continue
        if b.large is not None and len(b.inputs) > 1:
            b.large = None      # one large input; its partners broadcast or shrink
    made = [n for n in b.order if n not in {i.name for i in b.inputs}]
    outputs = [made[-1] if made else first]
    extra = draw(st.integers(0, 2))
    for _ in range(extra):
        k = draw(st.integers(0, len(b.order) - 1))
        if b.order[k] not in outputs:
            outputs.append(b.order[k])
    # inputs that nothing reads are left out (the lines read them by name)
    text = "\n".join(b.lines) + " " + " ".join(outputs)
    b.inputs = [i for i in b.inputs if re.search(rf"\b{i.name}\b", text)]
    return b.program(outputs=outputs)
