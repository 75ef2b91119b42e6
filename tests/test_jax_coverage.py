"""tf_numba's public names against JAX's (``docs/jax_names.json``, from the JAX version the
test extra installs): a module marked complete lacks no JAX name but those it leaves out on
purpose, with a reason (``tf_numba/_jax_coverage.py``); a name left out is really absent;
and the list of names is JAX's own where JAX is installed."""
import importlib.util
import json
import subprocess
import sys

import pytest

from tf_numba import _jax_coverage as cov

ROWS = {row[0]: row for row in cov.coverage()}


@pytest.mark.parametrize("module", cov.COMPLETE)
def test_complete_module_lacks_no_jax_name(module):
    _, names, had, skipped, missing = ROWS[module]
    assert missing == [], f"tf_numba lacks {module}'s {missing}: add them or give a reason"


@pytest.mark.parametrize("module", sorted(cov.EXCLUDED))
def test_names_left_out_are_absent_and_jax_s(module):
    _, names, had, skipped, missing = ROWS[module]
    listed = set(cov.excluded(module))
    assert not listed & set(had), f"{module}: {sorted(listed & set(had))} are there now"
    assert listed <= set(names), f"{module}: {sorted(listed - set(names))} are not JAX's"


def test_the_count_only_grows_where_it_was_complete():
    # every module that was complete stays complete; the others list what they lack
    assert set(cov.COMPLETE) <= set(ROWS)
    for module in cov.COMPLETE:
        assert len(ROWS[module][2]) + len(ROWS[module][3]) == len(ROWS[module][1])


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_the_name_lists_are_those_of_the_installed_jax():
    import jax
    version, modules = cov.jax_names()
    if jax.__version__ != version:
        pytest.skip(f"docs/jax_names.json is of JAX {version}, JAX {jax.__version__} is "
                    "installed: run tools/jax_names.py")
    # a fresh interpreter, as the tool runs: which of JAX's submodules show up as attributes
    # of `jax` depends on what this test process has imported before
    tool = cov.NAMES.parents[1] / "tools" / "jax_names.py"
    out = subprocess.run([sys.executable, str(tool), "--print"], capture_output=True,
                         text=True, check=True).stdout
    fresh = json.loads(out)["modules"]
    for module, names in modules.items():
        assert fresh[module] == names, module
