"""tf_numba.optimizers against hand-written NumPy updates, jax.example_libraries.optimizers
(float32 there) and optax where installed; pytrees of parameters, jitted updates, schedules
and clipping by global norm."""
import math
import re

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import optimizers as opt
from tf_numba.errors import PytreeError, ShapeError

RNG = np.random.default_rng(0)
PARAMS = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2), "s": 0.5,
          "nest": (RNG.normal(size=4), None)}
GRADS = [{"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2), "s": RNG.normal(),
          "nest": (RNG.normal(size=4), None)} for _ in range(6)]
GRADS[2]["b"][0] = 0.0   # adagrad's g_sq > 0 branch: a zero gradient from the start
GRADS[0]["b"][0] = 0.0
GRADS[1]["b"][0] = 0.0


def _leaves(tree):
    return tf.tree_util.tree_leaves(tree)


# Hand-written per-array updates: state, step number i, gradient -> state.
def _np_sgd(lr):
    return (lambda x: [x], lambda s, i, g: [s[0] - lr(i) * g])


def _np_momentum(lr, mass):
    def update(s, i, g):
        v = mass * s[1] + g
        return [s[0] - lr(i) * v, v]
    return (lambda x: [x, np.zeros_like(x)], update)


def _np_nesterov(lr, mass):
    def update(s, i, g):
        v = mass * s[1] + g
        return [s[0] - lr(i) * (mass * v + g), v]
    return (lambda x: [x, np.zeros_like(x)], update)


def _np_adagrad(lr, mom):
    def update(s, i, g):
        x, g_sq, m = s
        g_sq = g_sq + g * g
        with np.errstate(divide="ignore"):
            inv = np.where(g_sq > 0, 1 / np.sqrt(g_sq), 0.0)
        m = (1 - mom) * g * inv + mom * m
        return [x - lr(i) * m, g_sq, m]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_rmsprop(lr, gamma, eps):
    def update(s, i, g):
        avg = s[1] * gamma + g * g * (1 - gamma)
        return [s[0] - lr(i) * g / np.sqrt(avg + eps), avg]
    return (lambda x: [x, np.zeros_like(x)], update)


def _np_adam(lr, b1, b2, eps, wd=0.0):
    def update(s, i, g):
        x, m, v = s
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * g * g + b2 * v
        mhat, vhat = m / (1 - b1 ** (i + 1)), v / (1 - b2 ** (i + 1))
        return [x - lr(i) * (mhat / (np.sqrt(vhat) + eps) + wd * x), m, v]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_rmsprop_momentum(lr, gamma, eps, mass):
    def update(s, i, g):
        avg = s[1] * gamma + g * g * (1 - gamma)
        mom = mass * s[2] + lr(i) * g / np.sqrt(avg + eps)
        return [s[0] - mom, avg, mom]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_adamax(lr, b1, b2, eps):
    def update(s, i, g):
        x, m, u = s
        m = (1 - b1) * g + b1 * m
        u = np.maximum(b2 * u, np.abs(g))
        return [x - lr(i) / (1 - b1 ** (i + 1)) * m / (u + eps), m, u]
    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_sm3(lr, mass):
    """SM3 by its definition: the accumulator of entry (j, k, ...) is the least of the
    per-axis maxima v_0[j], v_1[k], ... plus g**2 (Anil et al. 2019, Algorithm SM3-II)."""
    def init(x):
        x1 = np.atleast_1d(x)
        return [x, np.zeros_like(x), [np.zeros(n) for n in x1.shape]]

    def update(s, i, g):
        x, m, vs = s
        g1 = np.atleast_1d(g)
        accum = np.empty_like(g1)
        for idx in np.ndindex(g1.shape):
            accum[idx] = min(v[j] for v, j in zip(vs, idx)) + g1[idx] ** 2
        with np.errstate(divide="ignore"):
            inv = np.where(accum > 0, 1 / np.sqrt(accum), 0.0).reshape(np.shape(g))
        m = (1 - mass) * g * inv + mass * m
        vs = [np.array([accum.take(j, axis=a).max() for j in range(n)])
              for a, n in enumerate(g1.shape)]
        return [x - lr(i) * m, m, vs]
    return (init, update)


