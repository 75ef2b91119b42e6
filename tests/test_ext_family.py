"""The extension-family registry: the README's worked example runs, ids are unique and
well-formed, and a missing rule is a MissingRuleError naming family, op and role, raised
when the transform is applied."""
import pathlib
import re

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.core.linear import defjvp
from tf_numba.core.primitive import rule
from tf_numba.errors import MissingRuleError, TfNumbaError
from tf_numba.ext import FAMILIES, Family, family

README = pathlib.Path(tf.__file__).parent / "ext" / "README.md"


@pytest.fixture(scope="module")
def toy():
    """The README's example block, run as it is written."""
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "the README should hold one python example"
    namespace = {"__name__": "readme_example"}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    return namespace


def test_readme_quotes_the_missing_rule_error_as_it_is_raised():
    quoted = re.search(r"```\n(linalg\.svd: .*?)\n```", README.read_text(), re.S).group(1)
    with pytest.raises(MissingRuleError) as excinfo:
        rule("transpose", family("tf_numba.linalg.v1").ops["svd"])
    assert str(excinfo.value) == " ".join(quoted.split("\n"))


def test_readme_example_runs_and_registers_its_family(toy):
    assert family("example.toy.v1") is toy["toy"]
    assert toy["toy"].rules() == {"cumsum": {"jvp": True, "transpose": True, "batch": True,
                                             "lower": True}}


def test_readme_op_has_correct_derivatives(toy):
    from ad_checks import check_grads
    x = np.random.default_rng(0).standard_normal((2, 5))
    check_grads(lambda x: toy["cumsum"](x, reverse=True), (x,), order=2)


def test_builtin_families_are_registered():
    assert {"tf_numba.einsum.v1", "tf_numba.linalg.v1", "tf_numba.fft.v1"} <= set(FAMILIES)
    assert family("tf_numba.linalg.v1").ops["svd"].family == "tf_numba.linalg.v1"
    linear = {"linalg.solve", "linalg.triangular_solve", "linalg.expm_frechet", "fft.fft",
              "fft.ifft", "fft.rfft", "fft.irfft"}
    # LAPACK's Householder forms, without derivatives as in JAX (tf.lax.linalg)
    values_only = {"linalg.hessenberg", "linalg.tridiagonal", "linalg.householder_product"}
    for fam in ("tf_numba.linalg.v1", "tf_numba.fft.v1"):
        for name, prim in family(fam).ops.items():
            roles = family(fam).rules()[name]
            needed = (("jvp",) if prim.name not in values_only else ()) + ("batch", "lower") + (
                ("transpose",) if prim.name in linear else ())
            assert all(roles[r] for r in needed), f"{fam} op {name} lacks a rule: {roles}"


def test_family_ids_are_unique_and_versioned():
    with pytest.raises(TfNumbaError, match="already registered"):
        Family("tf_numba.linalg.v1", module=__name__)
    with pytest.raises(TfNumbaError, match="owner.name.v1"):
        Family("no_version", module=__name__)
    with pytest.raises(KeyError, match="known"):
        family("nobody.nothing.v1")


def test_host_ops_name_the_blas_library_they_call():
    """Each linalg op that calls BLAS or LAPACK says which library (a plan runs that one
    wide); a name that is neither library is refused and declares nothing."""
    from tf_numba.ext import HOST_BLAS, NUMPY_BLAS, SCIPY_BLAS
    ops = family("tf_numba.linalg.v1").ops
    assert HOST_BLAS[ops["eigh"]] == HOST_BLAS[ops["svd"]] == NUMPY_BLAS
    assert HOST_BLAS[ops["expm"]] == SCIPY_BLAS
    assert ops["lu_pivots_to_permutation"] not in HOST_BLAS
    fam = Family("tests.blas_names.v1", module=__name__)
    with pytest.raises(TfNumbaError, match="blas of tests.blas_names.v1's op 'gemm'"):
        fam.op("gemm", lambda x: x, np.copy, blas="mkl")
    assert "gemm" not in fam.ops


