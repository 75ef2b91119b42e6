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


def test_the_promotion_pairs_that_differ_from_jax_s_are_those_listed():
    import numpy as np

    import tf_numba.numpy as tnp
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
             "uint64", "float16", "float32", "float64", "complex64", "complex128"]
    listed = {(a, b): (ours, jax) for a, b, ours, jax in cov.PROMOTION_DIFFERS}
    listed.update({(b, a): v for (a, b), v in list(listed.items())})
    assert len(listed) == 28
    for a in names:
        for b in names:
            ours = tnp.result_type(np.dtype(a), np.dtype(b))
            assert ours == np.promote_types(a, b)
            if (a, b) in listed:
                assert ours == listed[a, b][0]
    if importlib.util.find_spec("jax") is None:
        return
    import jax
    jax.config.update("jax_enable_x64", True)
    differ = {(a, b): (str(np.promote_types(a, b)), str(jax.numpy.promote_types(a, b)))
              for a in names for b in names
              if np.promote_types(a, b) != jax.numpy.promote_types(a, b)}
    assert differ == listed
