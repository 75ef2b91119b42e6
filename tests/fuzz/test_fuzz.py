"""The differential fuzzer's fixed-seed sample: random programs through every oracle.

Most programs go through the oracles that need no compiled kernel (the interpreter, the
interpreted tier, vmap, the transpose identity, finite differences, bad inputs); a small
sample of short programs also compiles (``jit`` on one and two threads, ``jit(grad)``),
because each distinct kernel costs numba ~0.1-1 s. ``perf/fuzz.py`` runs open-ended
campaigns with fresh seeds; a failure here prints a script that reproduces it.
"""
from hypothesis import HealthCheck, Phase, given, settings

import oracles
from random_programs import programs

SAMPLE = dict(derandomize=True, database=None, deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck),
              phases=(Phase.explicit, Phase.generate, Phase.shrink))


@settings(max_examples=300, **SAMPLE)
@given(programs())
def test_random_programs_agree_across_interpreter_transforms(program):
    oracles.check(program, oracles.INTERPRETED, timeout=60)


# Short programs that fuse into loop nests: an elementwise function, a step against an
# operand with axes of length 1 (or fewer axes, or more), then a reduction, sized around the
# thresholds where kernels switch (unrolled, chunked, two threads). Few distinct
# kernels: each costs numba ~0.1-1 s.
KERNEL_PLAN = (("unary",), ("binary", "where", "layout"), ("reduce", "reduce", "cumulative"))


@settings(max_examples=40, **SAMPLE)
@given(programs(plan=KERNEL_PLAN, sizes=("large", "small"),
                dtypes=("float64", "float32", "int64", "bool"),
                partners=("size1", "grow", "fewer", "same", "literal")))
def test_random_programs_compile_to_what_the_interpreter_computes(program):
    oracles.check(program, oracles.COMPILED, timeout=120)
