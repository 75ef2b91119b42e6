"""``tf.lax`` has every public name of ``jax.lax`` and ``jax.lax.linalg`` (as listed in
``tests/jax_names/``, from the JAX version the test extra installs) but a short list of
exclusions, each with its reason."""
import pathlib

import pytest

from tf_numba import _jax_coverage as cov
from tf_numba import lax

JAX_NAMES = pathlib.Path(__file__).parent / "jax_names"
# Names of jax.lax that tf.lax leaves out, with their reasons: tf_numba/_jax_coverage.py's
# (besides every ``*_p``: JAX's Primitive objects are handles into its own rule registries;
# tf_numba's primitives are other objects with another rule API).
EXCLUDED = cov.excluded("jax.lax")


def _jax_names(module):
    lines = (JAX_NAMES / f"{module}.txt").read_text().splitlines()
    return [n for n in lines if n and not n.startswith("#")]


@pytest.mark.parametrize("module,ours", [("jax.lax", lax), ("jax.lax.linalg", lax.linalg)])
def test_every_jax_lax_name_is_here_or_excluded_with_a_reason(module, ours):
    wanted = [n for n in _jax_names(module) if not n.endswith("_p") and n not in EXCLUDED]
    missing = [n for n in wanted if n not in ours.__all__]
    assert missing == [], f"{module} names tf.lax lacks: {missing}"
    assert [n for n in EXCLUDED if n in ours.__all__] == [], "an excluded name is here"


@pytest.mark.parametrize("module", ["jax.lax", "jax.lax.linalg"])
def test_the_listed_names_are_those_of_the_installed_jax(module):
    jax = pytest.importorskip("jax")
    header = (JAX_NAMES / f"{module}.txt").read_text().splitlines()[0]
    if not header.endswith(f"jax {jax.__version__}"):
        pytest.skip(f"the list is of another JAX ({header}); regenerate it for "
                    f"jax {jax.__version__}")
    import importlib
    installed = [n for n in dir(importlib.import_module(module)) if not n.startswith("_")]
    assert sorted(installed) == sorted(_jax_names(module))
