"""The differential fuzzer's fixed-seed samples (``samples.py``): random programs through
every oracle. ``perf/fuzz.py`` runs open-ended campaigns with fresh seeds; a failure here
prints a script that reproduces it.

The mutation tests break one rule of tf_numba at a time (``mutations.py``) and show that
the same samples find it: the oracles would catch that bug were it real.
"""
import pytest

from mutations import MUTATIONS
from samples import COMPILED, INTERPRETED, MIXED, REFERENCES


def test_random_programs_agree_across_interpreter_transforms():
    INTERPRETED.run()


def test_random_programs_agree_with_jax():
    pytest.importorskip("jax")
    REFERENCES.run()


def test_random_programs_compile_to_what_the_interpreter_computes():
    COMPILED.run()


def test_random_programs_run_half_compiled_as_the_interpreter_computes():
    MIXED.run()


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_the_sample_finds_a_broken_rule(name):
    mutation = MUTATIONS[name]
    found = mutation.first_finding()
    assert found is not None, f"the sample passed with {name}"
    assert found[1].kind in mutation.kinds, found[1]
    assert mutation.reproduction_has in found[1].reproduction
