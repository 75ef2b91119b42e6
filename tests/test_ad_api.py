"""The AD API: grad/value_and_grad/vjp/jvp/linearize/jacfwd/jacrev/hessian, nesting,
pytrees, custom rules, stop_gradient and the errors users see."""
import collections
import math

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import DTypeError, ShapeError, TfNumbaError
from tf_numba.ops import contraction as C
from tf_numba.ops import elementwise as E
from tf_numba.ops import layout
from tf_numba.ops import reductions as R

from ad_checks import assert_close, check_grads

Point = collections.namedtuple("Point", "x y")


def _sum(x):
    return R.reduce_sum(x)


def _fd_jacobian(f, x, h=1e-6):
    """d f / d x by central differences, shape f(x).shape + x.shape."""
    x = np.asarray(x, np.float64)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape)
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    out_shape = np.shape(cols[0])
    return np.moveaxis(np.array(cols), 0, -1).reshape(out_shape + x.shape)


# ---------------------------------------------------------------- higher order

def _tanh3_d3(x):
    u = math.tanh(x)
    return (1 - u * u) * (6 - 54 * u ** 2 + 60 * u ** 4)


def _exp_over_d3(x):
    q = 1 / (1 + x * x)
    return math.exp(x) * (q - 6 * x * q ** 2 + 3 * (-2 * q ** 2 + 8 * x * x * q ** 3)
                          + 24 * x * q ** 3 - 48 * x ** 3 * q ** 4)


# (name, f, third derivative): derived by hand, checked with sympy
THIRD_DERIVATIVES = [
    ("sin(x)*x", lambda x: E.mul(E.sin(x), x), lambda x: -x * math.cos(x) - 3 * math.sin(x)),
    ("exp(x)/(1+x^2)", lambda x: E.div(E.exp(x), E.add(E.mul(x, x), 1.0)), _exp_over_d3),
    ("tanh(x)^3", lambda x: E.pow(E.tanh(x), 3.0), _tanh3_d3),
    ("log1p(x^2)", lambda x: E.log1p(E.mul(x, x)),
     lambda x: (4 * x ** 3 - 12 * x) / (1 + x * x) ** 3),
    ("x**2.5", lambda x: E.pow(x, 2.5), lambda x: 1.875 / math.sqrt(x)),
]


@pytest.mark.parametrize("name,f,d3", THIRD_DERIVATIVES, ids=[t[0] for t in THIRD_DERIVATIVES])
@pytest.mark.parametrize("x", [0.3, 1.7])
def test_third_order_grad_matches_analytic_derivative(name, f, d3, x):
    assert tf.grad(tf.grad(tf.grad(f)))(x) == pytest.approx(d3(x), rel=1e-12, abs=1e-12)


def test_third_order_by_forward_and_mixed_modes_agree():
    f = THIRD_DERIVATIVES[1][1]
    x = 0.6

    def fwd(g):
        return lambda x: tf.jvp(g, (x,), (1.0,))[1]
    expected = _exp_over_d3(x)
    assert fwd(fwd(fwd(f)))(x) == pytest.approx(expected, rel=1e-12)
    assert fwd(tf.grad(fwd(f)))(x) == pytest.approx(expected, rel=1e-12)
    assert tf.grad(fwd(tf.grad(f)))(x) == pytest.approx(expected, rel=1e-12)


def _coupled(x):
    """A scalar function of a vector with a dense Hessian."""
    return E.add(E.mul(_sum(E.mul(x, x)), _sum(E.sin(x))), _sum(E.exp(E.mul(x, 0.5))))


def test_jvp_of_grad_is_hessian_vector_product():
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    h = tf.hessian(_coupled)(x)
    assert h.shape == (4, 4)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-12)
    assert_close(h, _fd_jacobian(tf.grad(_coupled), x), "hessian vs FD of grad")
    _, hv = tf.jvp(tf.grad(_coupled), (x,), (v,))
    np.testing.assert_allclose(hv, h @ v, rtol=1e-12, atol=1e-12)


def _vector_fn(a):
    """R^(2x3) -> R^2: a matrix product and a slice of ``a`` mixed, then squashed."""
    m = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 0.0]])
    product = C.dot_general(a, m, (((1,), (0,)), ((), ())))
    mixed = E.mul(product, E.sin(layout.slice_(a, (0, 0), (2, 2))))
    return E.tanh(R.reduce_sum(mixed, 1))


