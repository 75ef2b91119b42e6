"""Shapes: tuples whose dims are ints or interned symbols, and the rules that combine them.

A ``Sym`` is a named unknown length (``n``). Symbols are interned, so comparing two dims is
an identity or integer comparison; nothing here builds or copies expression trees.
"""
import math

from ..errors import ShapeError


class Sym:
    """A symbolic dimension; ``Sym('n') is Sym('n')``."""
    __slots__ = ("name", "__weakref__")
    _interned = {}

    def __new__(cls, name):
        existing = cls._interned.get(name)
        if existing is not None:
            return existing
        self = object.__new__(cls)
        self.name = name
        cls._interned[name] = self
        return self

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (Sym, (self.name,))


def is_static(shape):
    return all(type(d) is int for d in shape)


def size(shape):
    """Number of elements of a static shape."""
    return math.prod(shape)


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
            elif d != dim:
                raise ShapeError(
                    "shapes " + ", ".join(str(tuple(s)) for s in shapes)
                    + f" cannot be broadcast together (axis {axis - rank}: {dim} vs {d})", op=op)
        out.append(dim)
    return tuple(out)


def normalize_axis(axis, rank, op="axis"):
    """A non-negative axis for ``rank`` dims, accepting NumPy's negative axes."""
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise ShapeError(f"axis {axis} is out of bounds for an array of rank {rank}", op=op)
    return axis % rank if rank else 0


def normalize_axes(axis, rank, op="axis"):
    """A sorted tuple of distinct axes from None (all), an int, or a sequence of ints."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, int):
        return (normalize_axis(axis, rank, op),)
    axes = tuple(normalize_axis(a, rank, op) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"repeated axis in {tuple(axis)}", op=op)
    return tuple(sorted(axes))
