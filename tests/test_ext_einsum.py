"""einsum (family tf_numba.einsum.v1): NumPy's notation and values, contraction orders, the
plan cache, derivatives to second order, and jit."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError
from tf_numba.ext import einsum as E

from ad_checks import check_grads
from schedule_checks import calls, products


def arr(*shape, seed=0):
    return np.random.default_rng(seed + 11 * len(shape)).standard_normal(shape)


# (subscripts, operand shapes)
EXPRESSIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),                       # implicit output
    ("ca,aB", [(2, 3), (3, 4)]),                       # implicit output sorts by code: B < c
    ("ii", [(3, 3)]),                                  # trace
    ("ii->i", [(3, 3)]),                               # diagonal
    ("iij->j", [(2, 2, 3)]),
    ("iji->ij", [(2, 3, 2)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("i->", [(3,)]),
    ("i,i", [(3,), (3,)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("i...,i...", [(3, 2), (3,)]),
    ("...,...", [(3, 2), ()]),
    ("bij,jk,bk->bi", [(2, 3, 4), (4, 5), (2, 5)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ijkl,jl->ik", [(2, 3, 4, 5), (3, 5)]),
    ("a,a,a->a", [(3,), (3,), (3,)]),
    ("ab,bc,cd,de,ef,fa->", [(2, 3), (3, 4), (4, 5), (5, 2), (2, 3), (3, 2)]),
    ("ij,jk", [(2, 1), (3, 4)]),                       # size-1 broadcast of a contracted label
    ("ij,ij->", [(1, 3), (2, 1)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]),
]


@pytest.mark.parametrize("optimize", ["greedy", "optimal", False])
@pytest.mark.parametrize("subscripts,shapes", EXPRESSIONS)
def test_einsum_matches_numpy(subscripts, shapes, optimize):
    ops = [arr(*s, seed=k) for k, s in enumerate(shapes)]
    expected = np.einsum(subscripts, *ops)
    out = tnp.einsum(subscripts, *ops, optimize=optimize)
    assert type(out) is type(expected)
    assert np.shape(out) == np.shape(expected)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_einsum_sublist_form_and_tf_alias():
    a, b = arr(2, 3), arr(3, seed=1)
    np.testing.assert_allclose(tnp.einsum(a, [0, 1], b, [1], [0]),
                               np.einsum(a, [0, 1], b, [1], [0]))
    np.testing.assert_allclose(tf.einsum(a, [Ellipsis, 1], b, [1]),
                               np.einsum(a, [Ellipsis, 1], b, [1]))


def test_einsum_dtypes_promote_and_bool_is_logical():
    a32, b = arr(2, 3).astype(np.float32), arr(3, 2)
    assert tnp.einsum("ij,jk", a32, a32.T).dtype == np.float32
    assert tnp.einsum("ij,jk", a32, b).dtype == np.float64
    z = arr(2, 3) + 1j * arr(2, 3, seed=1)
    np.testing.assert_allclose(tnp.einsum("ij,kj->ik", z, z), np.einsum("ij,kj->ik", z, z))
    m = np.array([[True, False], [False, False]])
    assert tnp.einsum("ij,jk->ik", m, m).dtype == np.bool_
    np.testing.assert_array_equal(tnp.einsum("ij,jk->ik", m, m), np.einsum("ij,jk->ik", m, m))
    ints = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(tnp.einsum("ij,kj", ints, ints), np.einsum("ij,kj", ints, ints))


@pytest.mark.parametrize("subscripts,shapes,message", [
    ("ij,jk", [(2, 3), (4, 5)], "broadcast"),
    ("ij", [(2, 3, 4)], "does not match"),
    ("ij,jk->iz", [(2, 3), (3, 4)], "appears in no input"),
    ("ij->ii", [(2, 2)], "repeat"),
    ("i,j", [(2,)], "operands"),
    ("ii", [(2, 3)], "sizes 2 and 3"),
    ("...i->i", [(2, 3)], "ellipsis"),
])
def test_einsum_errors_name_the_problem(subscripts, shapes, message):
    with pytest.raises(ShapeError, match=message):
        tnp.einsum(subscripts, *[np.ones(s) for s in shapes])


def _flops(subscripts, shapes, path):
    """Total multiply-adds of a pairwise path (labels of each pair times their sizes)."""
    labels, out = E._parse(subscripts, [len(s) for s in shapes])
    sizes = E._label_sizes(labels, shapes)
    sets = [frozenset(ls) for ls in labels]
    total = 0
    for i, j in path:
        rest = [s for k, s in enumerate(sets) if k not in (i, j)]
        keep = set(out).union(*rest)
        total += E._size(sets[i] | sets[j], sizes)
        sets = rest + [E._result_labels(sets[i], sets[j], keep)]
    return total


def test_optimal_order_is_no_worse_than_greedy_and_than_left_to_right():
    subscripts = "ab,bc,cd,de,ef->af"
    shapes = ((2, 50), (50, 3), (3, 60), (60, 4), (4, 5))
    cost = {opt: _flops(subscripts, shapes, E.plan(subscripts, shapes, opt).path)
            for opt in ("greedy", "optimal", False)}
    assert cost["optimal"] <= cost["greedy"] <= cost[False]


def test_optimal_matches_opt_einsum_when_installed():
    oe = pytest.importorskip("opt_einsum")
    subscripts = "ab,bc,cd,de,ea->"
    shapes = ((4, 30), (30, 5), (5, 40), (40, 6), (6, 4))
    ours = _flops(subscripts, shapes, E.plan(subscripts, shapes, "optimal").path)
    theirs_path, _ = oe.contract_path(subscripts, *[np.empty(s) for s in shapes],
                                      optimize="optimal")
    assert ours <= _flops(subscripts, shapes, theirs_path)
    ops = [arr(*s, seed=k) for k, s in enumerate(shapes)]
    np.testing.assert_allclose(tnp.einsum(subscripts, *ops, optimize="dp"),
                               np.einsum(subscripts, *ops), rtol=1e-10)


def test_given_path_is_used_in_numpy_and_plain_form():
    ops = [arr(2, 3), arr(3, 4, seed=1), arr(4, 5, seed=2)]
    path, _ = np.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")
    expected = np.einsum("ij,jk,kl->il", *ops)
    for given in (path, [(1, 2), (0, 1)]):
        np.testing.assert_allclose(tnp.einsum("ij,jk,kl->il", *ops, optimize=given), expected)
    assert tnp.einsum_path("ij,jk,kl->il", *ops, optimize=[(1, 2), (0, 1)])[0] == \
        ["einsum_path", (1, 2), (0, 1)]
    with pytest.raises(ShapeError, match="leaves"):
        tnp.einsum("ij,jk,kl->il", *ops, optimize=[(0, 1)])


def test_plan_is_cached_per_specialization():
    ops = [arr(3, 4), arr(4, 5, seed=1)]
    tnp.einsum("ij,jk->ik", *ops)
    before = E.plan.cache_info()
    tnp.einsum("ij,jk->ik", *[o + 1 for o in ops])
    after = E.plan.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
    tnp.einsum("ij,jk->ik", arr(3, 6), arr(6, 5))
    assert E.plan.cache_info().misses == after.misses + 1


def test_einsum_lowers_to_dot_general_and_layout_ops():
    program = tf.make_program(lambda a, b, c: tnp.einsum("bij,jk,bk->bi", a, b, c))(
        arr(2, 3, 4), arr(4, 5), arr(2, 5))
    names = {e.prim.name for e in program.eqns}
    assert "dot_general" in names
    assert names <= {"dot_general", "transpose", "reshape", "reduce_sum", "slice"}


GRAD_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("bij,jk,bk->bi", [(2, 3, 4), (4, 5), (2, 5)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ij->i", [(1, 3), (2, 1)]),
]


@pytest.mark.parametrize("subscripts,shapes", GRAD_CASES)
def test_einsum_derivatives_to_second_order(subscripts, shapes):
    ops = [arr(*s, seed=k) for k, s in enumerate(shapes)]
    check_grads(lambda *xs: tnp.einsum(subscripts, *xs), ops, order=2)


def test_einsum_complex_derivatives():
    z = arr(2, 3) + 1j * arr(2, 3, seed=1)
    w = arr(3, 2, seed=2) + 1j * arr(3, 2, seed=3)
    check_grads(lambda a, b: tnp.einsum("ij,jk->ik", a, b), (z, w), order=2)


def test_tenferro_regression_einsum_gradient_under_size1_broadcast():
    # tenferro 0.8 returns a gradient of the broadcast shape (or sums it wrong) for an
    # operand whose size-1 axis is broadcast against a longer one.
    a, b = arr(2, 1), arr(3, 4, seed=1)
    ga, gb = tf.grad(lambda a, b: tnp.sum(tnp.einsum("ij,jk->ik", a, b) ** 2),
                     argnums=(0, 1))(a, b)
    assert ga.shape == (2, 1) and gb.shape == (3, 4)
    out = a @ np.ones((1, 3)) @ b
    np.testing.assert_allclose(ga, (2 * out @ b.T).sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(gb, np.ones((3, 1)) @ a.T @ (2 * out), rtol=1e-12)
    x, y = arr(1, 2, 3), arr(4, 3, 2, seed=2)
    check_grads(lambda x, y: tnp.einsum("bij,bjk->bik", x, y), (x, y), order=2)
    gx = tf.grad(lambda x, y: tnp.sum(tnp.einsum("bij,bjk->bik", x, y)))(x, y)
    assert gx.shape == (1, 2, 3)


def test_einsum_jit_matches_eager():
    def f(a, b, c, d):
        bilinear = tnp.einsum("bij,jk,bk->bi", a, b, c)
        trace = tnp.einsum("ii", d)
        return tnp.einsum("bi,bi->b", bilinear, bilinear) * trace

    args = (arr(2, 3, 4), arr(4, 5, seed=1), arr(2, 5, seed=2), arr(3, 3, seed=3))
    jitted = tf.jit(f, tiered=False)
    np.testing.assert_allclose(jitted(*args), f(*args), rtol=1e-12)
    grad_f = tf.grad(lambda *xs: tnp.sum(f(*xs)), argnums=(0, 1, 2, 3))
    for g_jit, g in zip(tf.jit(grad_f, tiered=False)(*args), grad_f(*args)):
        np.testing.assert_allclose(g_jit, g, rtol=1e-12)


# per-batch matrices read as they are (row-major or through a transpose) and batched
# matrix-vector products on either side, under jit, against NumPy
LAYOUTS = [
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("bji,bjk->bik", [(3, 5, 4), (3, 5, 2)]),
    ("bij,bkj->bik", [(3, 4, 5), (3, 2, 5)]),
    ("bji,bkj->bik", [(3, 5, 4), (3, 2, 5)]),
    ("bij,bj->bi", [(3, 4, 5), (3, 5)]),
    ("bji,bj->bi", [(3, 5, 4), (3, 5)]),
    ("bj,bjk->bk", [(3, 5), (3, 5, 4)]),
    ("bj,bkj->bk", [(3, 5), (3, 4, 5)]),
    ("bj,bj->b", [(3, 5), (3, 5)]),
    ("bij,bj->bi", [(2, 200, 100), (2, 100)]),         # too big for loops: gemv per batch
    ("bcij,bcjk->bcik", [(2, 3, 4, 5), (2, 3, 5, 2)]),
    ("ji,jk->ik", [(5, 4), (5, 2)]),
]


@pytest.mark.parametrize("subscripts,shapes", LAYOUTS)
def test_einsum_jit_reads_operand_layouts(subscripts, shapes):
    ops = [arr(*s, seed=k) for k, s in enumerate(shapes)]
    jitted = tf.jit(lambda *xs: tnp.einsum(subscripts, *xs), tiered=False)
    np.testing.assert_allclose(jitted(*ops), np.einsum(subscripts, *ops), rtol=1e-12)
    loss = tf.grad(lambda *xs: tnp.sum(tnp.einsum(subscripts, *xs) ** 2),
                   argnums=tuple(range(len(ops))))
    for got, want in zip(tf.jit(loss, tiered=False)(*ops), loss(*ops)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_bilinear_plan_and_its_gradient_copy_no_operand():
    # bk,jk contracts first; leaving bj (not jb) lets bij,bj read both operands as they
    # are, and the gradient's outer product of (b, i) and (b, j) writes along rows
    args = (arr(4, 3, 6), arr(6, 5, seed=1), arr(4, 5, seed=2))
    f = lambda a, b, c: tnp.einsum("bij,jk,bk->bi", a, b, c)  # noqa: E731
    grad = tf.grad(lambda *xs: tnp.sum(f(*xs) ** 2), argnums=(0, 1, 2))
    for fn in (f, grad):
        jf = tf.jit(fn, tiered=False)
        assert not calls(jf, *args, prim="transpose")
        assert all(p.copied == (False, False) for p in products(jf, *args))