def _lr(i):
    return 0.1 * 0.5 ** (i / 3)


CASES = {
    "sgd": (opt.sgd(0.1), _np_sgd(lambda i: 0.1)),
    "sgd_schedule": (opt.sgd(opt.exponential_decay(0.1, 3, 0.5)), _np_sgd(_lr)),
    "momentum": (opt.momentum(0.1, 0.9), _np_momentum(lambda i: 0.1, 0.9)),
    "nesterov": (opt.nesterov(0.05, 0.8), _np_nesterov(lambda i: 0.05, 0.8)),
    "adagrad": (opt.adagrad(0.2, momentum=0.7), _np_adagrad(lambda i: 0.2, 0.7)),
    "rmsprop": (opt.rmsprop(0.01, gamma=0.8, eps=1e-6), _np_rmsprop(lambda i: 0.01, 0.8, 1e-6)),
    "adam": (opt.adam(0.01), _np_adam(lambda i: 0.01, 0.9, 0.999, 1e-8)),
    "adam_schedule": (opt.adam(opt.exponential_decay(0.1, 3, 0.5), b1=0.8, b2=0.9, eps=1e-6),
                      _np_adam(_lr, 0.8, 0.9, 1e-6)),
    "adamw": (opt.adamw(0.01, weight_decay=0.1), _np_adam(lambda i: 0.01, 0.9, 0.999, 1e-8,
                                                          0.1)),
    "rmsprop_momentum": (opt.rmsprop_momentum(0.01, 0.8, 1e-6, 0.7),
                         _np_rmsprop_momentum(lambda i: 0.01, 0.8, 1e-6, 0.7)),
    "adamax": (opt.adamax(_lr, b2=0.9), _np_adamax(_lr, 0.9, 0.9, 1e-8)),
    "sm3": (opt.sm3(0.1, 0.7), _np_sm3(lambda i: 0.1, 0.7)),
}


def _numpy_run(np_opt, params, grads):
    init, update = np_opt
    states = [init(np.asarray(x, np.float64)) for x in _leaves(params)]
    for i, g in enumerate(grads):
        states = [update(s, i, np.asarray(gl)) for s, gl in zip(states, _leaves(g))]
    return [s[0] for s in states]


@pytest.mark.parametrize("name", sorted(CASES))
def test_optimizer_matches_handwritten_numpy_updates(name):
    (init, update, get_params), np_opt = CASES[name]
    state = init(PARAMS)
    for i, g in enumerate(GRADS):
        state = update(i, g, state)
    out = get_params(state)
    assert tf.tree_util.tree_structure(out) == tf.tree_util.tree_structure(PARAMS)
    for a, e in zip(_leaves(out), _numpy_run(np_opt, PARAMS, GRADS)):
        np.testing.assert_allclose(a, e, rtol=1e-13, atol=1e-15)


def test_jitted_update_equals_eager_and_keeps_float32():
    name = "adam_schedule"
    init, update, get_params = CASES[name][0]
    params = tf.tree_util.tree_map(lambda x: np.asarray(x, np.float32), PARAMS)
    grads = [tf.tree_util.tree_map(lambda x: np.asarray(x, np.float32), g) for g in GRADS]
    step = tf.jit(update, tiered=False)
    eager, jitted = init(params), init(params)
    for i, g in enumerate(grads):
        eager, jitted = update(i, g, eager), step(i, g, jitted)
    for a, b in zip(_leaves(get_params(jitted)), _leaves(get_params(eager))):
        assert np.asarray(a).dtype == np.float32 and np.asarray(b).dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
    for a, e in zip(_leaves(get_params(eager)), _numpy_run(CASES[name][1], PARAMS, GRADS)):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5)


def test_gradient_structure_must_match_the_parameters():
    init, update, _ = opt.sgd(0.1)
    with pytest.raises(PytreeError, match="gradient has structure"):
        update(0, {"w": 1.0}, init({"w": 1.0, "b": 2.0}))


