"""Un-jitted transforms: Python control flow on traced values (the trace knows its inputs'
values, as autograd and eager JAX do), jit's ConcretizationError, and the cache of
transformed programs (transforms/cache.py) never serving a program traced for another
branch or other closed-over data."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError
from tf_numba.transforms.cache import TRANSFORMS, TransformCache, structure_key


def piecewise(x):
    if x > 0:
        return tnp.sin(x) * x
    return x ** 3


def d_piecewise(x):
    return np.sin(x) + x * np.cos(x) if x > 0 else 3 * x ** 2


def test_grad_follows_the_branch_python_takes_on_each_call():
    g = tf.grad(piecewise)
    for x in (1.3, -0.7, 2.0, -2.0, 1.3):      # alternating: the cache must not mix them
        assert g(x) == pytest.approx(d_piecewise(x), rel=1e-14)


def test_while_loop_float_and_int_on_traced_values_under_grad():
    def doubling(x):
        y = x
        while float(y) < 10:        # float() of a traced value
            y = y * 2
        return y

    def power(x):
        y = x
        for _ in range(int(x)):     # int() of a traced value as a trip count
            y = y * x
        return y
    assert tf.grad(doubling)(1.5) == 8.0          # 1.5 * 8 = 12 >= 10 after 3 doublings
    assert tf.grad(doubling)(6.0) == 2.0
    assert tf.grad(power)(3.0) == pytest.approx(4 * 3.0 ** 3)
    assert tf.grad(power)(2.0) == pytest.approx(3 * 2.0 ** 2)


def test_array_conditions_and_indexing_by_a_traced_int():
    def f(x):
        i = int(tnp.argmax(x))
        total = x[i] * 2
        if tnp.all(x > -10):
            total = total + tnp.sum(x ** 2)
        return total
    x = np.array([0.5, 3.0, -1.0])
    want = 2 * x
    want[1] += 2
    np.testing.assert_allclose(tf.grad(f)(x), want, rtol=1e-14)


def test_value_and_grad_vjp_jvp_and_linearize_take_the_branch():
    x = -1.5
    value, g = tf.value_and_grad(piecewise)(x)
    assert value == pytest.approx(x ** 3) and g == pytest.approx(d_piecewise(x))
    out, vjp_fn = tf.vjp(piecewise, 0.8)
    assert out == pytest.approx(piecewise(0.8)) and vjp_fn(1.0)[0] == pytest.approx(
        d_piecewise(0.8))
    primal, tangent = tf.jvp(piecewise, (-0.4,), (2.0,))
    assert primal == pytest.approx(-0.4 ** 3) and tangent == pytest.approx(
        2 * d_piecewise(-0.4))
    primal, f_jvp = tf.linearize(piecewise, 0.9)
    assert f_jvp(1.0) == pytest.approx(d_piecewise(0.9))


def test_hessian_and_nested_grad_of_python_control_flow():
    def f(x):
        if tnp.sum(x) > 0:
            return tnp.sum(tnp.sin(x) * x[0])
        return tnp.sum(x ** 3)
    for x in (np.array([0.3, 0.9]), np.array([-0.3, -0.9])):
        h = tf.hessian(f)(x)
        if x.sum() > 0:     # d2/dx_i dx_j of x0 * (sin x0 + sin x1)
            want = np.array([[2 * np.cos(x[0]) - x[0] * np.sin(x[0]), np.cos(x[1])],
                             [np.cos(x[1]), -x[0] * np.sin(x[1])]])
        else:
            want = np.diag(6 * x)
        np.testing.assert_allclose(h, want, rtol=1e-13, atol=1e-15)
    assert tf.grad(tf.grad(piecewise))(-2.0) == pytest.approx(-12.0)
    assert tf.grad(tf.grad(piecewise))(1.0) == pytest.approx(2 * np.cos(1) - np.sin(1))


def test_grad_matches_jax_on_control_flow():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def make(np_):
        def f(x):
            y = x
            while np_.sum(y ** 2) < 20.0:
                y = y * 1.5 + np_.sin(y)
            return np_.sum(y) if y[0] > 0 else np_.prod(y)
        return f
    with jax.enable_x64(True):      # not left on for other tests
        for x in (np.array([0.5, -0.2, 0.1]), np.array([-0.5, 0.3, 0.2])):
            np.testing.assert_allclose(tf.grad(make(tnp))(x), jax.grad(make(jnp))(x),
                                       rtol=1e-12)


def test_jit_keeps_the_concretization_error_with_its_advice():
    with pytest.raises(ConcretizationError) as info:
        tf.jit(tf.grad(piecewise))(1.0)
    text = str(info.value)
    assert "tnp.where" in text and "static_argnums" in text and "jit" in text
    assert __file__ in str(info.value.source)     # names the user's `if`
    with pytest.raises(ConcretizationError):
        tf.vmap(tf.grad(piecewise))(np.ones(3))
    assert tf.jit(tf.grad(piecewise), static_argnums=0)(1.0) == pytest.approx(
        d_piecewise(1.0))


def test_arguments_not_differentiated_reach_the_function_as_they_are():
    seen = []

    def loss(w, X, n):
        seen.append((type(X), type(n)))
        centered = X - np.mean(X, axis=0)       # raw NumPy on data, as autograd allows
        return tnp.sum(tnp.tanh(centered @ w)) * n
    rng = np.random.default_rng(0)
    w, X = rng.normal(size=3), rng.normal(size=(5, 3))
    g = tf.grad(loss)(w, X, 2)
    Xc = X - X.mean(axis=0)
    np.testing.assert_allclose(g, 2 * Xc.T @ (1 - np.tanh(Xc @ w) ** 2), rtol=1e-13)
    assert seen == [(np.ndarray, int)]


def test_a_cached_program_reads_this_calls_closed_over_data():
    rng = np.random.default_rng(1)
    data = {"X": rng.normal(size=(4, 3))}

    def loss(w):
        return tnp.sum((data["X"] @ w) ** 2)
    g = tf.grad(loss)
    w = rng.normal(size=3)
    for _ in range(3):
        X = data["X"]
        np.testing.assert_allclose(g(w), 2 * X.T @ (X @ w), rtol=1e-13)
        data["X"] = rng.normal(size=(4, 3))       # rebinding: the next call sees it


def test_the_transform_cache_hits_for_the_same_structure_only():
    def f(x, y):
        return tnp.sum(tnp.tanh(x * y))
    g = tf.grad(f)
    x, y = np.ones(3), np.full(3, 2.0)
    g(x, y)
    before = TRANSFORMS.info()
    np.testing.assert_allclose(g(x * 3, y), 2 * (1 - np.tanh(6.0) ** 2))
    after = TRANSFORMS.info()
    assert after["hits"] == before["hits"] + 1 and after["misses"] == before["misses"]
    g(np.ones(4), np.ones(4))                     # another shape: another structure
    assert TRANSFORMS.info()["misses"] == after["misses"] + 1


def test_structure_keys_ignore_variables_and_input_data_but_not_literals():
    def make(scale):
        return tf.make_program(lambda x: tnp.sum(tnp.sin(x) * scale))
    a, b = make(2.0)(np.ones(3)), make(2.0)(np.zeros(3))
    assert structure_key(a, []) == structure_key(b, [])
    assert structure_key(make(3.0)(np.ones(3)), []) != structure_key(a, [])
    nan_a, nan_b = make(np.nan)(np.ones(3)), make(np.nan)(np.ones(3))
    assert structure_key(nan_a, []) == structure_key(nan_b, [])


def test_transform_cache_is_bounded_and_builds_once_per_key():
    cache = TransformCache(max_entries=2)
    built = []
    programs = [tf.make_program(lambda x, k=k: x * k)(np.ones(2)) for k in (2.0, 3.0, 4.0)]
    for p in programs + programs[-1:]:
        assert cache.get_or_build("t", p, lambda q: built.append(q) or q) is built[-1]
    assert built == programs and cache.info() == dict(entries=2, hits=1, misses=3)


# ---------------------------------------------------------------- error messages

def test_numpy_ufunc_on_a_tracer_names_tnp_and_the_users_line():
    from tf_numba.errors import TracerArrayConversionError

    def f(x):
        return np.sin(x) * 2                          # the line the error must name
    with pytest.raises(TracerArrayConversionError) as info:
        tf.grad(lambda x: tnp.sum(f(x)))(np.ones(3))
    assert "tnp.sin" in str(info.value) and "f64[3]" in str(info.value)
    assert __file__ in str(info.value.source) and info.value.source[2] == "f"
    with pytest.raises(TypeError, match="tnp.linalg.norm"):   # a TypeError, as NumPy's
        tf.make_program(lambda x: np.linalg.norm(x))(np.ones(3))
    with pytest.raises(TracerArrayConversionError, match="tnp.concatenate"):
        tf.make_program(lambda x: np.concatenate([x, x]))(np.ones(3))


def test_numpy_operators_and_methods_on_tracers_still_trace():
    def f(x):
        acc = np.zeros(3)
        acc += x                    # ndarray += tracer rebinds acc to a traced value
        return np.sum(np.ones(3) * acc + np.reshape(x, (3,))) + (np.ones(3) < x).sum()
    x = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(tf.grad(f)(x), np.full(3, 2.0))
    assert float(tf.jvp(f, (x,), (np.ones(3),))[0]) == 2 * x.sum() + (x > 1).sum()


def test_a_string_argument_to_jit_is_told_to_be_static():
    from tf_numba.errors import DTypeError

    def f(x, mode):
        return x * 2 if mode == "double" else x
    with pytest.raises(DTypeError) as info:
        tf.jit(f)(np.ones(3), "double")
    text = str(info.value)
    assert "static_argnums" in text and "static_argnames" in text and ".astype" not in text
    assert "'double'" in text and __file__ in str(info.value.source)
    assert "a string argument" in text and "str" + "128" not in text   # not NumPy's name
    np.testing.assert_array_equal(tf.grad(lambda x, m: tnp.sum(f(x, m)))(np.ones(2), "double"),
                                  [2.0, 2.0])      # un-jitted: passed through as it is


def test_transform_cache_is_bounded_in_bytes_of_constants():
    big = np.zeros(1000)
    programs = [tf.make_program(lambda x, k=k: x * big + k)(np.ones(1000))
                for k in (1.0, 2.0, 3.0)]
    cache = TransformCache(max_bytes=2 * big.nbytes)
    for p in programs:
        cache.get_or_build("t", p, lambda q: q)
    assert cache.info()["entries"] == 2 and cache.bytes == 2 * big.nbytes
    too_big = TransformCache(max_bytes=big.nbytes - 1)
    too_big.get_or_build("t", programs[0], lambda q: q)
    assert too_big.info()["entries"] == 0
