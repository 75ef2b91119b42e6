"""docs/reference.md is what ``python -m tf_numba._reference`` generates from the code,
and every public module shows its API and nothing else."""
import types

import pytest

from tf_numba import _reference

HELPERS = ("np", "numpy", "builtins", "dtypes", "functools", "math", "P", "ew", "layout",
           "pytree")


def test_reference_page_is_current():
    pytest.importorskip("dask.array", reason="the page lists tf.dask, which needs the dask "
                        "extra (the test extra brings it)")
    assert _reference.PAGE.read_text() == _reference.render(), (
        "docs/reference.md is stale: run python -m tf_numba._reference")


@pytest.mark.parametrize("module", _reference.public_modules(), ids=lambda m: m.__name__)
def test_public_module_has_all_and_shows_only_it(module):
    names = module.__all__
    assert len(set(names)) == len(names), "__all__ lists a name twice"
    assert [n for n in names if not hasattr(module, n)] == []
    assert [n for n in dir(module) if not n.startswith("_") and n not in names] == []
    # a helper's name in __all__ is one of JAX's names (tf.numpy, tf.dtypes, tf.P) only
    # when it holds a public object, not the helper module imported under that name
    public = _reference.public_modules()
    assert [n for n in set(HELPERS) & set(names) & set(dir(module))
            if isinstance(getattr(module, n), types.ModuleType)
            and getattr(module, n) not in public] == []


def test_reference_covers_the_issue_modules_and_tnp_namespaces():
    spelled = {m.__name__ for m in _reference.public_modules()}
    for name in ("tf_numba", "tf_numba.numpy", "tf_numba.numpy.linalg", "tf_numba.numpy.fft",
                 "tf_numba.lax", "tf_numba.nn", "tf_numba.random", "tf_numba.scipy.special",
                 "tf_numba.scipy.stats"):
        assert name in spelled
    text = _reference.render()
    assert "| `tf.grad` | function | The gradient of a real scalar function" in text
    assert "| `tnp.pi` | constant |" in text and "`tnp.linalg.solve`" in text


def test_first_sentence_and_mirrors():
    assert _reference._first_sentence("``tnp.fft``: numpy.fft on ops. More.") == (
        "Numpy.fft on ops.")
    assert _reference._mirrored("tf_numba.numpy.fft", "fft2") == "numpy.fft.fft2"
    assert _reference._mirrored("tf_numba.lax", "cond") is None
    kind, line = _reference.describe(types.ModuleType("m", "Does a thing. And more."))
    assert (kind, line) == ("module", "Does a thing.")


def test_primitives_page_is_current():
    assert _reference.PRIMITIVES_PAGE.read_text() == _reference.render_primitives(), (
        "docs/primitives.md is stale: run python -m tf_numba._reference")


def test_rules_table_points_at_the_lines_that_state_each_rule():
    import pathlib

    import tf_numba
    from tf_numba.core.primitive import rules_table
    _reference.render_primitives()          # every declaring module loaded
    package = pathlib.Path(tf_numba.__file__).parent
    table = rules_table()
    assert table["tanh"]["lower"].startswith("ops/elementwise.py:")
    assert table["reduce_max"]["lower"].startswith("ops/reductions.py:")
    assert table["dot_general"]["lower"].startswith("lowering/library.py:")
    assert table["scan"]["partial_eval"].startswith("ops/control.py:")
    for name, row in table.items():
        for role, site in row.items():
            if role == "module" or site is None:
                continue
            path, line = site.rsplit(":", 1)
            assert 0 < int(line) <= len((package / path).read_text().splitlines()), \
                (name, role, site)
