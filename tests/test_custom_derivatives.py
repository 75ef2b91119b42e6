"""custom_jvp / custom_vjp as JAX has them: None (zero) cotangents and tangents,
nondiff_argnums, defjvps, symbolic zeros; the JAX documentation's examples, checked
against analytic values and against JAX where installed."""
import functools
import math

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.custom_derivatives import CustomVJPPrimal, SymbolicZero
from tf_numba.errors import ShapeError, TfNumbaError


# ---------------------------------------------------------------- None cotangents

@tf.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, tnp.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def _clipped(x):
    return clip_gradient(-0.75, 0.75, x)


def test_clip_gradient_doc_example():
    assert _clipped(3.0) == 3.0
    assert tf.grad(_clipped)(0.0) == 0.75
    assert tf.grad(lambda x: 0.5 * _clipped(x))(0.0) == 0.5
    xs = np.array([-2.0, 0.1, 3.0])
    g = tf.vmap(tf.grad(lambda x: _clipped(x) * x))(xs)
    np.testing.assert_allclose(g, np.clip(xs, -0.75, 0.75) + xs)


def test_clip_gradient_matches_jax():
    jax = pytest.importorskip("jax")

    @jax.custom_vjp
    def jclip(lo, hi, x):
        return x
    jclip.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                 lambda res, g: (None, None, jax.numpy.clip(g, *res)))

    def f(clip, x):
        return clip(-0.75, 0.75, x * x) * 2.0
    for x in (-3.0, 0.2, 5.0):   # JAX computes in float32
        assert tf.grad(functools.partial(f, clip_gradient))(x) == pytest.approx(
            float(jax.grad(functools.partial(f, jclip))(x)), rel=1e-6)


def test_grad_wrt_argument_whose_cotangent_is_none_is_zero():
    g_lo, g_x = tf.grad(lambda lo, x: clip_gradient(lo, 1.0, x), argnums=(0, 1))(-1.0, 0.3)
    assert g_lo == 0.0 and g_x == 1.0


@tf.custom_vjp
def scaled_tree(params, x):
    return params["w"] * x + params["b"]


scaled_tree.defvjp(lambda p, x: (scaled_tree(p, x), (p["w"], x)),
                   # None for a whole pytree argument, and inside one
                   lambda res, g: ({"w": tnp.sum(g * res[1]), "b": None}, None))


def test_none_cotangent_for_a_subtree_and_a_whole_pytree_argument():
    p = {"w": np.array(2.0), "b": np.array(0.5)}
    x = np.array([1.0, 3.0])
    gp, gx = tf.grad(lambda p, x: tnp.sum(scaled_tree(p, x)), argnums=(0, 1))(p, x)
    assert gp["w"] == 4.0 and gp["b"] == 0.0
    np.testing.assert_array_equal(gx, [0.0, 0.0])


def test_bwd_with_wrong_number_of_cotangents_is_an_error():
    @tf.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(TfNumbaError, match=r"one cotangent .* per differentiable argument "
                                           r"\(2\); it returned 1 entry"):
        tf.grad(f)(1.0, 2.0)


def test_bwd_with_wrong_structure_is_an_error():
    @tf.custom_vjp
    def f(p):
        return p[0] * p[1]
    f.defvjp(lambda p: (f(p), p), lambda res, g: ([g, g, g],))
    with pytest.raises(TfNumbaError, match="does not match"):
        tf.grad(f)((1.0, 2.0))


# ---------------------------------------------------------------- nondiff_argnums

@functools.partial(tf.custom_vjp, nondiff_argnums=(0,))
def app_vjp(f, x):
    return f(x)


app_vjp.defvjp(lambda f, x: (app_vjp(f, x), x), lambda f, x, g: (5 * g,))


@functools.partial(tf.custom_jvp, nondiff_argnums=(0,))
def app_jvp(f, x):
    return f(x)


@app_jvp.defjvp
def _app_jvp_rule(f, primals, tangents):
    (x,), (t,) = primals, tangents
    return f(x), 2.0 * t


def test_nondiff_argnums_pass_python_functions_to_the_rules():
    assert app_vjp(lambda x: x ** 3, 3.0) == 27.0
    assert tf.grad(lambda x: app_vjp(lambda y: y ** 3, x))(3.0) == 5.0
    assert app_jvp(lambda x: x ** 3, 3.0) == 27.0
    assert tf.jvp(lambda x: app_jvp(tnp.sin, x), (1.0,), (3.0,))[1] == 6.0
    assert tf.grad(lambda x: app_jvp(tnp.sin, x))(1.0) == 2.0
    out = tf.vmap(tf.grad(lambda x: app_vjp(tnp.sin, x) * x))(np.array([1.0, 2.0]))
    np.testing.assert_allclose(out, 5 * np.array([1.0, 2.0]) + np.sin([1.0, 2.0]))


