"""tf_numba.lax control flow (cond, switch, while_loop, fori_loop, scan) and checkpoint:
values against plain Python, derivatives against central finite differences (first and
second order), vmap against a loop of calls, and the same under jit with the loop inside
the kernel."""

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.errors import ShapeError, TfNumbaError
from tf_numba.lowering.schedule import Call
from tf_numba.transforms import ad

from ad_checks import assert_close, check_grads
import schedule_checks
from jit_checks import child_env, run_child
from schedule_checks import calls, schedules

RNG = np.random.default_rng(0)
W = RNG.normal(size=(4, 4)) * 0.5
U = RNG.normal(size=(4, 2))
XS = RNG.normal(size=(6, 2))


# ---------------------------------------------------------------- the functions under test

def rnn(h0, w, xs):
    """scan: an RNN cell with a pytree carry and two stacked outputs."""
    def cell(carry, x):
        h, total = carry
        h = tnp.tanh(w @ h + U @ x)
        return (h, total + tnp.sum(h * h)), (h, tnp.sum(h))
    (h, total), (hs, sums) = lax.scan(cell, (h0, 0.0), xs)
    return tnp.sum(h) + total + tnp.sum(hs[::2] * 0.5) + tnp.sum(sums ** 2)


def rnn_reference(h0, w, xs):
    h, total, hs, sums = np.asarray(h0), 0.0, [], []
    for x in xs:
        h = np.tanh(w @ h + U @ x)
        total += np.sum(h * h)
        hs.append(h)
        sums.append(np.sum(h))
    return np.sum(h) + total + np.sum(np.array(hs)[::2] * 0.5) + np.sum(np.array(sums) ** 2)


def reversed_scan(x):
    return lax.scan(lambda c, xi: (c * tnp.sin(xi) + xi, c * xi), 1.0, x, reverse=True)[1]


def reversed_scan_reference(x):
    c, ys = 1.0, np.empty_like(x)
    for i in range(len(x) - 1, -1, -1):
        ys[i] = c * x[i]
        c = c * np.sin(x[i]) + x[i]
    return ys


def counted_while(x):
    """while_loop with a fixed trip count: smooth in x, so finite differences apply."""
    def body(carry):
        i, v = carry
        return i + 1, tnp.sin(v) * x[1] + v * 0.5
    return lax.while_loop(lambda c: c[0] < 5, body, (0, x))[1]


def counted_while_reference(x):
    v = np.array(x)
    for _ in range(5):
        v = np.sin(v) * x[1] + v * 0.5
    return v


def newton_sqrt(a):
    """while_loop whose trip count depends on the data."""
    return lax.while_loop(lambda c: tnp.abs(c * c - a) > 1e-12 * a,
                          lambda c: 0.5 * (c + a / c), a + 1.0)


def fori_static(x):
    return lax.fori_loop(0, 4, lambda i, v: v * tnp.cos(v) + i * 0.1, x)


def fori_dynamic(x, n):
    return lax.fori_loop(np.int64(1), n, lambda i, v: v * tnp.cos(v) + i * 0.1, x)


def fori_reference(x, lo, hi):
    v = np.array(x)
    for i in range(lo, hi):
        v = v * np.cos(v) + i * 0.1
    return v


def branchy(x):
    return lax.cond(tnp.sum(x) > 0, lambda a: tnp.sin(a) * a[0], lambda a: a ** 3, x)


def branchy_reference(x):
    return np.sin(x) * x[0] if np.sum(x) > 0 else x ** 3


SWITCH = [lambda a, s: a * s, lambda a, s: tnp.exp(a) - s, lambda a, s: tnp.sin(a * s)]


def switched(k, x, s):
    return lax.switch(k, SWITCH, x, s)


def switched_reference(k, x, s):
    return [lambda: x * s, lambda: np.exp(x) - s, lambda: np.sin(x * s)][min(max(k, 0), 2)]()


def remat_body(x):
    return tnp.sin(tnp.cos(x) * x) * tnp.exp(-x * x)


def with_checkpoint(x):
    return tnp.sum(tf.checkpoint(remat_body)(x) ** 2)


def without_checkpoint(x):
    return tnp.sum(remat_body(x) ** 2)


# ---------------------------------------------------------------- values