@pytest.mark.parametrize("gradient_b", [np.ones(1), np.ones((2, 1)), np.ones(3)])
@pytest.mark.parametrize("jitted", [False, True])
def test_a_gradient_leaf_of_another_shape_is_an_error_naming_it(gradient_b, jitted):
    """Not broadcast into the parameter (a (1,) or (2, 1) gradient of a (2,) parameter
    would be), nor NumPy's broadcasting error: the leaf's path and both shapes."""
    init, update, _ = opt.adam(0.1)
    state = init({"w": np.ones(3), "b": [np.ones(2)]})
    step = tf.jit(update) if jitted else update
    with pytest.raises(ShapeError, match=rf"adam update: the gradient\['b'\]\[0\] has shape "
                       rf"{re.escape(str(gradient_b.shape))}, its parameter \(2,\)"):
        step(0, {"w": np.ones(3), "b": [gradient_b]}, state)


def test_training_loop_with_grad_and_jit_reduces_the_loss():
    x = RNG.normal(size=(64, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.3

    def loss(p):
        return tnp.mean((x @ p["w"] + p["b"] - y) ** 2)
    init, update, get_params = opt.adam(opt.warmup(opt.cosine_decay(0.1, 200), 10))
    step = tf.jit(lambda i, s: update(i, tf.grad(loss)(get_params(s)), s), tiered=False)
    state = init({"w": np.zeros(3), "b": 0.0})
    for i in range(200):
        state = step(i, state)
    assert float(loss(get_params(state))) < 1e-4


# ---------------------------------------------------------------- schedules

SCHEDULES = {
    "constant": (opt.constant(0.3), lambda i: 0.3),
    "exponential_decay": (opt.exponential_decay(0.3, 10, 0.1), lambda i: 0.3 * 0.1 ** (i / 10)),
    "inverse_time_decay": (opt.inverse_time_decay(0.3, 10, 0.5, staircase=True),
                           lambda i: 0.3 / (1 + 0.5 * math.floor(i / 10))),
    "polynomial_decay": (opt.polynomial_decay(0.3, 20, 0.01, power=2.0),
                         lambda i: (0.3 - 0.01) * (1 - min(i, 20) / 20) ** 2 + 0.01),
    "piecewise_constant": (opt.piecewise_constant([5, 15], [0.3, 0.1, 0.01]),
                           lambda i: 0.3 if i <= 5 else 0.1 if i <= 15 else 0.01),
    "cosine_decay": (opt.cosine_decay(0.3, 20, alpha=0.1),
                     lambda i: 0.3 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(i, 20) / 20))
                                      + 0.1)),
    "warmup": (opt.warmup(opt.exponential_decay(0.3, 10, 0.1), 4, init_value=0.02),
               lambda i: 0.02 + (0.3 - 0.02) * i / 4 if i < 4 else 0.3 * 0.1 ** ((i - 4) / 10)),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_values_eager_and_traced(name):
    schedule, formula = SCHEDULES[name]
    steps = [0, 1, 3, 4, 5, 6, 15, 16, 25]
    expected = [formula(i) for i in steps]
    np.testing.assert_allclose([float(schedule(i)) for i in steps], expected, rtol=1e-13)
    traced = tf.vmap(lambda i: tnp.asarray(schedule(i), dtype=np.float64) + 0 * i)(
        np.array(steps))
    np.testing.assert_allclose(traced, expected, rtol=1e-13)


def test_make_schedule_rejects_a_vector():
    with pytest.raises(TypeError, match="step size"):
        opt.sgd(np.ones(3))


# ---------------------------------------------------------------- clipping

