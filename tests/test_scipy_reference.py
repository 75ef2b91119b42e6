"""docs/scipy.md is generated from the code (tf_numba.scipy._reference): the committed page
must equal what the code renders now, and the page must cover every public name."""
import tf_numba.scipy as tsp
from tf_numba.scipy import _reference


def test_docs_scipy_md_is_current():
    rendered = _reference.render()
    committed = _reference.PAGE.read_text() if _reference.PAGE.exists() else ""
    assert committed == rendered, (
        "docs/scipy.md is stale: regenerate it with `python -m tf_numba.scipy._reference` "
        "and commit it")


def test_page_names_every_public_function_and_distribution():
    text = _reference.render()
    for name, module in _reference._modules():
        assert f"## `tf_numba.scipy.{name}`" in text
        for entry, _ in _reference._public(module):
            assert f"`{entry}" in text, f"{name}.{entry} is missing from docs/scipy.md"
    for dist in tsp.stats.DISTRIBUTIONS:
        assert f"| `{dist}` |" in text


def test_sentences_about_accuracy_and_derivatives_are_picked_from_docstrings():
    doc = ("The thing ``f(x)``.\n\n    Within 2 ulps of SciPy's. Derivative ``g(x)``; none in "
           "``y``.\n\n    >>> f(1.0)\n    2.0\n")
    assert _reference._summary(doc) == "The thing ``f(x)``."
    assert _reference._matching(doc, _reference.ACCURACY) == "Within 2 ulps of SciPy's."
    assert _reference._matching(doc, _reference.DERIVATIVE) == (
        "Derivative ``g(x)``; none in ``y``.")