def test_scan_matches_python():
    h0 = RNG.normal(size=4)
    assert rnn(h0, W, XS) == pytest.approx(rnn_reference(h0, W, XS), rel=1e-13)
    x = RNG.normal(size=5)
    np.testing.assert_allclose(reversed_scan(x), reversed_scan_reference(x), rtol=1e-13)


def test_scan_with_no_xs_and_pytree_ys():
    carry, ys = lax.scan(lambda c, _: (c + 1.0, {"sq": c * c, "c": c}), 0.0, None, length=3)
    assert float(carry) == 3.0
    np.testing.assert_array_equal(ys["sq"], [0.0, 1.0, 4.0])
    np.testing.assert_array_equal(ys["c"], [0.0, 1.0, 2.0])


def test_while_loop_matches_python():
    x = np.array([0.3, 0.8, -0.5])
    np.testing.assert_allclose(counted_while(x), counted_while_reference(x), rtol=1e-13)
    assert float(newton_sqrt(2.0)) == pytest.approx(np.sqrt(2.0), rel=1e-12)


def test_fori_loop_static_and_dynamic_bounds_match_python():
    x = np.array([0.4, -1.2])
    np.testing.assert_allclose(fori_static(x), fori_reference(x, 0, 4), rtol=1e-13)
    np.testing.assert_allclose(fori_dynamic(x, np.int64(5)), fori_reference(x, 1, 5), rtol=1e-13)
    assert "scan" in str(tf.make_program(fori_static)(x))
    assert "while_loop" in str(tf.make_program(fori_dynamic)(x, np.int64(5)))


def test_cond_and_switch_match_python_with_clamped_index():
    for x in (np.array([0.5, 1.0]), np.array([-0.5, -1.0])):
        np.testing.assert_allclose(branchy(x), branchy_reference(x), rtol=1e-13)
    x, s = np.array([0.2, 0.7]), np.array(1.5)
    for k in (-3, 0, 1, 2, 7):
        np.testing.assert_allclose(switched(np.int64(k), x, s), switched_reference(k, x, s),
                                   rtol=1e-13)