def test_clip_grads_by_global_norm():
    grads = {"a": np.array([3.0, 0.0]), "b": (np.array([[4.0]]), None)}
    np.testing.assert_allclose(opt.l2_norm(grads), 5.0)
    clipped = opt.clip_grads(grads, 1.0)
    np.testing.assert_allclose(clipped["a"], [0.6, 0.0])
    np.testing.assert_allclose(clipped["b"][0], [[0.8]])
    assert clipped["b"][1] is None
    np.testing.assert_allclose(opt.l2_norm(clipped), 1.0)
    same = opt.clip_by_global_norm(grads, 10.0)
    np.testing.assert_array_equal(same["a"], grads["a"])
    f32 = opt.clip_grads({"a": np.ones(4, np.float32) * 2}, 1.0)
    assert f32["a"].dtype == np.float32


def test_clip_grads_is_differentiable():
    # d/dg of clip(g) at |g| > max: (I - u u^T) * max / |g|, u = g / |g|
    g = np.array([3.0, 4.0])
    jac = tf.jacfwd(lambda g: opt.clip_grads(g, 1.0))(g)
    u = g / 5.0
    np.testing.assert_allclose(jac, (np.eye(2) - np.outer(u, u)) / 5.0, rtol=1e-12)


# ---------------------------------------------------------------- JAX and optax

JAX_CASES = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.05, 0.8)),
             ("adagrad", (0.2, 0.7)), ("rmsprop", (0.01, 0.8, 1e-6)), ("adam", (0.01,)),
             ("rmsprop_momentum", (0.01, 0.8, 1e-6, 0.7)), ("adamax", (0.01,)),
             ("sm3", (0.1, 0.7))]


def test_matches_jax_example_libraries():
    jax = pytest.importorskip("jax")
    from jax.example_libraries import optimizers as jopt
    params = tf.tree_util.tree_map(np.asarray, PARAMS)   # JAX's sm3 reads x0.shape
    for name, args in JAX_CASES:
        ours, theirs = getattr(opt, name)(*args), getattr(jopt, name)(*args)
        s_ours, s_theirs = ours.init_fn(params), theirs.init_fn(params)
        jax_update = jax.jit(theirs.update_fn)   # one compile, not one per op
        for i, g in enumerate(GRADS):
            s_ours, s_theirs = ours.update_fn(i, g, s_ours), jax_update(i, g, s_theirs)
        for a, e in zip(_leaves(ours.params_fn(s_ours)), _leaves(theirs.params_fn(s_theirs))):
            np.testing.assert_allclose(a, np.asarray(e), rtol=2e-5, atol=1e-6,  # JAX: float32
                                       err_msg=name)


def test_adamw_matches_optax():
    optax = pytest.importorskip("optax")
    tx = optax.adamw(0.01, weight_decay=0.1)
    params = {k: v for k, v in PARAMS.items() if k != "nest"}
    grads = [{k: v for k, v in g.items() if k != "nest"} for g in GRADS]
    state, p = tx.init(params), params
    for g in grads:
        updates, state = tx.update(g, state, p)
        p = optax.apply_updates(p, updates)
    init, update, get_params = opt.adamw(0.01, weight_decay=0.1)
    s = init(params)
    for i, g in enumerate(grads):
        s = update(i, g, s)
    for a, e in zip(_leaves(get_params(s)), _leaves(p)):
        np.testing.assert_allclose(a, e, rtol=2e-5, atol=1e-6)


# ---------------------------------------------------------------- serialization

def test_unpack_and_pack_optimizer_state_round_trip_through_pickle():
    import pickle
    init, update, get_params = opt.adam(0.01)
    state = update(0, GRADS[0], init(PARAMS))
    marked = opt.unpack_optimizer_state(state)
    assert tf.tree_util.tree_structure(marked) == tf.tree_util.tree_structure(PARAMS)
    x, m, v = marked["b"].subtree
    np.testing.assert_array_equal(x, get_params(state)["b"])
    back = opt.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    for a, b in zip(_leaves(update(1, GRADS[1], back)), _leaves(update(1, GRADS[1], state))):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(PytreeError, match="JoinPoint"):
        opt.pack_optimizer_state({"b": np.ones(2)})


def test_example_libraries_optimizers_is_tf_optimizers():
    from tf_numba.example_libraries import optimizers as jax_path
    for name in opt.__all__:
        assert getattr(jax_path, name) is getattr(opt, name)
