"""Dims in generated code are written in terms of the kernel's input shapes.

A symbolic dim (``n``, ``3*n``, ``n - 1``) is written through the input axis its symbols
were read from. A concrete dim is written as ``in0.shape[1]`` (or ``in0.shape[1] - 1``,
``in0.shape[0] * in1.shape[1]``) when the value can be read off the inputs, and as a
literal otherwise. The kernel cache is keyed by the source text, so a kernel is reused
exactly when the same code applies: a new length hits, and a program whose dims relate to
its inputs differently gets its own kernel.
"""
from itertools import combinations_with_replacement

from ..core.shapes import Sym

_OFFSETS = (-1, 1, -2, 2)


class DimEnv:
    """Maps dims (ints or Syms) to source expressions over the kernel inputs' shapes."""

    def __init__(self, in_avals, in_names):
        self.exact = {}
        self.atoms = {}
        sources = []
        for aval, name in zip(in_avals, in_names):
            for axis, d in enumerate(aval.shape):
                src = f"{name}.shape[{axis}]"
                if isinstance(d, Sym):
                    self.exact.setdefault(d, src)
                    if len(d.terms) == 1 and d.terms[0][1] == 1 and len(d.terms[0][0]) == 1:
                        self.atoms.setdefault(d.terms[0][0][0], src)
                elif d > 1 and d not in self.exact:
                    self.exact[d] = src
                    sources.append((d, src))
        self.products = {}
        for (a, ea), (b, eb) in combinations_with_replacement(sources, 2):
            self.products.setdefault(a * b, f"({ea} * {eb})")

    def expr(self, d):
        """Source for the dim ``d``."""
        if isinstance(d, Sym):
            return self.exact.get(d) or self._polynomial(d)
        if d <= 1:
            return str(d)
        found = self.exact.get(d) or self.products.get(d)
        if found is not None:
            return found
        for off in _OFFSETS:
            base = self.exact.get(d - off)
            if base is not None:
                return f"({base} {'+' if off > 0 else '-'} {abs(off)})"
        return str(d)

    def _polynomial(self, d):
        terms = []
        for monomial, coeff in d.terms:
            factors = [str(coeff)] + [self.atoms[a] for a in monomial]
            terms.append(" * ".join(factors))
        return "(" + " + ".join(terms) + ")"

    def writable(self, shape):
        """Can every dim of ``shape`` be written from the inputs (a symbol only a value
        computed inside the kernel carries, such as a while loop's trip count, cannot)?"""
        return all(not isinstance(d, Sym) or d in self.exact
                   or all(a in self.atoms for m, _ in d.terms for a in m) for d in shape)

    def shape(self, shape):
        """Source of a shape tuple."""
        if not shape:
            return "()"
        return "(" + ", ".join(self.expr(d) for d in shape) + ",)"