def test_control_flow_errors_name_the_problem():
    with pytest.raises(ShapeError, match="carry leaf 0"):
        lax.while_loop(lambda c: c < 3, lambda c: c * 1.5, 1)
    with pytest.raises(ShapeError, match="every branch must return the same"):
        lax.cond(True, lambda x: x, lambda x: x[:1], np.ones(2))
    with pytest.raises(ShapeError, match="different lengths"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(TfNumbaError, match="bool scalar"):
        lax.while_loop(lambda c: c, lambda c: c, 1.0)


# ---------------------------------------------------------------- derivatives

GRAD_CASES = [
    ("scan", lambda h0, w: rnn(h0, w, XS), (RNG.normal(size=4), W)),
    ("reversed_scan", reversed_scan, (RNG.normal(size=4),)),
    ("while", counted_while, (np.array([0.3, 0.8, -0.5]),)),
    ("fori_static", fori_static, (np.array([0.4, -1.2]),)),
    ("fori_dynamic", lambda x: fori_dynamic(x, np.int64(4)), (np.array([0.4, -1.2]),)),
    ("cond_true", branchy, (np.array([0.5, 1.0]),)),
    ("cond_false", branchy, (np.array([-0.5, -1.0]),)),
    ("switch", lambda x, s: switched(np.int64(2), x, s), (np.array([0.2, 0.7]), np.array(1.5))),
    ("checkpoint", with_checkpoint, (np.array([0.3, -0.9, 1.4]),)),
]


@pytest.mark.parametrize("name,f,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives_match_finite_differences_to_second_order(name, f, args):
    check_grads(f, args, order=2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("a", [2.0, 5.0, 30.0])
def test_grad_through_newton_while_loop_is_the_analytic_derivative(a):
    assert float(tf.grad(newton_sqrt)(a)) == pytest.approx(1 / (2 * np.sqrt(a)), rel=1e-9)
    # and the second derivative, -1/(4 a^1.5), through the recorded tape
    assert float(tf.grad(tf.grad(newton_sqrt))(a)) == pytest.approx(-0.25 * a ** -1.5,
                                                                      rel=1e-7)
    # forward mode agrees
    assert float(tf.jvp(newton_sqrt, (a,), (1.0,))[1]) == pytest.approx(1 / (2 * np.sqrt(a)),
                                                                       rel=1e-9)


def test_checkpoint_gives_the_same_gradients_and_stores_only_its_inputs():
    x = np.array([0.3, -0.9, 1.4])
    np.testing.assert_allclose(tf.grad(with_checkpoint)(x), tf.grad(without_checkpoint)(x),
                               rtol=1e-14)
    np.testing.assert_allclose(tf.hessian(with_checkpoint)(x),
                               tf.hessian(without_checkpoint)(x), rtol=1e-12)
    residuals = {}
    for name, f in (("with", with_checkpoint), ("without", without_checkpoint)):
        program = tf.make_program(f)(x)
        residuals[name] = ad.vjp_parts(program, [True])[2]
    assert residuals["with"] < residuals["without"]


def test_scan_reverse_mode_hoists_loop_invariant_residuals():
    """The weight matrix is a residual of every step: it is passed once, not stacked."""
    program = tf.make_program(lambda w: rnn(np.ones(4), w, XS))(W)
    known, _, _ = ad.vjp_parts(program, [True])
    stacked = [v for v in known.outvars if v.aval.shape[:1] == (len(XS),)
               and v.aval.shape[1:] == W.shape]
    assert not stacked


# ---------------------------------------------------------------- vmap

def _loop(fn, *args, axes):
    n = next(np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None)
    return np.stack([np.asarray(fn(*[a if ax is None else np.take(a, b, ax)
                                     for a, ax in zip(args, axes)])) for b in range(n)])


VMAP_CASES = [
    ("scan_xs", lambda h0, xs: rnn(h0, W, xs), (RNG.normal(size=4), RNG.normal(size=(3, 6, 2))),
     (None, 0)),
    ("scan_carry_and_weights", lambda h0, w: rnn(h0, w, XS),
     (RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4, 3)) * 0.5), (0, 2)),
    ("scan_reverse", reversed_scan, (RNG.normal(size=(4, 3)),), (1,)),
    ("while_batched_predicate", newton_sqrt, (np.array([2.0, 9.0, 30.0, 0.5]),), (0,)),
    ("while_fixed_trips", counted_while, (RNG.normal(size=(3, 3)),), (0,)),
    ("fori_dynamic_batched_bound", fori_dynamic, (RNG.normal(size=(3, 2)),
                                                  np.array([1, 3, 5])), (0, 0)),
    ("cond_batched_predicate", branchy, (RNG.normal(size=(6, 2)),), (0,)),
    ("switch_batched_index", switched,
     (np.array([0, 2, 1, 5]), RNG.normal(size=(4, 2)), np.array(0.7)), (0, 0, None)),
    ("switch_shared_index", switched, (np.int64(1), RNG.normal(size=(2, 3)), np.array(0.7)),
     (None, 1, None)),
    ("checkpoint", with_checkpoint, (RNG.normal(size=(3, 3)),), (0,)),
]


@pytest.mark.parametrize("name,f,args,axes", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_of_control_flow_matches_the_loop(name, f, args, axes):
    got = tf.vmap(f, in_axes=axes)(*args)
    assert_close(got, _loop(f, *args, axes=axes), name, 1e-12, 1e-12)


def test_per_example_gradients_through_a_while_loop():
    a = np.array([2.0, 9.0, 30.0])
    np.testing.assert_allclose(tf.vmap(tf.grad(newton_sqrt))(a), 1 / (2 * np.sqrt(a)),
                               rtol=1e-9)
    np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(tf.vmap(newton_sqrt)(v)))(a),
                               1 / (2 * np.sqrt(a)), rtol=1e-9)


def test_per_example_gradients_through_a_scan():
    h0 = RNG.normal(size=(3, 4))
    got = tf.vmap(tf.grad(rnn, argnums=1), in_axes=(0, None, None))(h0, W, XS)
    for k in range(3):
        np.testing.assert_allclose(got[k], tf.grad(rnn, argnums=1)(h0[k], W, XS), rtol=1e-12)


# ---------------------------------------------------------------- jit