@functools.partial(tf.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return tnp.abs(x_prev - x) > 1e-6

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)
    _, x_star = tf.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star


def _fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def _rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = tf.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def _fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = tf.vjp(lambda a: f(a, x_star), a)
    a_bar, = vjp_a(fixed_point(functools.partial(_rev_iter, f), (a, x_star, x_star_bar),
                               x_star_bar))
    return a_bar, tnp.zeros_like(x_star)


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_rev)


def test_fixed_point_doc_example():
    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)
    assert newton_sqrt(2.0) == pytest.approx(math.sqrt(2.0), rel=1e-10)
    assert tf.grad(newton_sqrt)(2.0) == pytest.approx(0.5 / math.sqrt(2.0), rel=1e-6)
    assert tf.grad(tf.grad(newton_sqrt))(2.0) == pytest.approx(-0.25 * 2.0 ** -1.5, rel=1e-5)


def test_nondiff_argnums_out_of_range_is_an_error():
    f = tf.custom_vjp(lambda x: x, nondiff_argnums=(2,))
    f.defvjp(lambda x: (x, None), lambda res, g: (g,))
    with pytest.raises(TfNumbaError, match="nondiff_argnums"):
        tf.grad(f)(1.0)


def test_nondiff_values_are_part_of_the_rule_fingerprint():
    from tf_numba.custom_derivatives import _BoundRule
    a, b = _BoundRule(app_vjp, (2.0, 1.0)), _BoundRule(app_vjp, (3.0, 1.0))
    assert a.fingerprint() != b.fingerprint()


# ---------------------------------------------------------------- defjvps, None tangents

@tf.custom_jvp
def sin_times(x, y):
    return tnp.sin(x) * y


sin_times.defjvps(lambda tx, ans, x, y: tnp.cos(x) * y * tx,
                  lambda ty, ans, x, y: tnp.sin(x) * ty)


def test_defjvps_sums_one_rule_per_argument():
    x, y = 0.7, 1.5
    _, t = tf.jvp(sin_times, (x, y), (2.0, 3.0))
    assert t == pytest.approx(math.cos(x) * y * 2 + math.sin(x) * 3)
    gx, gy = tf.grad(sin_times, argnums=(0, 1))(x, y)
    assert (gx, gy) == (pytest.approx(math.cos(x) * y), pytest.approx(math.sin(x)))
    assert tf.grad(tf.grad(sin_times))(x, y) == pytest.approx(-math.sin(x) * y)


def test_defjvps_none_rule_means_no_dependence_and_matches_jax():
    jax = pytest.importorskip("jax")
    f = tf.custom_jvp(lambda x, y: x * y)
    f.defjvps(lambda tx, ans, x, y: y * tx, None)
    jf = jax.custom_jvp(lambda x, y: x * y)
    jf.defjvps(lambda tx, ans, x, y: y * tx, None)
    assert tf.grad(f, argnums=(0, 1))(2.0, 3.0) == tuple(
        float(g) for g in jax.grad(jf, argnums=(0, 1))(2.0, 3.0))


def test_jvp_rule_may_return_none_for_a_zero_output_tangent():
    @tf.custom_jvp
    def f(x):
        return tnp.sin(x), tnp.round(x)

    @f.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), (tnp.cos(x) * t, None)
    g = tf.grad(lambda x: f(x)[0] + f(x)[1])(0.4)
    assert g == pytest.approx(math.cos(0.4))


# ---------------------------------------------------------------- symbolic zeros

def test_custom_jvp_symbolic_zeros_reach_the_rule():
    seen = []

    @tf.custom_jvp
    def f(x, y):
        return x * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        seen.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
        out = 0.0 if type(ty) is SymbolicZero else x * ty
        if type(tx) is not SymbolicZero:
            out = out + tx * y
        return f(x, y), out
    f.defjvp(rule, symbolic_zeros=True)
    assert tf.grad(f)(2.0, 3.0) == 3.0
    assert seen[-1] == (False, True)
    zero = [None]

    def rule_shape(primals, tangents):
        zero[0] = tangents[1]
        return rule(primals, tangents)
    f.defjvp(rule_shape, symbolic_zeros=True)
    tf.grad(lambda x, y: tnp.sum(f(x, y)))(np.ones(2), np.ones(2))
    assert zero[0].shape == (2,) and zero[0].dtype == np.float64


