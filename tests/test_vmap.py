"""vmap: every primitive's batching rule against a Python loop of calls (random in_axes,
None and negative axes, out_axes), per-example gradients, jit(vmap), vmap(vmap), and the
Jacobians built on vmap."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import MissingRuleError, ShapeError, TfIndexError, TfNumbaError
from tf_numba.ops import contraction as C
from tf_numba.ops import elementwise as E
from tf_numba.ops import indexing as I
from tf_numba.ops import layout as L
from tf_numba.ops import reductions as R
from tf_numba.ops import sorting as S
from tf_numba.ops import special as SP

from ad_checks import assert_close

SIZE = 3


def _loop(fn, args, in_axes, out_axis):
    """The reference: call ``fn`` once per example and stack the results."""
    outs = []
    for b in range(SIZE):
        sliced = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(fn(*sliced))
    if isinstance(outs[0], (list, tuple)):
        return [np.stack([np.asarray(o[k]) for o in outs], axis=out_axis)
                for k in range(len(outs[0]))]
    return np.stack([np.asarray(o) for o in outs], axis=out_axis)


def _batched_args(rng, example, in_axes):
    """Per argument: stack SIZE random variants of ``example`` along the batch axis."""
    args = []
    for x, ax in zip(example, in_axes):
        x = np.asarray(x)
        if ax is None:
            args.append(x)
            continue
        variants = [_perturb(rng, x) for _ in range(SIZE)]
        args.append(np.stack(variants, axis=ax))
    return args


def _perturb(rng, x):
    if x.dtype.kind == "f":
        return x + rng.normal(0, 0.3, x.shape).astype(x.dtype)
    if x.dtype.kind == "b":
        return rng.random(x.shape) < 0.5
    return x   # integer arguments are indices: keep them valid


def _random_axes(rng, example, batchable):
    while True:
        axes = []
        for x, ok in zip(example, batchable):
            rank = np.ndim(x) + 1
            if not ok or rng.random() < 0.3:
                axes.append(None)
            else:
                ax = int(rng.integers(0, rank))
                axes.append(ax - rank if rng.random() < 0.3 else ax)
        if any(a is not None for a in axes):
            return axes


def _x(*shape):
    return np.random.default_rng(sum(shape) + len(shape)).normal(size=shape)


def _pos(*shape):
    return np.abs(_x(*shape)) + 0.5


IDX = np.array([[2], [0], [1], [2]])
DN_MATMUL = (((1,), (0,)), ((), ()))
DN_BATCHED = (((2,), (1,)), ((0,), (0,)))

# (name, fn, example args, which args may be batched)
CASES = [
    ("sin", E.sin, [_x(4, 2)], None),
    ("add", E.add, [_x(4, 2), _x(4, 2)], None),
    ("add_scalar_operand", E.add, [_x(4, 2), _x()], None),
    ("mul_scalars", E.mul, [_x(), _x()], None),
    ("div", E.div, [_x(3), _pos(3)], None),
    ("pow", E.pow, [_pos(3), _x(3)], None),
    ("max", E.max, [_x(2, 3), _x(2, 3)], None),
    ("lt", E.lt, [_x(5), _x(5)], None),
    ("select", E.select, [_x(2, 3) > 0, _x(2, 3), _x(2, 3)], None),
    ("select_scalar_pred", E.select, [np.array(True), _x(2, 3), _x(2, 3)], None),
    ("clamp", E.clamp, [_x(), _x(4), _x() + 1], None),
    ("convert_element_type", lambda x: E.convert_element_type(x, np.float32), [_x(3, 2)], None),
    ("stop_gradient", E.stop_gradient, [_x(3)], None),
    ("lgamma", SP.lgamma, [_pos(4)], None),
    ("xlogy", SP.xlogy, [_x(4), _pos(4)], None),
    ("broadcast_in_dim", lambda x: L.broadcast_in_dim(x, (2, 3, 4), (1,)), [_x(3)], None),
    ("broadcast_in_dim_ones", lambda x: L.broadcast_in_dim(x, (2, 3, 4), (0, 2)),
     [_x(1, 4)], None),
    ("broadcast_scalar", lambda x: L.broadcast_in_dim(x, (2, 3), ()), [_x()], None),
    ("reshape", lambda x: L.reshape(x, (6, 2)), [_x(3, 4)], None),
    ("transpose", lambda x: L.transpose(x, (2, 0, 1)), [_x(2, 3, 4)], None),
    ("rev", lambda x: L.rev(x, (0, 2)), [_x(2, 3, 4)], None),
    ("slice", lambda x: L.slice_(x, (1, 0), (4, 3), (2, 1)), [_x(5, 3)], None),
    ("pad", lambda x, v: L.pad(x, v, ((1, 2, 1), (0, -1, 0))), [_x(3, 4), _x()], None),
    ("concatenate", lambda a, b: L.concatenate([a, b], 1), [_x(2, 3), _x(2, 2)], None),
    ("iota_plus", lambda x: E.add(x, L.iota(np.float64, (4,), 0)), [_x(4)], None),
    ("reduce_sum", lambda x: R.reduce_sum(x, (0, 2)), [_x(2, 3, 4)], None),
    ("reduce_max", lambda x: R.reduce_max(x, (1,)), [_x(2, 3, 4)], None),
    ("reduce_prod_all", lambda x: R.reduce_prod(x), [_x(2, 3)], None),
    ("reduce_or", lambda x: R.reduce_or(x, (0,)), [_x(4, 2) > 0], None),
    ("argmax", lambda x: R.argmax(x, 1), [_x(2, 5, 3)], None),
    ("argmin", lambda x: R.argmin(x, 0), [_x(4, 2)], None),
    ("cumsum", lambda x: R.cumsum(x, 1, reverse=True), [_x(2, 4)], None),
    ("cumprod", lambda x: R.cumprod(x, 0), [_x(4, 2)], None),
    ("cummax", lambda x: R.cummax(x, 1), [_x(3, 4)], None),
    ("linear_recurrence", lambda a, b: R.linear_recurrence(a, b, 1), [_x(2, 4), _x(2, 4)], None),
    ("dot_matmul", lambda a, b: C.dot_general(a, b, DN_MATMUL), [_x(2, 3), _x(3, 4)], None),
    ("dot_batched", lambda a, b: C.dot_general(a, b, DN_BATCHED),
     [_x(2, 3, 4), _x(2, 4, 5)], None),
    ("dot_vec", lambda a, b: C.dot_general(a, b, (((0,), (0,)), ((), ()))), [_x(4), _x(4)], None),
    ("gather", lambda x, i: I.gather(x, i, (0,)), [_x(3, 2), IDX], None),
    ("gather_2axes", lambda x, i: I.gather(x, i, (0, 2)),
     [_x(3, 2, 4), np.array([[0, 1], [2, -1]])], None),
    ("scatter_add", lambda x, i, u: I.scatter_add(x, i, u, (0,)),
     [_x(3, 2), IDX, _x(4, 2)], None),
    ("scatter", lambda x, i, u: I.scatter(x, i, u, (0,)), [_x(3, 2), IDX, _x(4, 2)], None),
    ("scatter_mul", lambda x, i, u: I.scatter_mul(x, i, u, (1,)),
     [_x(2, 3), IDX, _x(4, 2)], None),
    ("dynamic_slice", lambda x, s: I.dynamic_slice(x, [s, np.int64(1)], (2, 2)),
     [_x(4, 3), np.int64(1)], None),
    ("dynamic_update_slice", lambda x, u, s: I.dynamic_update_slice(x, u, [np.int64(0), s]),
     [_x(3, 4), _x(2, 2), np.int64(2)], None),
    ("sort", lambda k, v: S.sort([k, v], 1), [_x(2, 5), _x(2, 5)], None),
    ("einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b), [_x(2, 3), _x(3, 2)], None),
    ("linalg_solve", lambda a, b: tnp.linalg.solve(a, b),
     [_x(3, 3) + 3 * np.eye(3), _x(3, 2)], None),
    ("linalg_det", tnp.linalg.det, [_x(3, 3)], None),
    ("fft", lambda x: tnp.fft.fft(x), [_x(2, 4)], None),
    ("tnp_composite", lambda x, w: tnp.tanh(x @ w).sum(axis=-1) + tnp.mean(x),
     [_x(4, 3), _x(3, 2)], None),
]

# integer start/index arguments may be batched too, with values that stay in range
INT_BATCHABLE = {"gather": [True, True], "gather_2axes": [True, True],
                 "scatter_add": [True, True, True], "scatter": [True, True, True],
                 "scatter_mul": [True, True, True], "dynamic_slice": [True, True],
                 "dynamic_update_slice": [True, True, True]}


def _vary_ints(rng, name, args, in_axes):
    """Batched integer arguments get different in-range values per example."""
    out = list(args)
    for k, (a, ax) in enumerate(zip(args, in_axes)):
        if ax is None or np.asarray(a).dtype.kind not in "iu":
            continue
        a = np.moveaxis(np.asarray(a), ax, 0).copy()
        for b in range(1, SIZE):
            a[b] = np.roll(a[b].ravel(), b).reshape(a[b].shape) if a[b].ndim else (a[b] + b) % 2
        out[k] = np.moveaxis(a, 0, ax)
    return out


@pytest.mark.parametrize("name,fn,example,batchable", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_loop_with_random_axes(name, fn, example, batchable):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    batchable = batchable or INT_BATCHABLE.get(name) or [True] * len(example)
    for _ in range(3):
        in_axes = _random_axes(rng, example, batchable)
        args = _vary_ints(rng, name, _batched_args(rng, example, in_axes), in_axes)
        expected = _loop(fn, args, [None if a is None else a % (np.ndim(x) + 1)
                                    for a, x in zip(in_axes, example)], 0)
        out_rank = np.ndim(expected[0] if isinstance(expected, list) else expected)
        out_axis = int(rng.integers(-out_rank, out_rank))
        expected = (np.moveaxis(expected, 0, out_axis) if not isinstance(expected, list)
                    else [np.moveaxis(e, 0, out_axis) for e in expected])
        got = tf.vmap(fn, in_axes=tuple(in_axes), out_axes=out_axis)(*args)
        _assert_same(got, expected, f"{name} in_axes={in_axes} out_axes={out_axis}")


def _assert_same(got, expected, what):
    got = got if isinstance(got, (list, tuple)) else [got]
    expected = expected if isinstance(expected, list) else [expected]
    assert len(got) == len(expected), what
    for g, e in zip(got, expected):
        g = np.asarray(g)
        assert g.shape == e.shape and g.dtype == e.dtype, \
            f"{what}: {g.dtype}{g.shape} vs {e.dtype}{e.shape}"
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=what)
        else:
            np.testing.assert_array_equal(g, e, err_msg=what)


def test_vmap_batched_dynamic_slice_out_of_range_raises():
    f = tf.vmap(lambda x, s: I.dynamic_slice(x, [s], (2,)), in_axes=(None, 0))
    np.testing.assert_array_equal(f(np.arange(5.0), np.array([0, 3, -2])),
                                  [[0, 1], [3, 4], [3, 4]])
    for bad in (4, -6):
        with pytest.raises(TfIndexError):
            f(np.arange(5.0), np.array([0, bad, 1]))


def test_vmap_pytrees_and_prefix_in_axes():
    def f(params, x):
        return {"y": params["w"] @ x + params["b"], "n": tnp.sum(x)}
    params = {"w": _x(2, 3), "b": _x(2)}
    xs = _x(5, 3)
    out = tf.vmap(f, in_axes=({"w": None, "b": None}, 0), out_axes={"y": 1, "n": 0})(params, xs)
    np.testing.assert_allclose(out["y"], (xs @ params["w"].T + params["b"]).T)
    np.testing.assert_allclose(out["n"], xs.sum(1))
    out2 = tf.vmap(f, in_axes=(None, 0))(params, xs)
    np.testing.assert_allclose(out2["y"], xs @ params["w"].T + params["b"])


def test_vmap_unbatched_output_and_axis_size():
    out = tf.vmap(lambda x: (x * 2, np.float64(1.0)), out_axes=(0, None))(np.ones(3))
    np.testing.assert_allclose(out[0], 2 * np.ones(3))
    assert float(out[1]) == 1.0
    np.testing.assert_allclose(tf.vmap(lambda x: x + 1, in_axes=None, axis_size=4)(1.0),
                               np.full(4, 2.0))


def test_vmap_errors_name_the_problem():
    with pytest.raises(ShapeError, match="different sizes"):
        tf.vmap(E.add)(np.ones(3), np.ones(4))
    with pytest.raises(TfNumbaError, match="in_axes has 1 entries"):
        tf.vmap(E.add, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(TfNumbaError, match="out_axes is None"):
        tf.vmap(lambda x: x, out_axes=None)(np.ones(3))
    with pytest.raises(TfNumbaError, match="at least one batched"):
        tf.vmap(lambda x: x, in_axes=None)(np.ones(3))


def test_missing_batch_rule_names_family_and_batching_role():
    from tf_numba.core.primitive import Primitive
    from tf_numba.ext import Family
    import tf_numba.ext as ext
    fam = ext.FAMILIES.get("tests.vmaptoy.v1") or Family("tests.vmaptoy.v1", module=__name__)
    prim = fam.ops.get("twice") or fam.op("twice", lambda x: x, lambda x: 2 * x)
    assert isinstance(prim, Primitive)
    with pytest.raises(MissingRuleError, match=r"tests.vmaptoy.v1.*no batching rule"):
        tf.vmap(prim.bind)(np.ones(3))


# ---------------------------------------------------------------- composition

def _model(params, x, y):
    h = tnp.tanh(params["w1"] @ x + params["b1"])
    pred = params["w2"] @ h
    return tnp.sum((pred - y) ** 2)


def _params():
    rng = np.random.default_rng(3)
    return {"w1": rng.normal(size=(4, 3)), "b1": rng.normal(size=4),
            "w2": rng.normal(size=(2, 4))}


def test_per_example_gradients_equal_the_loop():
    params, rng = _params(), np.random.default_rng(4)
    xs, ys = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    per_example = tf.vmap(tf.grad(_model), in_axes=(None, 0, 0))(params, xs, ys)
    for k in range(6):
        g = tf.grad(_model)(params, xs[k], ys[k])
        for name in params:
            np.testing.assert_allclose(per_example[name][k], g[name], rtol=1e-12)


def test_grad_of_vmap_and_jit_of_vmap_of_grad():
    params, rng = _params(), np.random.default_rng(5)
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))

    def batch_loss(p):
        return tnp.sum(tf.vmap(_model, in_axes=(None, 0, 0))(p, xs, ys))
    g = tf.grad(batch_loss)(params)
    loop = [tf.grad(_model)(params, xs[k], ys[k]) for k in range(5)]
    for name in params:
        np.testing.assert_allclose(g[name], sum(l[name] for l in loop), rtol=1e-12)
    jitted = tf.jit(tf.vmap(tf.grad(_model), in_axes=(None, 0, 0)), tiered=False)
    for n in (5, 7):
        xs, ys = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
        got = jitted(params, xs, ys)
        want = tf.vmap(tf.grad(_model), in_axes=(None, 0, 0))(params, xs, ys)
        for name in params:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-12)


def test_vmap_of_vmap_is_an_outer_product_of_loops():
    a, b = _x(3, 4), _x(5, 4)
    out = tf.vmap(tf.vmap(lambda u, v: tnp.dot(u, v), in_axes=(None, 0)), in_axes=(0, None))(a, b)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-12)
    out = tf.vmap(tf.vmap(E.mul, in_axes=(0, 0)), in_axes=(1, 0), out_axes=1)(_x(4, 3), _x(3, 4))
    np.testing.assert_allclose(out, (_x(4, 3).T * _x(3, 4)).T, rtol=1e-12)


def test_jit_of_vmap_lowers_dot_general_batch_dims_to_one_batched_call():
    f = tf.jit(tf.vmap(lambda a, b: a @ b), tiered=False)
    a, b = _x(6, 3, 4), _x(6, 4, 2)
    np.testing.assert_allclose(f(a, b), np.einsum("bij,bjk->bik", a, b), rtol=1e-12)
    program = tf.make_program(tf.vmap(lambda a, b: a @ b))(a, b)
    assert [e.prim.name for e in program.eqns] == ["dot_general"]


def test_vmap_keeps_the_custom_jvp_rule():
    @tf.custom_jvp
    def f(x):
        return tnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return tnp.sin(x), 2 * tnp.cos(x) * t    # deliberately not the true derivative
    x = _x(4, 3)
    np.testing.assert_allclose(tf.vmap(tf.grad(lambda v: tnp.sum(f(v))))(x), 2 * np.cos(x))
    np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(tf.vmap(f)(v)))(x), 2 * np.cos(x))


def test_vmap_keeps_the_custom_vjp_rule():
    @tf.custom_vjp
    def g(x, w):
        return tnp.sin(x) * w

    g.defvjp(lambda x, w: (tnp.sin(x) * w, (x, w)),
             lambda r, ct: (3 * ct * tnp.cos(r[0]) * r[1], ct * tnp.sin(r[0])))
    x, w = _x(4, 3), _x(3)
    got = tf.vmap(tf.grad(lambda x, w: tnp.sum(g(x, w))), in_axes=(0, None))(x, w)
    np.testing.assert_allclose(got, 3 * np.cos(x) * w)
    got = tf.grad(lambda w: tnp.sum(tf.vmap(g, in_axes=(0, None))(x, w)))(w)
    np.testing.assert_allclose(got, np.sin(x).sum(0))
    # jacfwd is vmap over jvp: the custom_vjp's linear part is batched over tangents
    np.testing.assert_allclose(tf.jacfwd(lambda v: g(v, w))(x[0]), np.diag(np.cos(x[0]) * w))
    # jacrev is vmap over the pullback: the user's bwd runs batched
    np.testing.assert_allclose(tf.jacrev(lambda v: g(v, w))(x[0]),
                               np.diag(3 * np.cos(x[0]) * w))


# ---------------------------------------------------------------- Jacobians on vmap

def _fd_jacobian(f, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.moveaxis(np.array(cols), 0, -1).reshape(np.shape(cols[0]) + x.shape)


def _vector_fn(x):
    return tnp.stack([tnp.sin(x[0]) * x[1], tnp.exp(x[1] - x[2]), tnp.sum(x ** 3)])


@pytest.mark.parametrize("jac", [tf.jacfwd, tf.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_matches_finite_differences(jac):
    x = np.array([0.3, -0.7, 1.1])
    assert_close(jac(_vector_fn)(x), _fd_jacobian(_vector_fn, x), "jacobian", 1e-7, 1e-7)
    m = _x(2, 3)
    f = lambda a: tnp.tanh(a @ a.T)      # noqa: E731
    assert_close(jac(f)(m), _fd_jacobian(f, m), "matrix jacobian", 1e-7, 1e-7)


def test_hessian_matches_finite_differences_of_the_gradient():
    f = lambda x: tnp.sum(tnp.sin(x) * x ** 2) + x[0] * x[2]     # noqa: E731
    x = np.array([0.2, 1.3, -0.4])
    assert_close(tf.hessian(f)(x), _fd_jacobian(tf.grad(f), x), "hessian", 1e-7, 1e-7)


def test_jacobian_program_has_no_loop_over_the_basis():
    """jacrev of an n-vector function traces one vmapped VJP, not n of them."""
    n = 40
    program = tf.make_program(tf.jacrev(lambda x: tnp.sin(x) * tnp.sum(x)))(np.ones(n))
    assert len(program.eqns) < 30