# values and first and second derivatives of every construct, each jitted on its own: one
# kernel of all of them took 1.7x as long to compile as these nine (30 s against 17.4 s)
CONSTRUCTS = {
    "rnn_grad": lambda h0, w, x, a, k: tf.grad(rnn, argnums=(0, 1))(h0, w, XS),
    "rnn_hvp": lambda h0, w, x, a, k: tf.jvp(tf.grad(lambda v: rnn(v, w, XS)), (h0,), (h0,))[1],
    "newton": lambda h0, w, x, a, k: newton_sqrt(a),
    "newton_d1": lambda h0, w, x, a, k: tf.grad(newton_sqrt)(a),
    "newton_d2": lambda h0, w, x, a, k: tf.grad(tf.grad(newton_sqrt))(a),
    "fori": lambda h0, w, x, a, k: tf.grad(lambda v: tnp.sum(fori_static(v)))(x),
    "cond": lambda h0, w, x, a, k: tf.grad(lambda v: tnp.sum(branchy(v)))(x),
    "switch": lambda h0, w, x, a, k: tf.grad(lambda v: tnp.sum(switched(k, v, 0.5)))(x),
    "checkpoint": lambda h0, w, x, a, k: tf.grad(with_checkpoint)(x),
}


def test_jit_matches_the_interpreter_with_loops_inside_the_kernel():
    jitted = {key: tf.jit(f, tiered=False) for key, f in CONSTRUCTS.items()}
    for seed in range(3):
        rng = np.random.default_rng(seed)
        args = (rng.normal(size=4), W + rng.normal(size=(4, 4)) * 0.1,
                rng.normal(size=3), np.float64(2.0 + 5 * seed), np.int64(seed - 1))
        for key, f in CONSTRUCTS.items():
            assert_close(jitted[key](*args), f(*args), key, 1e-10, 1e-10)
    plans = [j.lower(*args).plan for j in jitted.values()]
    assert all(type(s).__name__ == "CompiledSegment" for p in plans for s in p.segments)
    looped = {c.eqn.prim.name for p in plans for sched in p.schedules for c in sched.calls()
              if c.bodies}
    assert {"while_loop", "scan"} <= looped           # the loops run inside the kernels


def test_jit_recorded_while_tape_grows_past_its_first_buffer():
    def slow_sqrt(a):
        return lax.while_loop(lambda c: c[0] < 100,
                              lambda c: (c[0] + 1, c[1] - 0.02 * (c[1] * c[1] - a)), (0, a))[1]
    grad = tf.jit(tf.grad(slow_sqrt), tiered=False)
    for a in (1.5, 2.0):
        assert float(grad(a)) == pytest.approx(float(tf.grad(slow_sqrt)(a)), rel=1e-12)


def test_jit_of_vmap_of_while_with_batched_predicate():
    f = tf.jit(tf.vmap(tf.grad(newton_sqrt)), tiered=False)
    a = np.array([2.0, 9.0, 30.0, 0.5])
    np.testing.assert_allclose(f(a), 1 / (2 * np.sqrt(a)), rtol=1e-9)


def test_jacobians_through_loops_agree_and_a_vjp_replays_the_recorded_tape():
    x = np.array([0.3, 0.5, 0.7])
    np.testing.assert_allclose(tf.jacrev(counted_while)(x), tf.jacfwd(counted_while)(x),
                               rtol=1e-12)
    np.testing.assert_allclose(tf.jacrev(reversed_scan)(x), tf.jacfwd(reversed_scan)(x),
                               rtol=1e-12)
    a = np.array([2.0, 9.0])
    np.testing.assert_allclose(tf.jacrev(tf.vmap(newton_sqrt))(a), np.diag(0.5 / np.sqrt(a)),
                               rtol=1e-9)
    _, pullback = tf.vjp(newton_sqrt, 4.0)
    assert float(pullback(2.0)[0]) == pytest.approx(0.5, rel=1e-9)


