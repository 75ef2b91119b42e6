"""The fuzzer's fixed-seed samples, as the suite runs them (``test_fuzz.py``) and as the
mutation check times them (``perf/fuzz.py --mutations``).

Most programs go through the oracles that need no compiled kernel; a smaller sample
through JAX's (JAX runs op by op, ~0.1 s a program); a small sample of short programs
compiles, because each distinct kernel costs numba ~0.1-1 s.
"""
from hypothesis import HealthCheck, Phase, assume, given, seed, settings

import oracles
from random_programs import CUT_PLAN, KERNEL_PLAN, programs

SETTINGS = dict(database=None, deadline=None, print_blob=False,
                suppress_health_check=list(HealthCheck))


class Sample:
    """A fixed-seed sample: ``count`` programs drawn from ``strategy`` by hypothesis from
    ``seed``, each through ``oracles`` (names) within ``timeout`` seconds."""

    def __init__(self, strategy, names, count, timeout, seed=0):
        self.strategy, self.names, self.count, self.timeout = strategy, names, count, timeout
        self.seed = seed

    def run(self, phases=(Phase.explicit, Phase.generate, Phase.shrink), seen=None):
        passed = set()

        @seed(self.seed)
        @settings(max_examples=self.count, phases=phases, **SETTINGS)
        @given(self.strategy)
        def sample(program):
            # (hypothesis draws variations of a program it drew: a program that passed
            # counts once; one that failed is drawn again while hypothesis shrinks it)
            assume(program.script() not in passed)
            if seen is not None:
                seen.append(program)
            oracles.check(program, self.names, timeout=self.timeout)
            passed.add(program.script())
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
# (inputs of two axes or more, length-1 partners drawn twice as often: a broadcast's
# length-1 axis beside a longer one)
COMPILED = Sample(programs(plan=KERNEL_PLAN, sizes=("large", "small"), min_rank=2,
                           dtypes=("float64", "float32", "int64", "bool"),
                           partners=("size1", "size1", "grow", "fewer", "same", "literal")),
                  oracles.COMPILED + ("tiered",), 40, 120)
MIXED = Sample(programs(plan=CUT_PLAN, sizes=("small", "tiny")), ("mixed",), 10, 120)
