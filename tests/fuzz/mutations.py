"""Three rules of tf_numba broken on purpose, one at a time, to show that the fuzzer's
fixed-seed samples would find each were it a real bug (``test_fuzz.py`` asserts it;
``perf/fuzz.py --mutations`` says how long each takes).

A mutation is a context manager that patches the rule (the library is never edited) and
clears every cached plan and transformed program on either side: the broken rule must
reach the code it breaks, and nothing made with it may outlive it. The patches reach
into the compiler's code generation (``codegen._LoopNest``): when that changes, the
mutation test fails and the patch is written again.
"""
import contextlib

import pytest

import samples


def _clear_plans():
    from tf_numba.runtime import default_runtime
    from tf_numba.transforms.cache import TRANSFORMS
    TRANSFORMS.clear()
    for tiered in (True, False):
        default_runtime(tiered).plans.clear()


@contextlib.contextmanager
def _mutated(patch):
    _clear_plans()
    try:
        with pytest.MonkeyPatch.context() as mp:
            patch(mp)
            yield
    finally:
        _clear_plans()


def _negated_sin_jvp(mp):
    """sin's tangent has the wrong sign."""
    from tf_numba.core.linear import Zero
    from tf_numba.core.primitive import RULES
    from tf_numba.ops.elementwise import PRIMS, neg
    sin = PRIMS["sin"]
    right = RULES["jvp"][sin]

    def wrong(primals, tangents, **params):
        ans, t = right(primals, tangents, **params)
        return ans, t if type(t) is Zero else neg(t)
    mp.setitem(RULES["jvp"], sin, wrong)


def _threaded_reduction_short_a_chunk(mp):
    """A reduction split across threads combines all of its chunks' parts but the last."""
    from tf_numba.lowering import codegen
    right = codegen._LoopNest.combine_partials

    def wrong(self):
        if self.nest.chunks is None or not self.nest.chunks.threaded:
            return right(self)
        # the loops over the chunks' parts stop one short (a scalar's parts and an array's
        # rows alike); the parts themselves are as many as the chunks
        em, count = self.em, self.par.count
        emit = em.emit

        def short(line):
            emit(line.replace(f"range({count})", f"range({count} - 1)")
                     .replace(f"range(1, {count})", f"range(1, {count} - 1)"))
        em.emit = short
        try:
            right(self)
        finally:
            del em.emit
    mp.setattr(codegen._LoopNest, "combine_partials", wrong)


def _broadcast_misreading_length_one(mp):
    """A broadcast in a fused loop reads an operand's length-1 axis at 0 (right), and so,
    wrongly, the axes beside it (the stride of the length-1 axis taken for theirs)."""
    from tf_numba.core.primitive import RULES
    from tf_numba.kernel_vocab.rules import IndexMap
    from tf_numba.ops.layout import broadcast_in_dim_p

    def wrong(name, eqn, idx):
        x = eqn.invars[0]
        if not x.aval.shape:
            return name(x)
        out_shape = eqn.outvars[0].aval.shape
        dims = eqn.params["broadcast_dimensions"]
        ones = [x.aval.shape[k] == 1 and out_shape[d] != 1 for k, d in enumerate(dims)]
        parts = ["0" if any(ones[max(k - 1, 0):k + 2]) else idx[d]
                 for k, d in enumerate(dims)]
        return f"{name(x)}[{', '.join(parts)}]"
    mp.setitem(RULES["lower"], broadcast_in_dim_p, IndexMap(wrong))


class Mutation:
    """A broken rule, the sample that must find it, and the kinds of finding that may."""

    def __init__(self, patch, sample, kinds, reproduction_has=""):
        self.patch, self.sample, self.kinds = patch, sample, kinds
        self.reproduction_has = reproduction_has

    def first_finding(self):
        """``Sample.first_finding`` with the rule broken."""
        with _mutated(self.patch):
            return self.sample.first_finding()


MUTATIONS = {
    "a wrong JVP sign (sin)": Mutation(_negated_sin_jvp, samples.INTERPRETED,
                                       ("finite-differences",), "tnp.sin"),
    "a threaded reduction dropping its last chunk": Mutation(
        _threaded_reduction_short_a_chunk, samples.COMPILED, ("threads", "compiled", "tiered"),
        "threads=2"),
    "a broadcast reading a length-1 axis's stride for its neighbours": Mutation(
        _broadcast_misreading_length_one, samples.COMPILED, ("compiled", "grad-jit", "tiered")),
}
