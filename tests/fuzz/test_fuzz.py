"""The differential fuzzer's fixed-seed sample: random programs through every oracle.

Most programs go through the oracles that need no compiled kernel (the interpreter, the
interpreted tier, vmap, the transpose identity, finite differences, bad inputs); a
smaller sample through JAX's values and gradients (JAX runs op by op, ~0.1 s a
program); a small sample of short programs compiles (``jit`` on one and two threads,
the tiers, a plan half compiled, ``jit(grad)``), because each distinct kernel costs
numba ~0.1-1 s. ``perf/fuzz.py`` runs open-ended campaigns with fresh seeds; a failure
here prints a script that reproduces it.

The mutation tests break one rule of tf_numba at a time and show that the same sample
finds it: the oracles would catch that bug were it real.
"""
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import oracles
from random_programs import CUT_PLAN, KERNEL_PLAN, programs

SAMPLE = dict(derandomize=True, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck))


class Sample:
    """A fixed-seed sample: ``count`` programs drawn from ``strategy``, each through
    ``oracles`` (names) within ``timeout`` seconds."""

    def __init__(self, strategy, names, count, timeout):
        self.strategy, self.names, self.count, self.timeout = strategy, names, count, timeout

    def run(self, phases=(Phase.explicit, Phase.generate, Phase.shrink), seen=None):
        @settings(max_examples=self.count, phases=phases, **SAMPLE)
        @given(self.strategy)
        def sample(program):
            if seen is not None:
                seen.append(program)
            oracles.check(program, self.names, timeout=self.timeout)
        sample()

    def first_finding(self):
        """(how many programs ran, the first ``Finding``), or None: the sample as the
        suite runs it, stopped at its first failure, unshrunk."""
        seen = []
        try:
            self.run(phases=(Phase.explicit, Phase.generate), seen=seen)
        except oracles.Finding as found:
            return len(seen), found
        return None


INTERPRETED = Sample(programs(), oracles.INTERPRETED, 300, 60)
REFERENCES = Sample(programs(max_lines=4), oracles.REFERENCES, 40, 60)
# (length-1 partners drawn twice as often: a broadcast's length-1 axis beside a longer one)
COMPILED = Sample(programs(plan=KERNEL_PLAN, sizes=("large", "small"),
                           dtypes=("float64", "float32", "int64", "bool"),
                           partners=("size1", "size1", "grow", "fewer", "same", "literal")),
                  oracles.COMPILED + ("tiered",), 30, 120)
MIXED = Sample(programs(plan=CUT_PLAN, sizes=("small", "tiny")), ("mixed",), 10, 120)


def test_random_programs_agree_across_interpreter_transforms():
    INTERPRETED.run()


def test_random_programs_agree_with_jax():
    pytest.importorskip("jax")
    REFERENCES.run()


def test_random_programs_compile_to_what_the_interpreter_computes():
    COMPILED.run()


def test_random_programs_run_half_compiled_as_the_interpreter_computes():
    MIXED.run()


# ------------------------------------------------------------------------------ mutations

@pytest.fixture
def fresh_plans():
    """No plan or transformed program made before (a broken rule must reach the code it
    breaks) is kept after (nor one made with it)."""
    from tf_numba.runtime import default_runtime
    from tf_numba.transforms.cache import TRANSFORMS

    def clear():
        TRANSFORMS.clear()
        for tiered in (True, False):
            default_runtime(tiered).plans.clear()
    clear()
    yield
    clear()


def test_the_sample_finds_a_wrong_jvp_sign(monkeypatch, fresh_plans):
    from tf_numba.core.linear import Zero
    from tf_numba.core.primitive import RULES
    from tf_numba.ops.elementwise import PRIMS, neg
    sin = PRIMS["sin"]
    right = RULES["jvp"][sin]

    def wrong(primals, tangents, **params):
        ans, t = right(primals, tangents, **params)
        return ans, t if type(t) is Zero else neg(t)
    monkeypatch.setitem(RULES["jvp"], sin, wrong)
    found = INTERPRETED.first_finding()
    assert found is not None, "the sample passed with sin's JVP negated"
    assert found[1].kind == "finite-differences" and "tnp.sin" in found[1].reproduction


def _threaded(nest):
    return nest.chunks is not None and nest.chunks.threaded


def test_the_sample_finds_a_reduction_dropping_its_last_chunk_on_two_threads(
        monkeypatch, fresh_plans):
    from tf_numba.lowering import codegen
    right = codegen._LoopNest.combine_partials

    def wrong(self):
        if not _threaded(self.nest):
            return right(self)
        count = self.par.count
        self.par.count = f"({count} - 1)"
        right(self)
        self.par.count = count
    monkeypatch.setattr(codegen._LoopNest, "combine_partials", wrong)
    found = COMPILED.first_finding()
    assert found is not None, "the sample passed with threaded reductions short of a chunk"
    assert found[1].kind in ("threads", "compiled", "tiered")
    assert "threads=2" in found[1].reproduction


def test_the_sample_finds_a_broadcast_reading_a_length_one_axis_wrongly(
        monkeypatch, fresh_plans):
    from tf_numba.core.primitive import RULES
    from tf_numba.kernel_vocab.rules import IndexMap
    from tf_numba.ops.layout import broadcast_in_dim_p

    def wrong(name, eqn, idx):
        # a length-1 axis is read at 0, and so (wrongly) are the axes beside it
        x = eqn.invars[0]
        if not x.aval.shape:
            return name(x)
        out_shape = eqn.outvars[0].aval.shape
        dims = eqn.params["broadcast_dimensions"]
        ones = [x.aval.shape[k] == 1 and out_shape[d] != 1 for k, d in enumerate(dims)]
        parts = ["0" if any(ones[max(k - 1, 0):k + 2]) else idx[d]
                 for k, d in enumerate(dims)]
        return f"{name(x)}[{', '.join(parts)}]"
    monkeypatch.setitem(RULES["lower"], broadcast_in_dim_p, IndexMap(wrong))
    found = COMPILED.first_finding()
    assert found is not None, "the sample passed with broadcasts misreading length-1 axes"
    assert found[1].kind in ("compiled", "grad-jit", "tiered")