@pytest.fixture(scope="module")
def bare():
    """A family whose ops each lack one rule."""
    fam = Family("tests.bare.v1", module=__name__)
    same = lambda x: x  # noqa: E731
    no_jvp = fam.op("no_jvp", same, np.sin)
    linear_no_transpose = fam.op("linear_no_transpose", same, lambda x: 2 * x)
    defjvp(linear_no_transpose, lambda g, ans, x: linear_no_transpose.bind(g))
    no_lowering = fam.op("no_lowering", same, np.cos, lowering=None)
    return fam, no_jvp, linear_no_transpose, no_lowering


def _missing(excinfo, op, role):
    err = excinfo.value
    text = str(err)
    assert "tests.bare.v1" in text and op in text and role in text, text
    assert err.role == role


def test_missing_jvp_rule_raises_when_grad_is_applied(bare):
    _, no_jvp, _, _ = bare
    with pytest.raises(MissingRuleError) as excinfo:
        tf.grad(lambda x: tnp.sum(no_jvp.bind(x)))(np.ones(3))
    _missing(excinfo, "bare.no_jvp", "jvp")
    with pytest.raises(MissingRuleError):
        tf.jvp(lambda x: no_jvp.bind(x), (np.ones(3),), (np.ones(3),))


def test_missing_transpose_rule_raises_in_reverse_mode_only(bare):
    _, _, op, _ = bare
    _, t = tf.jvp(lambda x: op.bind(x), (np.ones(3),), (np.ones(3),))
    assert np.allclose(t, 2.0)
    with pytest.raises(MissingRuleError) as excinfo:
        tf.grad(lambda x: tnp.sum(op.bind(x)))(np.ones(3))
    _missing(excinfo, "bare.linear_no_transpose", "transpose")


def test_missing_batching_rule_is_reported_by_the_rule_lookup(bare):
    # tf_numba has no vmap yet; this is the lookup every transform goes through
    _, no_jvp, _, _ = bare
    with pytest.raises(MissingRuleError) as excinfo:
        rule("batch", no_jvp)
    _missing(excinfo, "bare.no_jvp", "batch")


def test_missing_lowering_raises_when_jit_prepares(bare):
    fam, _, _, no_lowering = bare
    assert fam.rules()["no_lowering"]["lower"] is False
    x = np.ones(3)
    assert np.allclose(no_lowering.bind(x), np.cos(x))      # eager calls still work
    with pytest.raises(MissingRuleError) as excinfo:
        tf.jit(lambda x: no_lowering.bind(x) + 1.0, tiered=False)(x)
    _missing(excinfo, "bare.no_lowering", "lower")


def test_rules_register_only_for_own_ops(bare):
    fam = bare[0]
    with pytest.raises(TfNumbaError, match="not an op of family"):
        fam.jvp(family("tf_numba.linalg.v1").ops["svd"])


def test_batching_rules_match_a_loop_over_the_batch():
    # no vmap transform exists yet: call the registered rules the way it will
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    solve = family("tf_numba.linalg.v1").ops["solve"]
    out, out_dim = rule("batch", solve)([np.moveaxis(a, 0, 2), b], [2, None])
    assert out_dim == 0
    np.testing.assert_allclose(out, np.stack([np.linalg.solve(m, b) for m in a]))
    svd = family("tf_numba.linalg.v1").ops["svd"]
    outs, dims = rule("batch", svd)([a], [0], full_matrices=False)
    assert dims == [0, 0, 0]
    np.testing.assert_allclose(outs[1], np.linalg.svd(a, compute_uv=False))
    fft = family("tf_numba.fft.v1").ops["rfft"]
    x = rng.standard_normal((5, 4, 8))
    out, out_dim = rule("batch", fft)([x], [1], axes=(1,), lengths=(8,), norm="ortho")
    assert out_dim == 0
    np.testing.assert_allclose(out, np.fft.rfft(np.moveaxis(x, 1, 0), axis=2, norm="ortho"))