def test_jit_loop_iterations_allocate_no_arrays():
    """Stacks, concatenations, contractions and carries of a loop body are written into
    arrays allocated once before the loop (RK4 on the Lorenz system, as in loop_bench)."""
    def lorenz(y):
        return tnp.stack([10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1],
                          y[0] * y[1] - 8.0 / 3.0 * y[2]])

    def rk4(y0, m):
        def step(i, y):
            k1 = lorenz(y)
            k2 = lorenz(y + 0.005 * k1)
            k3 = lorenz(y + 0.005 * k2)
            k4 = lorenz(y + 0.01 * k3)
            return m @ (y + (0.01 / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4))
        return lax.fori_loop(0, 50, step, y0)

    def softmax_steps(y0, m):           # a row sum's scratch, wide rows
        def step(y, _):
            e = tnp.exp(y - tnp.max(y))
            return m @ (e / tnp.sum(e)), tnp.sum(e * y)
        return lax.scan(step, y0, None, length=20)

    y0, m = np.array([1.0, 1.0, 1.0]), np.eye(3) + 0.01 * RNG.normal(size=(3, 3))
    wide_y0, wide_m = RNG.normal(size=40), RNG.normal(size=(40, 40))
    for fn, args in ((rk4, (y0, m)), (softmax_steps, (wide_y0, wide_m))):
        f = tf.jit(fn, tiered=False)
        for got, want in zip(_leaves(f(*args)), _leaves(fn(*args))):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        (sched,) = schedules(f, *args)
        (loop,) = [c for c in sched.calls() if c.carries]
        assert "copied" not in loop.carries     # (a carry copied every iteration)
    # and what runs: numba allocates nothing per iteration (test_loop_bodies_allocate...)


