"""Shapes: tuples whose dims are ints or symbolic dims, and the rules that combine them.

A ``Sym`` is a symbolic length: an atom (``Sym('n')``) or an integer polynomial of atoms
(``n*3``, ``n - 1``, ``n*m``) that reshapes, slices and concatenations produce. Syms are
interned, so comparing dims is an identity comparison. A symbolic length stands for a
value of at least 2, so NumPy broadcasting never has to guess whether it is 1; where two
different symbols must agree (``a + b``), tracing records a guard that ``prepare`` checks.
"""
from ..errors import ConcretizationError, ShapeError

SYMBOLIC_MIN = 2


class Sym:
    """A symbolic dim: ``Sym('n') is Sym('n')``; ``Sym('n') * 3 - 1`` is another Sym.

    ``terms`` is a sorted tuple of (monomial, coefficient); a monomial is a sorted tuple
    of atom names, ``()`` for the constant term.
    """
    __slots__ = ("terms", "_hash", "__weakref__")
    _interned = {}

    def __new__(cls, name):
        return cls._make((((name,), 1),))

    @classmethod
    def _make(cls, terms):
        terms = tuple(sorted((m, c) for m, c in terms if c != 0))
        if not terms:
            return 0
        if len(terms) == 1 and terms[0][0] == ():
            return terms[0][1]
        found = cls._interned.get(terms)
        if found is None:
            found = object.__new__(cls)
            found.terms = terms
            found._hash = hash(terms)
            cls._interned[terms] = found
        return found

    @property
    def name(self):
        return repr(self)

    def atoms(self):
        return {a for m, _ in self.terms for a in m}

    def _terms_of(other):
        if isinstance(other, Sym):
            return dict(other.terms)
        if isinstance(other, int) and not isinstance(other, bool):
            return {(): other}
        return None

    def __add__(self, other):
        b = Sym._terms_of(other)
        if b is None:
            return NotImplemented
        a = dict(self.terms)
        for m, c in b.items():
            a[m] = a.get(m, 0) + c
        return Sym._make(a.items())

    __radd__ = __add__

    def __neg__(self):
        return Sym._make((m, -c) for m, c in self.terms)

    def __sub__(self, other):
        if Sym._terms_of(other) is None:
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        b = Sym._terms_of(other)
        if b is None:
            return NotImplemented
        out = {}
        for ma, ca in self.terms:
            for mb, cb in b.items():
                m = tuple(sorted(ma + mb))
                out[m] = out.get(m, 0) + ca * cb
        return Sym._make(out.items())

    __rmul__ = __mul__

    def __floordiv__(self, other):
        if isinstance(other, int) and other > 0 and all(c % other == 0 for _, c in self.terms):
            return Sym._make((m, c // other) for m, c in self.terms)
        raise ConcretizationError(f"the symbolic length {self} divided by {other} has no "
                                  "symbolic value; prepare the program with concrete shapes")

    def evaluate(self, values):
        """The int this dim has when the atoms have ``values`` (a dict name -> int)."""
        total = 0
        for m, c in self.terms:
            term = c
            for a in m:
                term *= values[a]
            total += term
        return total

    def lower_bound(self):
        """The smallest value for atoms >= SYMBOLIC_MIN, or None if it is not monotone."""
        if any(c < 0 for m, c in self.terms if m):
            return None
        return self.evaluate({a: SYMBOLIC_MIN for a in self.atoms()})

    def _compare(self, other, op):
        low = self.lower_bound()
        if isinstance(other, int) and low is not None:
            if op in (">", ">=") and (low > other if op == ">" else low >= other):
                return True
            if op in ("<", "<=") and (low >= other if op == "<" else low > other):
                return False
        raise ConcretizationError(
            f"the symbolic length {self} was compared with {other} ({op}) in Python; its "
            "value is only known when the program is prepared. Write the code without "
            "branching on that length, or trace with concrete shapes.")

    def __lt__(self, other):
        return self._compare(other, "<")

    def __le__(self, other):
        return self._compare(other, "<=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return self._hash

    def __index__(self):
        raise ConcretizationError(
            f"the symbolic length {self} was used where Python needs a concrete int; prepare "
            "the program with concrete shapes, or keep the length symbolic")

    __int__ = __index__

    def __repr__(self):
        parts = []
        for m, c in sorted(self.terms, key=lambda t: (-len(t[0]), t[0])):
            body = "*".join(m)
            if not m:
                text = str(abs(c))
            elif abs(c) == 1:
                text = body
            else:
                text = f"{abs(c)}*{body}"
            parts.append(("- " if c < 0 else "+ ") + text if parts else ("-" if c < 0 else "")
                         + text)
        return " ".join(parts)

    def __reduce__(self):
        return (Sym._make, (self.terms,))


def broadcast_shapes(*shapes, op="broadcast"):
    """NumPy broadcasting of several shapes; ShapeError names them when they do not fit."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        dim = 1
        for s in shapes:
            k = axis - (rank - len(s))
            if k < 0:
                continue
            d = s[k]
            if d == 1 or d is dim:
                continue
            if dim == 1:
                dim = d
            elif not same_dim(d, dim, op):
                raise ShapeError(
                    "shapes " + ", ".join(str(tuple(s)) for s in shapes)
                    + f" cannot be broadcast together (axis {axis - rank}: {dim} vs {d})", op=op)
        out.append(dim)
    return tuple(out)


def same_dim(a, b, op):
    """Whether dims ``a`` and ``b`` agree. Two ints compare as ints; where a symbolic dim
    is involved and they are not the same expression, the current trace records a guard
    ``a == b`` (checked when the program is prepared) and they count as equal."""
    if a is b or a == b:
        return True
    if type(a) is int and type(b) is int:
        return False
    from .trace import record_guard
    return record_guard(a, b, op)


def at_least(a, b, op):
    """Whether dim ``a >= b``: decided when it can be (ints, or a symbolic difference whose
    smallest value is >= 0); otherwise the current trace records the guard ``a >= b``."""
    diff = a - b
    if type(diff) is int:
        return diff >= 0
    low = diff.lower_bound()
    if low is not None and low >= 0:
        return True
    from .trace import record_guard
    return record_guard(a, b, op, ">=")


def same_shape(a, b, op):
    """Equal rank and pairwise ``same_dim``."""
    if a == b:
        return True
    return len(a) == len(b) and all(same_dim(x, y, op) for x, y in zip(a, b))


def normalize_axis(axis, rank, op="axis"):
    """A non-negative axis for ``rank`` dims, accepting NumPy's negative axes."""
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of bounds for an array of rank {rank}", op=op)
    return axis % rank


def normalize_axes(axis, rank, op="axis"):
    """A sorted tuple of distinct axes from None (all), an int, or a sequence of ints.
    A 0-d array has none: NumPy takes axis 0 or -1 of it and reduces nothing."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        axis = (axis,)
    axes = tuple(normalize_axis(a, max(rank, 1), op) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"repeated axis in {tuple(axis)}", op=op)
    return tuple(sorted(axes)) if rank else ()
