"""tf_numba.example_libraries.stax: each layer's values against NumPy formulas written
here, its declared output shape against the shape it computes, gradients of a network of
them by finite differences, and every layer's parameters and outputs against JAX's stax
(x64, the same key) where JAX is installed."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import random
from tf_numba.errors import ArgumentError
from tf_numba.example_libraries import stax

RNG = np.random.default_rng(0)
KEY = random.key(1)


def _run(layer, shape, x=None, **kwargs):
    """(declared output shape, params, output) of ``layer`` on a normal input."""
    init_fun, apply_fun = layer
    out_shape, params = init_fun(KEY, shape)
    x = RNG.normal(size=shape) if x is None else x
    return out_shape, params, x, apply_fun(params, x, **kwargs)


def test_dense_is_x_at_w_plus_b_with_glorot_and_normal_parameters():
    out_shape, (W, b), x, y = _run(stax.Dense(6), (3, 4))
    assert out_shape == (3, 6) and W.shape == (4, 6) and b.shape == (6,)
    np.testing.assert_allclose(y, x @ W + b, rtol=1e-14)
    k1, k2 = random.split(KEY)
    np.testing.assert_array_equal(W, tf.nn.initializers.glorot_normal()(k1, (4, 6)))
    np.testing.assert_array_equal(b, tf.nn.initializers.normal()(k2, (6,)))


def _conv_nhwc(x, w, stride, pads):
    """A direct NHWC x HWIO cross-correlation in NumPy."""
    x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - kh) // stride[0] + 1
    ow = (x.shape[2] - kw) // stride[1] + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw]
            out[:, i, j] = np.einsum("nhwc,hwco->no", patch, w)
    return out


def test_conv_same_and_valid_against_a_direct_convolution():
    for padding, pads in (("VALID", ((0, 0), (0, 0))), ("SAME", ((1, 1), (0, 1)))):
        out_shape, (W, b), x, y = _run(stax.Conv(4, (3, 2), (2, 1), padding), (2, 7, 6, 3))
        assert W.shape == (3, 2, 3, 4) and b.shape == (1, 1, 1, 4)
        ref = _conv_nhwc(x, W, (2, 1), pads) + b
        assert out_shape == ref.shape
        np.testing.assert_allclose(y, ref, rtol=1e-12, atol=1e-13)


def test_general_conv_in_nchw_is_the_nhwc_conv_transposed():
    _, (W, b), x, y = _run(stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 2)),
                           (2, 3, 7, 6))
    assert W.shape == (4, 3, 3, 2) and b.shape == (1, 4, 1, 1)
    ref = _conv_nhwc(x.transpose(0, 2, 3, 1), W.transpose(2, 3, 1, 0), (1, 1),
                     ((0, 0), (0, 0)))
    np.testing.assert_allclose(y, ref.transpose(0, 3, 1, 2) + b, rtol=1e-12, atol=1e-13)


def test_conv_transpose_is_the_adjoint_of_the_strided_conv():
    # <conv_transpose(y), x> = <y, conv(x)> for the flipped, I/O-swapped kernel (VALID)
    out_shape, (W, b), y, up = _run(stax.ConvTranspose(3, (3, 3), (2, 2)), (1, 4, 5, 2))
    assert out_shape == up.shape == (1, 9, 11, 3)
    x = RNG.normal(size=out_shape)
    down = _conv_nhwc(x, W[::-1, ::-1].transpose(0, 1, 3, 2), (2, 2), ((0, 0), (0, 0)))
    np.testing.assert_allclose(np.vdot(up - b, x), np.vdot(y, down), rtol=1e-12)
    out_shape, _, _, y1 = _run(stax.Conv1DTranspose(4, (3,), (2,), "SAME"), (2, 5, 3))
    assert out_shape == y1.shape == (2, 10, 4)


def test_batch_norm_standardizes_over_its_axes_then_scales_and_shifts():
    for kwargs, shape, axes in [({}, (4, 3, 3, 5), (0, 1, 2)), ({"axis": 0}, (6, 5), (0,))]:
        init_fun, apply_fun = stax.BatchNorm(**kwargs)
        out_shape, (beta, gamma) = init_fun(KEY, shape)
        assert out_shape == shape and beta.shape == gamma.shape == (5,)
        beta, gamma = RNG.normal(size=5), RNG.normal(size=5)
        x = RNG.normal(size=shape) * 3 + 1
        z = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
        np.testing.assert_allclose(apply_fun((beta, gamma), x), gamma * z + beta, rtol=1e-12)
    init_fun, apply_fun = stax.BatchNorm(axis=(0,), center=False, scale=False)
    assert init_fun(KEY, (6, 5))[1] == ((), ())
    x = RNG.normal(size=(6, 5))
    np.testing.assert_allclose(apply_fun(((), ()), x), (x - x.mean(0)) / np.sqrt(
        x.var(0) + 1e-5), rtol=1e-12)


def _windows(x, k, s):
    """The (k0, k1) windows of the NHWC ``x`` every ``s``: (N, out0, out1, k0*k1, C)."""
    o0, o1 = (x.shape[1] - k[0]) // s[0] + 1, (x.shape[2] - k[1]) // s[1] + 1
    return np.stack([x[:, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].reshape(
        x.shape[0], -1, x.shape[3]) for i in range(o0) for j in range(o1)], 1).reshape(
        x.shape[0], o0, o1, k[0] * k[1], x.shape[3])


def test_pools_reduce_each_window_and_avg_counts_only_real_elements():
    x = RNG.normal(size=(2, 5, 6, 3))
    for layer, reduce in [(stax.MaxPool((2, 3), (2, 1)), np.max),
                          (stax.SumPool((2, 3), (2, 1)), np.sum),
                          (stax.AvgPool((2, 3), (2, 1)), np.mean)]:
        out_shape, params, _, y = _run(layer, x.shape, x)
        ref = reduce(_windows(x, (2, 3), (2, 1)), axis=3)
        assert out_shape == ref.shape and params == ()
        np.testing.assert_allclose(y, ref, rtol=1e-13)
    # SAME: a window over the border holds fewer elements; AvgPool divides by their count
    out_shape, _, _, y = _run(stax.AvgPool((3, 3), (2, 2), "SAME"), x.shape, x)
    padded = np.pad(x, ((0, 0), (1, 1), (0, 1), (0, 0)), constant_values=np.nan)
    ref = np.nanmean(_windows(padded, (3, 3), (2, 2)), axis=3)
    assert out_shape == ref.shape == (2, 3, 3, 3)
    np.testing.assert_allclose(y, ref, rtol=1e-13)
    out_shape, _, _, y = _run(stax.MaxPool((2, 2), spec="NCHW"), (2, 3, 5, 6),
                              x.transpose(0, 3, 1, 2))
    ref = _windows(x, (2, 2), (1, 1)).max(3).transpose(0, 3, 1, 2)
    assert out_shape == ref.shape
    np.testing.assert_allclose(y, ref)


def test_shape_layers_and_fan_in_out():
    out_shape, _, x, y = _run(stax.Flatten, (2, 3, 4))
    assert out_shape == (2, 12)
    np.testing.assert_array_equal(y, x.reshape(2, 12))
    net = stax.serial(stax.FanOut(3), stax.parallel(stax.Dense(4), stax.Identity,
                                                    stax.Dense(2)), stax.FanInConcat())
    out_shape, params, x, y = _run(net, (3, 5))
    (W1, b1), _, (W2, b2) = params[1]
    assert out_shape == y.shape == (3, 11)
    np.testing.assert_allclose(y, np.concatenate([x @ W1 + b1, x, x @ W2 + b2], -1),
                               rtol=1e-14)
    net = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Identity),
                      stax.FanInSum)
    out_shape, params, x, y = _run(net, (3, 5))
    (W, b), _ = params[1]
    assert out_shape == (3, 5)
    np.testing.assert_allclose(y, x @ W + b + x, rtol=1e-14)


def test_elementwise_layers_are_their_functions():
    x = RNG.normal(size=(3, 4))
    for layer, fn in [(stax.Tanh, np.tanh), (stax.Exp, np.exp),
                      (stax.Relu, lambda v: np.maximum(v, 0)),
                      (stax.Sigmoid, lambda v: 1 / (1 + np.exp(-v))),
                      (stax.Softplus, lambda v: np.log1p(np.exp(v))),
                      (stax.LogSoftmax, lambda v: v - np.log(np.exp(v).sum(-1, keepdims=True))),
                      (stax.Softmax, lambda v: np.exp(v) / np.exp(v).sum(-1, keepdims=True)),
                      (stax.LeakyRelu, lambda v: np.where(v >= 0, v, 0.01 * v)),
                      (stax.Elu, lambda v: np.where(v > 0, v, np.expm1(v))),
                      (stax.Identity, lambda v: v)]:
        out_shape, params, _, y = _run(layer, x.shape, x)
        assert out_shape == x.shape and params == ()
        np.testing.assert_allclose(y, fn(x), rtol=1e-13)


def test_dropout_keeps_a_rate_fraction_scaled_and_needs_a_key():
    init_fun, apply_fun = stax.Dropout(0.8)
    x = np.ones((200, 500))
    y = apply_fun((), x, rng=KEY)
    kept = y != 0
    assert abs(kept.mean() - 0.8) < 0.005
    np.testing.assert_allclose(y[kept], 1 / 0.8)
    np.testing.assert_array_equal(kept, random.bernoulli(KEY, 0.8, x.shape))
    with pytest.raises(ArgumentError, match="rng=key"):
        apply_fun((), x)
    np.testing.assert_array_equal(stax.Dropout(0.5, mode="test")[1]((), x, rng=KEY), x)


def test_serial_gives_each_layer_its_own_key():
    net = stax.serial(stax.Dense(3), stax.Dropout(0.5), stax.Dropout(0.5))
    out_shape, params = net[0](KEY, (4, 5))
    k0 = random.split(KEY)[1]
    np.testing.assert_array_equal(params[0][0], stax.Dense(3)[0](k0, (4, 5))[1][0])
    x = np.ones((4, 5))
    y = net[1](params, x, rng=KEY)
    keys = random.split(KEY, 3)
    h = x @ params[0][0] + params[0][1]
    h = np.where(random.bernoulli(keys[1], 0.5, h.shape), h / 0.5, 0)
    np.testing.assert_allclose(y, np.where(random.bernoulli(keys[2], 0.5, h.shape), h / 0.5, 0))
    assert stax.shape_dependent(lambda s: stax.Dense(s[-1]))[0](KEY, (2, 7))[0] == (2, 7)


def test_gradient_of_a_conv_net_matches_finite_differences():
    net_init, net_apply = stax.serial(stax.Conv(2, (2, 2), padding="SAME"), stax.BatchNorm(),
                                      stax.Relu, stax.AvgPool((2, 2), (2, 2)), stax.Flatten,
                                      stax.Dense(3), stax.LogSoftmax)
    _, params = net_init(KEY, (2, 4, 4, 1))
    x = RNG.normal(size=(2, 4, 4, 1))

    def loss(p):
        return -tnp.sum(net_apply(p, x)[:, 0])
    grads = tf.grad(loss)(params)
    flat, tree = tf.tree_util.tree_flatten(params)
    gflat = tf.tree_util.tree_leaves(grads)
    checked = []
    for leaf, g in zip(flat, gflat):
        assert g.shape == leaf.shape
        for idx in list(np.ndindex(leaf.shape))[:3]:
            def at(t):
                moved = [v.copy() for v in flat]
                moved[[i for i, v in enumerate(flat) if v is leaf][0]][idx] += t
                return float(loss(tf.tree_util.tree_unflatten(tree, moved)))
            fd = (at(1e-6) - at(-1e-6)) / 2e-6
            np.testing.assert_allclose(g[idx], fd, rtol=1e-5, atol=1e-7)
            checked.append(abs(fd))
    assert len(checked) == 15 and sum(v > 1e-3 for v in checked) >= 10   # not all zeros


def test_mlp_trains_under_jit_with_the_optimizers():
    from tf_numba.example_libraries import optimizers
    init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(1))
    _, params = init_fun(KEY, (-1, 2))
    x = RNG.normal(size=(32, 2))
    y = np.sin(x[:, :1]) + x[:, 1:] ** 2

    def loss(p):
        return tnp.mean((apply_fun(p, x) - y) ** 2)
    opt_init, opt_update, get_params = optimizers.adam(0.05)
    step = tf.jit(lambda i, s: opt_update(i, tf.grad(loss)(get_params(s)), s))
    state = opt_init(params)
    first = float(loss(params))
    for i in range(60):
        state = step(i, state)
    assert float(loss(get_params(state))) < first / 5


LAYERS = {
    "Dense": (lambda m: m.Dense(5), (3, 4)),
    "Conv": (lambda m: m.Conv(4, (3, 3), (2, 1), "SAME"), (2, 7, 6, 3)),
    "GeneralConv": (lambda m: m.GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 2)),
                    (2, 3, 7, 6)),
    "ConvTranspose": (lambda m: m.ConvTranspose(4, (3, 2), (2, 3), "SAME"), (2, 4, 5, 3)),
    "Conv1DTranspose": (lambda m: m.Conv1DTranspose(4, (3,), (2,)), (2, 5, 3)),
    "BatchNorm": (lambda m: m.BatchNorm(), (4, 3, 3, 5)),
    "BatchNorm0": (lambda m: m.BatchNorm(axis=0, center=False), (6, 5)),
    "MaxPoolSame": (lambda m: m.MaxPool((3, 3), (2, 2), "SAME"), (2, 5, 6, 3)),
    "SumPool": (lambda m: m.SumPool((2, 3)), (2, 5, 6, 3)),
    "AvgPoolSpec": (lambda m: m.AvgPool((3, 2), (1, 2), "SAME", spec="NCHW"), (2, 3, 5, 6)),
    "activations": (lambda m: m.serial(m.Tanh, m.Sigmoid, m.Elu, m.LeakyRelu, m.Softplus,
                                       m.Gelu, m.Selu, m.Exp, m.Softmax, m.LogSoftmax),
                    (3, 4)),
    "fan": (lambda m: m.serial(m.FanOut(2), m.parallel(m.Dense(4), m.Dense(4)), m.FanInSum,
                               m.Flatten), (3, 5)),
    "dropout": (lambda m: m.serial(m.Dense(4), m.Dropout(0.7)), (3, 5)),
}


def test_layers_equal_jax_stax_for_the_same_key():
    jax = pytest.importorskip("jax")
    from jax.example_libraries import stax as jstax
    xs = {name: RNG.normal(size=shape) for name, (_, shape) in LAYERS.items()}
    ours = {}
    for name, (make, shape) in LAYERS.items():
        out_shape, params = make(stax)[0](KEY, shape)
        ours[name] = out_shape, params, make(stax)[1](params, xs[name], rng=random.key(3))

    def theirs(key, apply_key):
        out = {}
        for name, (make, shape) in LAYERS.items():
            init_fun, apply_fun = make(jstax)
            _, params = init_fun(key, shape)
            out[name] = params, apply_fun(params, xs[name], rng=apply_key)
        return out
    with jax.enable_x64(True):
        # one jitted program of them all: one XLA compile, where eager JAX compiles each op
        expected = jax.jit(theirs)(jax.random.PRNGKey(1), jax.random.PRNGKey(3))
    for name, (out_shape, params, y) in ours.items():
        jparams, jy = expected[name]
        assert tuple(out_shape) == jy.shape == y.shape, name
        for a, b in zip(tf.tree_util.tree_leaves(params), jax.tree_util.tree_leaves(jparams)):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-13, atol=1e-15, err_msg=name)
        np.testing.assert_allclose(y, np.asarray(jy), rtol=1e-12, atol=1e-13, err_msg=name)


def test_a_batch_size_of_minus_one_flows_through_init_as_in_jax():
    # JAX's examples call init_fun with (-1, 28, 28, 1): every layer's shape rule must take
    # the placeholder (pools turn it into 0, as JAX's reduce_window_shape_tuple does)
    init_fun, apply_fun = stax.serial(
        stax.Conv(4, (4, 4), padding="SAME", strides=(2, 2)), stax.Relu,
        stax.MaxPool((2, 2), (1, 1)), stax.Conv(6, (2, 2), strides=(2, 2)),
        stax.AvgPool((2, 2), (1, 1), "SAME"), stax.Flatten, stax.Dense(3))
    out_shape, params = init_fun(KEY, (-1, 12, 12, 1))
    assert out_shape[1:] == (3,) and params[-1][0].shape == (2 * 2 * 6, 3)
    assert apply_fun(params, RNG.normal(size=(2, 12, 12, 1))).shape == (2, 3)