def test_jit_array_carries_that_swap_view_or_repeat_each_other():
    """Carries are written into their own buffers whatever the body returns: another
    carry, a view of one (reversed, sliced), a view of a body array, an input row, a
    value also stacked (twice), or the carry itself."""
    def body(carry, x):
        a, b, c, d, e, f = carry
        new = tnp.tanh(a * 0.5 + x)
        cat = tnp.concatenate([d, new])
        return (b, a + new, c[::-1], cat[1:4], x, f), (new, new, c, cat, b)

    def run(a, b, c, d, f, xs):
        return lax.scan(body, (a, b, c, d, xs[0], f), xs)

    args = tuple(RNG.normal(size=(3,)) for _ in range(5)) + (RNG.normal(size=(7, 3)),)
    got, want = tf.jit(run, tiered=False)(*args), run(*args)
    for g, w in zip(_leaves(got), _leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    return [np.asarray(tree)]


def test_jit_nested_loops_reuse_their_buffers_correctly():
    """An inner loop's arrays are allocated before the outer loop: its results must still
    be right when they become the outer carry and the outer stacked output, and when the
    outer loop runs zero times."""
    def outer(carry, x):
        def inner(i, h):
            return tnp.tanh(h[::-1] * 0.9 + x)
        h = lax.fori_loop(0, 4, inner, carry)
        return h + 1.0, tnp.concatenate([h, carry])

    def run(h0, xs):
        return lax.scan(outer, h0, xs)

    h0 = RNG.normal(size=3)
    f = tf.jit(run, tiered=False)
    for xs in (RNG.normal(size=(5, 3)), np.zeros((0, 3))):
        for g, w in zip(_leaves(f(h0, xs)), _leaves(run(h0, xs))):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_jit_while_loop_array_carries():
    def run(v, w):
        def cond(c):
            return tnp.sum(c[1] * c[1]) < 50.0
        def body(c):
            k, v = c
            return k + 1, w @ v + v[::-1]
        return lax.while_loop(cond, body, (0, v))

    v, w = RNG.normal(size=4) * 0.1, np.eye(4) * 0.5 + 0.1
    for g, want in zip(tf.jit(run, tiered=False)(v, w), run(v, w)):
        np.testing.assert_allclose(g, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_jit_small_matrix_vector_products_as_loops(dtype):
    """Matrix-vector products up to 128 x 128 run as loops (no BLAS call), in every
    orientation and for sizes that are not multiples of the four rows unrolled."""
    def products(a, b, x, y):
        return a @ x, x @ b, a.T @ y, y @ a, x @ x, b @ y

    rng = np.random.default_rng(1)
    for m, k in ((7, 5), (64, 16), (1, 3)):
        a, b = (rng.normal(size=s).astype(dtype) for s in ((m, k), (k, m)))
        x, y = rng.normal(size=k).astype(dtype), rng.normal(size=m).astype(dtype)
        f = tf.jit(products, tiered=False)
        for got, want in zip(f(a, b, x, y), products(a, b, x, y)):
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
        assert all(p.blas is None for p in schedule_checks.products(f, a, b, x, y))
    big = rng.normal(size=(200, 100)).astype(dtype)     # BLAS (real: gemv, as NumPy's matmul)
    blas = "gemm_into" if np.dtype(dtype).kind == "c" else "matvec_into"
    made = schedule_checks.products(tf.jit(lambda a, x: a @ x), big, big[0])
    assert [p.helper for p in made] == [blas]


def test_jit_tiny_arrays_in_loop_bodies_are_scalar_code():
    """Regions over at most 16 elements inside a loop are written element by element, and
    slices, reshapes and concatenations of them read those scalars: broadcasts of a row, a
    column and a scalar, a strided slice, a 2-D concatenation, int and bool values."""
    def step(carry, x):
        m, v, k = carry
        rot = m * tnp.cos(x) + v[:, None] * v[None, :] * 0.1 - 0.01
        w = tnp.concatenate([rot, v.reshape(2, 1), (k * 2)[None, :].reshape(2, 1) * 1.0],
                            axis=1)
        v2 = (w[:, ::2] @ np.ones(2)) * 0.1 + w[::-1, 3]
        k2 = tnp.where(v2 > 0, k + 1, k - 1)
        return (rot, v2, k2), (w, v2 > 0)

    def run(m, v, k, xs):
        return lax.scan(step, (m, v, k), xs)

    args = (RNG.normal(size=(2, 2)), RNG.normal(size=2), np.array([1, 2]), RNG.normal(size=5))
    f = tf.jit(run, tiered=False)
    for g, w in zip(_leaves(f(*args)), _leaves(run(*args))):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12)
    (sched,) = schedules(f, *args)
    (scan,) = [c for c in sched.calls() if c.eqn.prim.name == "scan"]
    (body,) = scan.bodies.values()
    assert body.nests() and all(n.form == "unrolled" for n in body.nests())


def test_jit_accumulator_carries_update_in_place_and_leave_inputs_alone():
    """``g = g + ...`` with no other reader of ``g`` overwrites the carry, which starts as
    a copy of its initial value (an input here, unchanged after the call). Carries read
    again after their update, by a reduction, or by another region go through buffers."""
    def body(carry, x):
        g, h, s, t = carry
        g = g + x[:, None] * x[None, :]                    # in place
        h2 = h * 0.5 + x                                   # h also read after: buffers
        s2 = s + tnp.sum(s) * 0.01 + x                     # read by a reduction too
        t2 = t * 2.0 - x
        return (g, h2 + h, s2, t2), t * 1.0                # t stacked: not in place

    def run(g0, h0, s0, t0, xs):
        return lax.scan(body, (g0, h0, s0, t0), xs)

    def nested(g0, xs):
        def outer(g, x):
            def inner(i, acc):
                return acc + x * g[0]
            return lax.fori_loop(0, 3, inner, g), None
        return lax.scan(outer, g0, xs)[0]

    def counted(v):
        return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] + c[1] * 0.5),
                              (0, v))

    g0, xs = RNG.normal(size=(3, 3)), RNG.normal(size=(6, 3))
    vs = [RNG.normal(size=3) for _ in range(3)]
    kept = [a.copy() for a in (g0, *vs, xs)]
    for fn, args in ((run, (g0, *vs, xs)), (nested, (vs[0], xs)), (counted, (vs[1],))):
        f = tf.jit(fn, tiered=False)
        for g, w in zip(_leaves(f(*args)), _leaves(fn(*args))):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    for a, b in zip(kept, (g0, *vs, xs)):
        np.testing.assert_array_equal(a, b)
    (sched,) = schedules(tf.jit(run), g0, *vs, xs)
    (scan,) = [c for c in sched.calls() if c.carries]
    assert scan.carries == ("in place", "buffers", "buffers", "buffers")