def test_custom_vjp_symbolic_zeros_perturbed_and_zero_cotangents():
    seen = {}

    @tf.custom_vjp
    def f(x, y):
        return x * y, x + y

    def fwd(x, y):
        assert isinstance(x, CustomVJPPrimal)
        seen["perturbed"] = (x.perturbed, y.perturbed)
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, cts):
        x, y = res
        c_prod, c_sum = cts
        seen["zero_sum_ct"] = type(c_sum) is SymbolicZero
        gx = c_prod * y + (0.0 if type(c_sum) is SymbolicZero else c_sum)
        return gx, None
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    assert tf.grad(lambda x, y: f(x, y)[0])(2.0, 3.0) == 3.0
    assert seen == {"perturbed": (True, False), "zero_sum_ct": True}


def test_not_symbolic_zeros_rules_get_instantiated_zeros():
    @tf.custom_vjp
    def f(x):
        return x, 2 * x
    f.defvjp(lambda x: (f(x), None), lambda _, cts: (cts[0] + cts[1] * 2.0,))
    assert tf.grad(lambda x: f(x)[1])(1.0) == 2.0


# ---------------------------------------------------------------- calling conventions

def test_keyword_arguments_are_bound_to_positions():
    assert tf.grad(lambda x: clip_gradient(-0.5, hi=0.5, x=x))(1.0) == 0.5


def test_jit_of_grad_through_nondiff_and_none_cotangents_equals_eager():
    def loss(x):
        return tnp.sum(app_vjp(tnp.tanh, x) * clip_gradient(-0.1, 0.1, x))
    x = np.linspace(-1, 1, 5)
    eager = tf.grad(loss)(x)
    np.testing.assert_allclose(eager, 5 * x + np.clip(np.tanh(x), -0.1, 0.1), rtol=1e-13)
    np.testing.assert_allclose(tf.jit(tf.grad(loss), tiered=False)(x), eager, rtol=1e-13)


def _doubled():
    @tf.custom_vjp
    def f(a):
        return a * 2.0
    return f


@pytest.mark.parametrize("jit", [False, True])
def test_bwd_returning_a_cotangent_of_another_shape_is_an_error(jit):
    """JAX checks it; unchecked, the gradient came back with the cotangent's shape."""
    f = _doubled()

    def bwd(res, g):
        return (np.ones(5),)
    f.defvjp(lambda a: (f(a), None), bwd)
    grad = tf.grad(lambda a: tnp.sum(f(a)))
    with pytest.raises(ShapeError, match=r"shape \(5,\) for leaf 0 .* has shape \(3,\)") as info:
        (tf.jit(grad) if jit else grad)(np.ones(3))
    assert info.value.source[0] == __file__ and info.value.source[2] == "bwd"


def test_bwd_returning_a_bare_value_is_told_to_return_a_tuple():
    f = _doubled()
    f.defvjp(lambda a: (f(a), None), lambda res, g: g * 2.0)
    with pytest.raises(TfNumbaError, match=r"a single value, not a tuple \(return \(g,\)"):
        tf.grad(lambda a: tnp.sum(f(a)))(np.ones(3))


def test_python_control_flow_in_custom_jvp_and_its_rule_under_eager_grad():
    # JAX's custom derivatives notebook: outside jit the function and its rule see
    # concrete values, so each branch's rule gives the gradient (2 for x > 0, 3 otherwise)
    @tf.custom_jvp
    def f(x):
        if x > 0:
            return tnp.sin(x)
        return tnp.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        ans = f(x)
        return ans, (2 * t if x > 0 else 3 * t)

    assert tf.grad(f)(1.0) == 2.0 and tf.grad(f)(-1.0) == 3.0
    np.testing.assert_allclose(tf.value_and_grad(f)(-1.0)[0], np.cos(-1.0))
    assert tf.grad(lambda x: f(x) * x)(2.0) == pytest.approx(2 * 2.0 + np.sin(2.0))
    with pytest.raises(tf.errors.ConcretizationError):
        tf.jit(tf.grad(f))(1.0)     # under jit the values are unknown, as in JAX


def test_python_control_flow_in_custom_vjp_fwd_under_eager_grad():
    @tf.custom_vjp
    def g(x):
        return x ** 2

    def g_fwd(x):
        scale = 10.0 if x > 0 else -10.0
        return x ** 2, scale

    g.defvjp(g_fwd, lambda scale, ct: (scale * ct,))
    assert tf.grad(g)(3.0) == 10.0 and tf.grad(g)(-3.0) == -10.0