def test_jacfwd_equals_jacrev_and_finite_differences():
    x = np.random.default_rng(1).standard_normal((2, 3))
    jf = tf.jacfwd(_vector_fn)(x)
    jr = tf.jacrev(_vector_fn)(x)
    assert jf.shape == jr.shape == (2, 2, 3)
    np.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-12)
    assert_close(jf, _fd_jacobian(_vector_fn, x), "jacfwd vs FD")


def test_jacobians_of_several_arguments_and_outputs():
    def f(x, y):
        return {"p": E.mul(x, y), "s": _sum(E.sin(E.mul(x, y)))}
    x, y = np.array([0.3, -0.7]), np.array([1.1, 0.4])
    jf = tf.jacfwd(f, argnums=(0, 1))(x, y)
    jr = tf.jacrev(f, argnums=(0, 1))(x, y)
    assert jf["p"][0].shape == (2, 2) and jf["s"][1].shape == (2,)
    for k in ("p", "s"):
        for i in range(2):
            np.testing.assert_allclose(jf[k][i], jr[k][i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jf["p"][0], np.diag(y))
    np.testing.assert_allclose(jf["s"][1], np.cos(x * y) * x)


# ---------------------------------------------------------------- nesting

def test_grad_of_a_function_that_calls_grad_on_a_closure():
    # inner: d/dy (x y^2) = 2 x y, at y = x: 2 x^2; outer derivative: 4 x
    f = tf.grad(lambda x: tf.grad(lambda y: E.mul(E.mul(x, y), y))(x))
    assert f(1.5) == pytest.approx(6.0, rel=1e-14)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = d/dx [x] = 1 (Siskind & Pearlmutter's example)
    f = tf.grad(lambda x: E.mul(x, tf.grad(lambda y: E.add(x, y))(x)))
    assert f(2.0) == 1.0
    g = tf.grad(lambda x: tf.grad(lambda y: E.mul(x, y))(3.0))
    assert g(2.0) == 1.0


def test_value_and_grad_under_grad():
    def f(x):
        value, g = tf.value_and_grad(lambda y: E.mul(E.sin(y), x))(x)
        return E.add(value, g)      # x sin x + x cos x
    x = 0.8
    expected = math.sin(x) + x * math.cos(x) + math.cos(x) - x * math.sin(x)
    assert tf.grad(f)(x) == pytest.approx(expected, rel=1e-14)


# ---------------------------------------------------------------- pytrees

def _tree_fn(params, pt, nothing, xs):
    assert nothing is None
    w, (b, [c]) = params["w"], params["b"]
    h = E.add(E.mul(w, pt.x), b)
    return E.add(_sum(E.mul(E.tanh(h), pt.y)), E.mul(c, _sum(E.mul(xs[0], xs[1]))))


def _tree_args():
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal(3), "b": (np.float64(0.3), [np.float64(-0.2)])}
    pt = Point(rng.standard_normal(3), rng.standard_normal(3))
    return params, pt, None, [rng.standard_normal(2), rng.standard_normal(2)]


def test_grad_keeps_the_structure_of_each_argument():
    args = _tree_args()
    gp, gpt, gxs = tf.grad(_tree_fn, argnums=(0, 1, 3))(*args)
    assert set(gp) == {"w", "b"} and isinstance(gp["b"], tuple) and isinstance(gp["b"][1], list)
    assert isinstance(gpt, Point) and isinstance(gxs, list) and len(gxs) == 2
    np.testing.assert_allclose(gxs[0], args[0]["b"][1][0] * args[3][1])
    assert tf.grad(_tree_fn, argnums=2)(*args) is None
    assert isinstance(tf.grad(_tree_fn, argnums=(1,))(*args), tuple)


def test_pytree_arguments_match_finite_differences():
    check_grads(_tree_fn, _tree_args(), order=2)


def test_pytree_outputs_match_finite_differences():
    def f(x, y):
        return {"a": E.sin(x), "b": (E.mul(x, y), [E.exp(y)]), "c": None}
    rng = np.random.default_rng(3)
    check_grads(f, (rng.standard_normal(3), rng.standard_normal(3)), order=2)


def test_has_aux_returns_aux_untouched():
    def f(x):
        return _sum(E.mul(x, x)), {"n": E.mul(x, 2.0), "tag": (x,)}
    x = np.array([1.0, 2.0])
    g, aux = tf.grad(f, has_aux=True)(x)
    np.testing.assert_array_equal(g, 2 * x)
    np.testing.assert_array_equal(aux["n"], 2 * x)
    np.testing.assert_array_equal(aux["tag"][0], x)
    (value, aux2), g2 = tf.value_and_grad(f, has_aux=True)(x)
    assert value == 5.0 and set(aux2) == {"n", "tag"}
    np.testing.assert_array_equal(g2, g)


def test_vjp_has_aux_returns_concrete_aux():
    def f(x):
        return _sum(E.mul(x, x)), {"n": E.mul(x, 2.0)}
    x = np.array([1.0, 2.0])
    out, f_vjp, aux3 = tf.vjp(f, x, has_aux=True)
    assert out == 5.0
    np.testing.assert_array_equal(f_vjp(1.0)[0], 2 * x)
    np.testing.assert_array_equal(aux3["n"], 2 * x)


def test_argnums_tuple_and_negative_argnums():
    def f(x, y, z):
        return E.mul(E.mul(x, y), E.sin(z))
    gx, gz = tf.grad(f, argnums=(0, 2))(2.0, 3.0, 0.5)
    assert gx == pytest.approx(3 * math.sin(0.5))
    assert gz == pytest.approx(6 * math.cos(0.5))
    assert tf.grad(f, argnums=-1)(2.0, 3.0, 0.5) == pytest.approx(gz)


def test_jvp_with_namedtuple_primals():
    def f(p):
        return Point(E.mul(p.x, p.y), E.sin(p.x))
    p = Point(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    t = Point(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    out, tout = tf.jvp(f, (p,), (t,))
    assert isinstance(out, Point) and isinstance(tout, Point)
    np.testing.assert_allclose(tout.x, [3.0, 2.0])
    np.testing.assert_allclose(tout.y, [math.cos(1.0), 0.0])


# ---------------------------------------------------------------- linearize, vjp

def test_linearize_equals_jvp():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(3), rng.standard_normal(3)

    def f(x, y):
        return (E.mul(E.sin(x), y), _sum(E.exp(E.mul(x, y))))
    out, f_jvp = tf.linearize(f, x, y)
    for _ in range(2):
        tx, ty = rng.standard_normal(3), rng.standard_normal(3)
        out2, expected = tf.jvp(f, (x, y), (tx, ty))
        assert_close(out, out2, "linearize primal")
        assert_close(f_jvp(tx, ty), expected, "linearize tangent", rtol=1e-13, atol=1e-13)


def test_vjp_with_multiple_outputs_sums_their_contributions():
    def f(x):
        return E.sin(x), _sum(E.mul(x, x)), E.exp(x)
    x = np.array([0.2, -0.4, 1.0])
    (a, s, b), f_vjp = tf.vjp(f, x)
    ca, cs, cb = np.array([1.0, 2.0, 3.0]), 0.5, np.array([-1.0, 0.0, 1.0])
    (g,) = f_vjp((ca, cs, cb))
    np.testing.assert_allclose(g, ca * np.cos(x) + cs * 2 * x + cb * np.exp(x), rtol=1e-14)
    (g1,) = f_vjp((ca, 0.0, np.zeros(3)))
    np.testing.assert_allclose(g1, ca * np.cos(x), rtol=1e-14)


def test_vjp_fn_rejects_wrong_cotangent_structure_and_shape():
    _, f_vjp = tf.vjp(lambda x: (E.sin(x), E.cos(x)), np.ones(3))
    with pytest.raises(TfNumbaError):
        f_vjp(np.ones(3))
    with pytest.raises(ShapeError):
        f_vjp((np.ones(3), np.ones(2)))


# ---------------------------------------------------------------- custom rules

@tf.custom_jvp
def sin_triple_rule(x):
    return E.sin(x)


@sin_triple_rule.defjvp
def _sin_triple_rule_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return E.sin(x), E.mul(E.mul(E.cos(x), 3.0), t)


def test_custom_jvp_rule_is_used():
    x = 0.7
    assert sin_triple_rule(x) == pytest.approx(math.sin(x))
    _, t = tf.jvp(sin_triple_rule, (x,), (2.0,))
    assert t == pytest.approx(6 * math.cos(x))
    assert tf.grad(sin_triple_rule)(x) == pytest.approx(3 * math.cos(x))
    assert tf.grad(lambda x: E.mul(sin_triple_rule(x), x))(x) == pytest.approx(
        3 * math.cos(x) * x + math.sin(x))


def test_custom_jvp_rule_is_differentiated_for_higher_order():
    assert tf.grad(tf.grad(sin_triple_rule))(0.7) == pytest.approx(-3 * math.sin(0.7))


@tf.custom_vjp
def sin_double_bwd(x, y):
    return E.mul(E.sin(x), y)


def _sdb_fwd(x, y):
    return E.mul(E.sin(x), y), (E.cos(x), E.sin(x), y)


def _sdb_bwd(res, ct):
    cos_x, sin_x, y = res
    return E.mul(E.mul(E.mul(cos_x, y), 2.0), ct), E.mul(sin_x, ct)


sin_double_bwd.defvjp(_sdb_fwd, _sdb_bwd)


def test_custom_vjp_bwd_is_used_under_grad_and_vjp():
    x, y = 0.7, 1.5
    assert sin_double_bwd(x, y) == pytest.approx(math.sin(x) * y)
    gx, gy = tf.grad(sin_double_bwd, argnums=(0, 1))(x, y)
    assert gx == pytest.approx(2 * math.cos(x) * y)
    assert gy == pytest.approx(math.sin(x))
    _, f_vjp = tf.vjp(sin_double_bwd, np.array([x]), np.array([y]))
    np.testing.assert_allclose(f_vjp(np.array([2.0]))[0], [4 * math.cos(x) * y])


def test_jvp_of_custom_vjp_differentiates_the_forward_function():
    x, y = 0.7, 1.5
    _, t = tf.jvp(sin_double_bwd, (x, y), (1.0, 0.0))
    assert t == pytest.approx(math.cos(x) * y)


def test_grad_of_grad_through_custom_vjp_differentiates_bwd():
    assert tf.grad(tf.grad(sin_double_bwd))(0.7, 1.5) == pytest.approx(-2 * math.sin(0.7) * 1.5)


def test_stop_gradient_blocks_the_derivative():
    assert tf.grad(lambda x: E.mul(x, tf.stop_gradient(x)))(3.0) == 3.0
    assert tf.grad(lambda x: tf.stop_gradient(E.sin(x)))(3.0) == 0.0
    tree = tf.stop_gradient({"a": np.ones(2), "n": np.arange(2)})
    assert tree["n"].dtype == np.int64
    g = tf.grad(lambda p: _sum(E.mul(tf.stop_gradient(p)["a"], p["a"])))({"a": np.ones(2) * 2})
    np.testing.assert_array_equal(g["a"], [2.0, 2.0])


# ---------------------------------------------------------------- errors

def _assert_points_here(err):
    assert err.source is not None, "error has no source"
    assert err.source[0] == __file__, err.source
    assert __file__ in str(err)


def test_grad_of_non_scalar_output_is_a_shape_error():
    with pytest.raises(ShapeError) as info:
        tf.grad(lambda x: E.sin(x))(np.ones(3))
    assert "f64[3]" in str(info.value) or "float64[3]" in str(info.value)
    _assert_points_here(info.value)


def test_grad_of_complex_output_is_an_error():
    with pytest.raises(TfNumbaError) as info:
        tf.grad(lambda z: E.mul(z, z))(np.complex128(1 + 1j))
    assert "complex128" in str(info.value)
    _assert_points_here(info.value)


def test_grad_wrt_integer_argument_is_a_dtype_error():
    with pytest.raises(DTypeError) as info:
        tf.grad(lambda x, n: E.mul(x, E.convert_element_type(n, np.float64)),
                argnums=(0, 1))(1.0, np.int64(3))
    assert "argument 1" in str(info.value) and "int64" in str(info.value)
    _assert_points_here(info.value)


def test_argnums_out_of_range_is_an_error():
    with pytest.raises(ValueError) as info:         # as JAX's: a ValueError, and ours
        tf.grad(lambda x, y: E.mul(x, y), argnums=5)(1.0, 2.0)
    assert isinstance(info.value, TfNumbaError)
    assert "argnums=5" in str(info.value) and "2 positional" in str(info.value)
    _assert_points_here(info.value)


def test_has_aux_function_that_does_not_return_a_pair_is_an_error():
    with pytest.raises(TfNumbaError) as info:
        tf.grad(lambda x: E.sin(x), has_aux=True)(1.0)
    assert "has_aux" in str(info.value) and "pair" in str(info.value)
    _assert_points_here(info.value)
    with pytest.raises(TfNumbaError):
        tf.grad(lambda x: (E.sin(x), 1, 2), has_aux=True)(1.0)


def test_jvp_tangent_of_wrong_shape_is_a_shape_error():
    with pytest.raises(ShapeError) as info:
        tf.jvp(E.sin, (np.ones(3),), (np.ones(2),))
    _assert_points_here(info.value)


def test_jacobian_wrt_integer_argument_is_a_dtype_error():
    for jac in (tf.jacfwd, tf.jacrev):
        with pytest.raises(DTypeError):
            jac(lambda n: E.convert_element_type(n, np.float64))(np.arange(3))


def test_grad_wrt_python_int_argument_is_a_dtype_error_naming_it():
    with pytest.raises(DTypeError) as info:
        tf.grad(lambda x: E.mul(x, x))(2)
    assert "argument 0" in str(info.value)


def test_repeated_argnums_give_one_gradient_each():
    assert tf.grad(lambda x, y: E.mul(x, y), argnums=(0, 0))(2.0, 3.0) == (3.0, 3.0)


def test_error_messages_name_the_op_once():
    with pytest.raises(ShapeError) as info:
        tf.jvp(E.sin, (np.ones(3),), (np.ones(2),))
    assert "jvp: jvp:" not in str(info.value)


def test_derivatives_of_api_transforms_match_finite_differences():
    x = np.random.default_rng(5).standard_normal(3)
    check_grads(tf.grad(_coupled), (x,), order=2)
    check_grads(lambda x: tf.jvp(_coupled, (x,), (np.ones(3),))[1], (x,), order=2)


def test_float32_gradients_stay_float32():
    x = np.ones(2, np.float32)
    value, g = tf.value_and_grad(lambda x: _sum(E.sin(x)))(x)
    assert value.dtype == np.float32 and g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(1.0), rtol=1e-6)


def test_gradients_of_unused_and_identity_inputs():
    assert tf.grad(lambda x: x)(2.0) == 1.0
    assert tf.grad(lambda x: 1.0)(2.0) == 0.0
    g = tf.grad(lambda x, y: E.sin(y))(np.ones(2), 1.0)
    np.testing.assert_array_equal(g, [0.0, 0.0])


_ZERO_D_RESULTS = {         # each a 0-d ndarray before, but the mean's and the dot's jvp
    "value_and_grad of a sum": lambda x: tf.value_and_grad(lambda v: tnp.sum(v * v))(x)[0],
    "value_and_grad of a mean": lambda x: tf.value_and_grad(lambda v: tnp.mean(v * v))(x)[0],
    "value_and_grad of a product": lambda x: tf.value_and_grad(lambda v: v @ v)(x)[0],
    "grad by a scalar": lambda x: tf.grad(lambda t: tnp.sum(t * x))(2.0),
    "jvp primal": lambda x: tf.jvp(lambda v: v @ v, (x,), (x,))[0],
    "jvp tangent": lambda x: tf.jvp(lambda v: tnp.sum(v * v), (x,), (x,))[1],
    "vjp primal": lambda x: tf.vjp(lambda v: v @ v, x)[0],
    "vjp cotangent": lambda x: tf.vjp(lambda t: x @ (t * x), 3.0)[1](1.0)[0],
    "vjp zero cotangent": lambda x: tf.vjp(lambda t, n: t * 2.0, 3.0, 2.5)[1](1.0)[1],
    "linearize": lambda x: tf.linearize(lambda v: tnp.sum(v * v), x)[1](x),
    "vmap out_axes None": lambda x: tf.vmap(lambda v, c: c @ c, in_axes=(0, None),
                                            out_axes=None)(np.ones((4, 3)), x),
    "hessian by a scalar": lambda x: tf.hessian(lambda t: t ** 3)(2.0),
}


@pytest.mark.parametrize("name", sorted(_ZERO_D_RESULTS))
def test_eager_zero_d_results_are_numpy_scalars_whichever_op_made_them(name):
    value = _ZERO_D_RESULTS[name](np.arange(3.0))
    assert isinstance(value, np.float64) and not isinstance(value, np.ndarray), repr(value)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("jit", [False, True])
def test_jacobians_with_has_aux_return_the_auxiliary_output_as_jax(transform, jit):
    x = np.array([0.3, -0.7, 1.1])

    def f(v):
        out = tnp.sum(tnp.sin(v) * v ** 2) if transform == "hessian" else tnp.sin(v) * v[0]
        return out, {"cos": tnp.cos(v), "count": 3}
    with_aux = getattr(tf, transform)(f, has_aux=True)
    jac, aux = (tf.jit(with_aux) if jit else with_aux)(x)
    plain = getattr(tf, transform)(lambda v: f(v)[0])(x)
    np.testing.assert_allclose(jac, plain, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(aux["cos"], np.cos(x), rtol=1e-15)
    assert int(aux["count"]) == 3
    if transform == "jacrev":       # analytic: d(sin(v) v0)/dv = diag(cos v) v0 + e0 sin v
        want = np.diag(np.cos(x)) * x[0]
        want[:, 0] += np.sin(x)
        np.testing.assert_allclose(jac, want, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_a_jacobian_with_has_aux_of_a_function_returning_no_pair_names_itself(transform):
    with pytest.raises(ValueError, match=rf"{transform}: has_aux=True needs .* pair"):
        getattr(tf, transform)(lambda v: tnp.sin(v), has_aux=True)(np.ones(3))