def test_jit_pads_in_loop_bodies_write_their_output_directly():
    """Pads (constant value, interior from a strided slice's gradient) inside loops, tiny
    (scalar code) and wide, match the interpreter and allocate nothing per iteration."""
    def body(c, x):
        p = tnp.pad(c[::2] * x, (1, c.shape[0] // 2 + 1), constant_values=0.5)
        return c * 0.9 + p[:c.shape[0]], tnp.sum(p)

    def loss(c, xs):
        return tnp.sum(lax.scan(body, c, xs)[1])

    grad = tf.grad(loss)
    for n in (5, 41):
        c, xs = RNG.normal(size=n), RNG.normal(size=4)
        f = tf.jit(grad, tiered=False)
        np.testing.assert_allclose(f(c, xs), grad(c, xs), rtol=1e-12)
        pads = [c for c in calls(f, c, xs, prim="pad")]
        assert pads and all(p.allocates for p in pads)     # written into its own array


def test_while_loop_gradient_programs_fingerprint_the_same_each_trace():
    """The trip-count symbol of a reverse-differentiated while_loop is fresh per trace;
    the fingerprint numbers such symbols by appearance, so plan caches hit across traces
    (and processes)."""
    g = tf.make_program(tf.grad(newton_sqrt))
    first, second = g(2.0), g(2.0)
    assert str(first) != str(second)        # different trip symbols ...
    assert first.fingerprint() == second.fingerprint()      # ... same program


def _rnn(W, U, b, h0, xs, reverse=False):
    def cell(h, x):
        h = tnp.tanh(W @ h + U @ x + b)
        return h, U @ x
    return lax.scan(cell, h0, xs, reverse=reverse)


def _numpy_rnn(W, U, b, h0, xs, reverse=False):
    h, hs = h0, []
    for x in (xs[::-1] if reverse else xs):
        h = np.tanh(W @ h + U @ x + b)
        hs.append(U @ x)
    return h, np.array(hs[::-1] if reverse else hs)


def _loop_products(sched):
    """The helpers of the products inside the kernel's scan body."""
    (scan,) = [c for c in sched.steps if type(c) is Call and c.eqn.prim.name == "scan"]
    return [c.product.helper for body in scan.bodies.values() for c in body.calls()
            if c.product is not None]


@pytest.mark.parametrize("reverse", [False, True])
def test_jit_scan_computes_its_step_independent_products_before_the_loop(reverse):
    """U @ x_t needs no carry: under jit it runs as one matrix product over all steps
    before the loop, which reads its rows (and the stacked output of it too), forwards
    and in reverse; the loop keeps W @ h."""
    W, U = RNG.normal(size=(16, 16)) / 4, RNG.normal(size=(16, 5)) / 2
    b, h0, xs = RNG.normal(size=16), RNG.normal(size=16), RNG.normal(size=(40, 5))

    def f(W, U, b, h0, xs):
        h, ys = _rnn(W, U, b, h0, xs, reverse)
        return tnp.sum(h) + tnp.sum(ys * ys)

    jf = tf.jit(f, tiered=False)
    (sched,) = schedules(jf, W, U, b, h0, xs)
    before = [c.product.helper for c in sched.steps if type(c) is Call and c.product]
    assert before == ["gemm_into"]                                # the product over steps
    assert _loop_products(sched) == ["matvec"]                    # W @ h only
    h, ys = _numpy_rnn(W, U, b, h0, xs, reverse)
    assert_close(jf(W, U, b, h0, xs), np.sum(h) + np.sum(ys * ys), "vs NumPy", rtol=1e-12)
    assert_close(jf(W, U, b, h0, xs), f(W, U, b, h0, xs), "vs un-jitted", rtol=1e-12)
    # its gradient is unchanged, hoisted or not
    g = tf.jit(tf.grad(f, argnums=(0, 1, 2)), tiered=False)
    for got, want in zip(g(W, U, b, h0, xs), tf.grad(f, argnums=(0, 1, 2))(W, U, b, h0, xs)):
        assert_close(got, want, "gradient", rtol=1e-10)


def test_jit_scan_keeps_its_per_step_work_when_the_stack_would_not_pay(monkeypatch):
    """No product to move (elementwise work is as cheap inside), or a stack above the
    cap: the loop is left as it is."""
    from tf_numba.lowering import rewrites
    W, U = RNG.normal(size=(8, 8)) / 3, RNG.normal(size=(8, 3))
    b, h0, xs = RNG.normal(size=8), RNG.normal(size=8), RNG.normal(size=(20, 3))

    def elementwise(h0, xs):
        return lax.scan(lambda h, x: (tnp.tanh(h + tnp.sum(tnp.sin(x))), h), h0, xs)[1]
    (sched,) = schedules(tf.jit(elementwise, tiered=False), h0, xs)
    assert not [c for c in sched.calls() if c.product] and _loop_products(sched) == []
    assert [c.eqn.prim.name for c in sched.steps if type(c) is Call] == ["scan"]
    monkeypatch.setattr(rewrites, "HOIST_MAX_BYTES", 8 * 8 * 20 - 1)
    (sched,) = schedules(tf.jit(lambda *a: _rnn(*a)[0], tiered=False), W, U, b, h0, xs)
    assert _loop_products(sched) == ["matvec", "matvec"]


def test_jit_scan_whose_step_work_cannot_be_batched_keeps_it_in_the_loop(monkeypatch):
    """Hoisting batches the step-independent work; a primitive without a batching rule
    leaves the loop as it is (and jit still works)."""
    from tf_numba.core.primitive import RULES
    W, U = RNG.normal(size=(8, 8)) / 3, RNG.normal(size=(8, 3))
    b, h0, xs = RNG.normal(size=8), RNG.normal(size=8), RNG.normal(size=(20, 3))
    product = next(p for p in RULES["batch"] if p.name == "dot_general")
    monkeypatch.delitem(RULES["batch"], product)
    f = tf.jit(lambda *a: _rnn(*a)[0], tiered=False)
    (sched,) = schedules(f, W, U, b, h0, xs)
    assert _loop_products(sched) == ["matvec", "matvec"]
    assert_close(f(W, U, b, h0, xs), _numpy_rnn(W, U, b, h0, xs)[0], "vs NumPy", rtol=1e-12)


def test_loop_bodies_allocate_nothing_per_iteration(tmp_path):
    """The loops above (a scan with a row sum's scratch, RK4 in a fori_loop with stacks
    and concatenations, accumulator and buffered carries, pads in a gradient's loop) make
    as many allocations for 40 iterations as for 10: numba's own allocation count, read
    in a child with its statistics on. A body that must allocate (a sort) shows growth."""
    out = run_child("""
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba import lax
        from numba.core.runtime import rtsys

        def softmax_steps(y0, m, xs):
            def step(y, x):
                e = tnp.exp(y - tnp.max(y)) * x
                return m @ (e / tnp.sum(e)), tnp.sum(e * y)
            return lax.scan(step, y0, xs)

        def rk4(y0, m, xs):
            def lorenz(y):
                return tnp.stack([10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1],
                                  y[0] * y[1] - 8.0 / 3.0 * y[2]])
            def step(y, x):
                k1 = lorenz(y)
                k2 = lorenz(y + 0.005 * x * k1)
                both = tnp.concatenate([k1, k2])
                return m @ (y + 0.01 * (both[:3] + both[3:])), None
            return lax.scan(step, y0, xs)[0]

        def carries(g0, h0, xs):
            def body(c, x):
                g, h, s = c
                return (g + x * g, h * 0.5 + x + h, s + tnp.sum(s) * 0.01), s * 1.0
            return lax.scan(body, (g0, h0, h0), xs)

        def pads(c, xs):
            def body(c, x):
                p = tnp.pad(c[::2] * x, (1, c.shape[0] // 2 + 1), constant_values=0.5)
                return c * 0.9 + p[:c.shape[0]], tnp.sum(p)
            return tnp.sum(lax.scan(body, c, xs)[1])

        def sorts(c, xs):
            return lax.scan(lambda c, x: (tnp.sort(c * x), 0.0), c, xs)[0]

        def growth(fn, *head):
            f = tf.jit(fn, tiered=False)
            counts = []
            for n in (10, 40):
                xs = np.linspace(0.5, 1.5, n)
                f(*head, xs)
                before = rtsys.get_allocation_stats().alloc
                f(*head, xs)
                counts.append(rtsys.get_allocation_stats().alloc - before)
            return counts[1] - counts[0]

        rng = np.random.default_rng(0)
        print("softmax", growth(softmax_steps, rng.normal(size=40), rng.normal(size=(40, 40))))
        print("rk4", growth(rk4, np.ones(3), np.eye(3)))
        print("carries", growth(carries, rng.normal(size=5), rng.normal(size=5)))
        print("pads", growth(tf.grad(pads), rng.normal(size=41)))
        print("sorts", growth(sorts, rng.normal(size=7)))
        """, dict(child_env(tmp_path), NUMBA_NRT_STATS="1"))
    assert out.returncode == 0, out.stderr
    growth = dict(line.split() for line in out.stdout.splitlines())
    assert int(growth.pop("sorts")) > 0, out.stdout      # the count sees per-step arrays
    assert all(v == "0" for v in growth.values()), out.stdout
