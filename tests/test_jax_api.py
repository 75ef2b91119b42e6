"""JAX's top-level names on one CPU device: devices and placement, shardings over the
one-device mesh, make_jaxpr, holomorphic and integer gradients, pure_callback,
test_util, JAX's switches, disable_jit and ensure_compile_time_eval, linear_transpose,
custom_gradient, pmap and shard_map; each against JAX's values where it computes one."""
import importlib.util
import sys

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ArgumentError, ConcretizationError, ShapeError, TfNumbaError

HAS_JAX = importlib.util.find_spec("jax") is not None


@pytest.fixture(scope="module")
def jax():
    if not HAS_JAX:
        pytest.skip("jax is not installed")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


# ---------------------------------------------------------------- devices and placement

def test_one_cpu_device_as_jax_names_it():
    assert tf.devices() == tf.local_devices() == [tf.devices()[0]]
    device = tf.devices()[0]
    assert (device.platform, device.id, repr(device)) == ("cpu", 0, "CpuDevice(id=0)")
    assert (tf.device_count(), tf.local_device_count(), tf.default_backend()) == (1, 1, "cpu")
    assert (tf.process_count(), tf.process_index(), tf.process_indices()) == (1, 0, [0])
    with pytest.raises(ArgumentError, match="CPU only"):
        tf.devices("gpu")


def test_device_put_aliases_copies_when_asked_and_maps_over_pytrees():
    x = np.arange(3.0)
    assert tf.device_put(x) is x                      # JAX's CPU backend aliases too
    copied = tf.device_put(x, may_alias=False)
    assert copied is not x and np.array_equal(copied, x)
    tree = tf.device_put({"w": [1.0, 2.0], "b": np.ones(2)}, tf.devices()[0])
    assert np.array_equal(tree["w"], [1.0, 2.0]) and type(tree["b"]) is np.ndarray
    assert tf.device_get(tree) is not None
    with pytest.raises(ArgumentError, match="cannot place"):
        tf.device_put(x, "tpu:0")


def test_shardings_on_the_one_device_mesh_are_checked_and_change_nothing():
    mesh = tf.make_mesh((1,), ("batch",), axis_types=(tf.sharding.AxisType.Explicit,))
    assert repr(mesh) == "Mesh('batch': 1, axis_types=(Explicit,))"
    assert mesh.shape == {"batch": 1} and mesh.size == 1 and mesh.devices.shape == (1,)
    data = tf.NamedSharding(mesh, tf.P("batch"))
    x = np.ones((4, 3))
    assert tf.device_put(x, data) is x and tf.sharding.reshard(x, data) is x
    assert data.shard_shape((4, 3)) == (4, 3) and data.is_fully_replicated
    with pytest.raises(ShapeError, match="more than the rank"):
        tf.device_put(np.ones(()), data)
    with pytest.raises(ArgumentError, match="does not have"):
        tf.NamedSharding(mesh, tf.P("model"))
    with pytest.raises(ArgumentError, match="needs 2 devices"):
        tf.make_mesh((2,), ("batch",))
    with pytest.raises(ArgumentError, match="needs a mesh"):
        tf.device_put(x, tf.P("batch"))
    with tf.set_mesh(mesh):
        assert tf.sharding.get_mesh() == mesh
        assert tf.device_put(x, tf.P("batch", None)) is x
    assert tf.sharding.get_mesh().empty


def test_shape_dtype_struct_is_jax_s_with_a_sharding(jax):
    mesh = tf.make_mesh((1,), ("i",))
    s = tf.ShapeDtypeStruct((4, 2), np.float32, sharding=tf.NamedSharding(mesh, tf.P("i")))
    assert (s.shape, s.dtype, s.ndim, s.size) == ((4, 2), np.float32, 2, 8)
    out = tf.eval_shape(lambda x: tnp.sum(x, axis=0), s)
    want = jax.eval_shape(lambda x: x.sum(0), jax.ShapeDtypeStruct((4, 2), np.float32))
    assert (out.shape, out.dtype) == (want.shape, want.dtype)
    assert out == tf.ShapeDtypeStruct((2,), np.float32)


# ---------------------------------------------------------------- transforms

def test_make_jaxpr_prints_the_program_and_returns_shapes():
    program = tf.make_jaxpr(lambda x: tnp.sin(x) * 2)(1.0)
    assert "sin" in str(program) and "mul" in str(program)
    program, shapes = tf.make_jaxpr(lambda x: (x @ x.T, x), return_shape=True)(np.ones((3, 2)))
    assert [s.shape for s in shapes] == [(3, 3), (3, 2)]


def test_holomorphic_gradients_are_jax_s(jax):
    z = np.complex128(1.0 + 2.0j)
    for make in (lambda np_: lambda z: z ** 2, lambda np_: lambda z: np_.exp(z) * np_.sin(z)):
        f = make(tnp)
        want = jax.grad(make(jax.numpy), holomorphic=True)(z)
        np.testing.assert_allclose(tf.grad(f, holomorphic=True)(z), want, rtol=1e-14)
        np.testing.assert_allclose(tf.jacfwd(f, holomorphic=True)(z), want, rtol=1e-14)
        np.testing.assert_allclose(tf.jacrev(f, holomorphic=True)(z), want, rtol=1e-14)
    with pytest.raises(TypeError, match="holomorphic"):
        tf.grad(lambda z: z ** 2)(z)
    with pytest.raises(TypeError, match="complex inputs"):
        tf.grad(lambda z: z ** 2, holomorphic=True)(1.0)


def test_allow_int_gives_float0_zero_gradients(jax):
    g = tf.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    want = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[0] == want[0] == 3.0
    assert g[1].dtype == tf.float0 == want[1].dtype and g[1].shape == ()


def _float0_or_value(tree):
    # float0 arrays compare by shape only (they hold no values)
    return [("float0", np.shape(a)) if np.asarray(a).dtype == tf.float0 else np.asarray(a)
            for a in tf.tree_util.tree_leaves(tree)]


def test_integer_inputs_and_outputs_have_float0_derivatives_as_jax_s(jax):
    f = lambda x, n: (x * n, {"twice": n * 2})  # noqa: E731
    for args in ((2.0, 3), (np.ones(2), np.arange(2, dtype=np.int32)), (1.5, True)):
        f0 = np.zeros(np.shape(args[1]), tf.float0)
        ct = (np.ones(np.shape(args[0])), {"twice": np.zeros(np.shape(args[1]), tf.float0)})
        ours = [tf.vjp(f, *args)[1](ct), tf.jvp(f, args, (np.ones(np.shape(args[0])), f0)),
                tf.linearize(f, *args)[1](np.ones(np.shape(args[0])), f0)]
        theirs = [jax.vjp(f, *args)[1](ct), jax.jvp(f, args, (np.ones(np.shape(args[0])), f0)),
                  jax.linearize(f, *args)[1](np.ones(np.shape(args[0])), f0)]
        for got, want in zip(ours, theirs):
            for g, w in zip(_float0_or_value(got), _float0_or_value(want)):
                if isinstance(w, tuple):
                    assert g == w
                else:
                    np.testing.assert_array_equal(g, w)
    # a cotangent of an integer output may also be a zero of its dtype, as before
    assert tf.vjp(f, 2.0, 3)[1]((1.0, {"twice": 0}))[1].dtype == tf.float0


def test_linear_transpose_is_jax_s(jax):
    def f(np_):
        return lambda x, y: (2 * x + np_.sum(y), x - y[0])
    ct = (3.0, -1.0)
    got = tf.linear_transpose(f(tnp), 1.0, np.ones(3))(ct)
    want = jax.linear_transpose(f(jax.numpy), 1.0, np.ones(3))(ct)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-15)


def test_custom_gradient_replaces_the_derivative(jax):
    def f(np_):
        return lambda x: (np_.sin(x), lambda g: (10.0 * g,))
    assert tf.custom_gradient(f(tnp))(2.0) == pytest.approx(np.sin(2.0))
    assert tf.grad(tf.custom_gradient(f(tnp)))(2.0) == 10.0 == \
        jax.grad(jax.custom_gradient(f(jax.numpy)))(2.0)


def test_typeof_and_array():
    assert str(tf.typeof(np.ones((2, 3), np.float32))) == "f32[2,3]"
    assert isinstance(tf.jit(tnp.sin)(np.ones(2)), tf.Array)
    assert isinstance(np.float64(1.0), tf.Array) and not isinstance([1.0], tf.Array)
    seen = []
    tf.jit(lambda x: seen.append(isinstance(x, tf.Array)) or x)(np.ones(2))
    assert seen == [True]


# ---------------------------------------------------------------- pure_callback

def test_pure_callback_runs_eagerly_under_jit_and_under_vmap():
    sinc = lambda x: tf.pure_callback(np.sinc, tf.ShapeDtypeStruct(x.shape, x.dtype), x,  # noqa: E731
                                      vmap_method="sequential")
    x = np.array([0.0, 0.5, 1.5])
    np.testing.assert_array_equal(sinc(x), np.sinc(x))
    np.testing.assert_array_equal(tf.jit(sinc)(x), np.sinc(x))
    xs = np.linspace(0, 2, 6).reshape(3, 2)
    np.testing.assert_array_equal(tf.vmap(sinc)(xs), np.sinc(xs))
    calls = []

    def whole(x, y):
        calls.append((x.shape, y.shape))
        return x + y
    f = lambda x, y: tf.pure_callback(whole, tf.ShapeDtypeStruct(x.shape, x.dtype), x, y,  # noqa: E731
                                      vmap_method="expand_dims")
    out = tf.vmap(f, in_axes=(0, None))(xs, np.ones(2))
    np.testing.assert_array_equal(out, xs + 1)
    assert calls == [((3, 2), (1, 2))]


def test_pure_callback_checks_what_it_returns_and_has_no_derivative():
    bad = lambda x: tf.pure_callback(lambda v: v[:1], tf.ShapeDtypeStruct((2,), np.float64), x)  # noqa: E731
    with pytest.raises(ShapeError, match="declares"):
        tf.jit(bad)(np.ones(2))
    with pytest.raises(TfNumbaError, match="pure_callback"):
        tf.grad(lambda x: tnp.sum(tf.pure_callback(
            np.sin, tf.ShapeDtypeStruct((2,), np.float64), x)))(np.ones(2))
    with pytest.raises(ArgumentError, match="vmap_method"):
        tf.vmap(lambda x: tf.pure_callback(np.sin, tf.ShapeDtypeStruct((), np.float64), x))(
            np.ones(2))


# ---------------------------------------------------------------- test_util

def test_check_grads_passes_correct_derivatives_and_fails_wrong_ones():
    tf.test_util.check_grads(lambda x, y: tnp.sin(x) * y ** 2, (0.3, np.array([1.0, 2.0])),
                             order=2)

    @tf.custom_jvp
    def wrong(x):
        return tnp.sin(x)
    wrong.defjvp(lambda p, t: (tnp.sin(p[0]), 2 * tnp.cos(p[0]) * t[0]))
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError):
            tf.test_util.check_grads(wrong, (0.3,), order=1, modes=[mode])


# ---------------------------------------------------------------- switches

def test_jax_switches_by_jax_s_names():
    tf.config.update("jax_enable_x64", True)
    assert tf.config.jax_enable_x64 is True
    with pytest.raises(ArgumentError, match="float64 by default"):
        tf.config.update("jax_enable_x64", False)
    tf.config.update("jax_platforms", "cpu")
    with pytest.raises(ArgumentError, match="CPU only"):
        tf.config.update("jax_platform_name", "gpu")
    with tf.log_compiles():
        assert tf.config.tf_numba_log_compiles is True and tf.config.jax_log_compiles
    assert tf.config.read("jax_log_compiles") is False
    with tf.default_matmul_precision("highest"), tf.transfer_guard("disallow"):
        assert tf.jit(lambda a: a @ a)(np.eye(2))[0, 0] == 1.0


def test_switches_are_absl_flags_as_jax_s(monkeypatch):
    # JAX's example programs call jax.config.config_with_absl() before absl's app.run
    pytest.importorskip("absl")
    monkeypatch.setattr(sys, "argv", ["prog", "--jax_default_matmul_precision=highest",
                                      "--not_a_switch=1", "--", "--jax_disable_jit=true"])
    try:
        tf.config.parse_flags_with_absl()
        assert tf.config.jax_default_matmul_precision == "highest"
        assert tf.config.jax_disable_jit is False      # after "--": not a flag of ours
    finally:
        tf.config.update("jax_default_matmul_precision", None)


def test_disable_jit_runs_python_op_by_op():
    f = tf.jit(lambda x: x * 2 if float(x) > 0 else -x)
    with pytest.raises(ConcretizationError):
        f(1.0)
    with tf.disable_jit():
        assert f(1.0) == 2.0 and f(-3.0) == 3.0
    with pytest.raises(ConcretizationError):
        f(1.0)


def test_ensure_compile_time_eval_makes_constants_concrete_under_jit():
    def f(x):
        with tf.ensure_compile_time_eval():
            n = tnp.sum(np.ones(3))
            k = int(n)                   # concrete: no ConcretizationError
            y = x * n                    # x is traced: still traced
        return y + k
    assert tf.jit(f)(2.0) == 9.0
    with pytest.raises(ConcretizationError):
        tf.jit(lambda x: int(tnp.sum(np.ones(3))) * x)(2.0)


def test_clear_caches_forgets_and_calls_prepare_again():
    f = tf.jit(lambda x: tnp.cos(x) + 1)
    first = f(np.ones(3))
    tf.clear_caches()
    np.testing.assert_array_equal(f(np.ones(3)), first)


def test_jit_takes_jax_s_placement_options():
    f = tf.jit(lambda p, b: p * b, donate_argnums=0, keep_unused=True)
    assert f(2.0, 3.0) == 6.0
    g = tf.jit(donate_argnums=0, in_shardings=None)(lambda p: p + 1)
    assert g(1.0) == 2.0


# ---------------------------------------------------------------- SPMD on one device

def test_pmap_maps_one_element_per_device():
    np.testing.assert_array_equal(tf.pmap(lambda x: x * 2)(np.ones((1, 3))), 2 * np.ones((1, 3)))
    with pytest.raises(ShapeError, match="one device"):
        tf.pmap(lambda x: x)(np.ones((2, 3)))


def test_shard_map_on_the_one_device_mesh_sees_whole_arrays():
    mesh = tf.make_mesh((1,), ("i",))
    f = tf.shard_map(lambda x: 2 * x, mesh=mesh, in_specs=tf.P("i"), out_specs=tf.P("i"))
    np.testing.assert_array_equal(f(np.arange(4.0)), 2 * np.arange(4.0))
    np.testing.assert_array_equal(tf.jit(f)(np.arange(4.0)), 2 * np.arange(4.0))
    with pytest.raises(ArgumentError, match="does not have"):
        tf.shard_map(lambda x: x, mesh=mesh, in_specs=tf.P("j"), out_specs=tf.P())(np.ones(2))


# ---------------------------------------------------------------- the rest of the top level

def test_checkpoint_takes_jax_s_options_and_policies():
    def f(x, n):
        for _ in range(n):
            x = tnp.sin(x) * x
        return tnp.sum(x)
    x = np.linspace(0.1, 1.0, 4)
    want = tf.grad(f)(x, 3)
    for policy in (None, tf.checkpoint_policies.everything_saveable,
                   tf.checkpoint_policies.dots_saveable,
                   tf.checkpoint_policies.save_only_these_names("a")):
        g = tf.checkpoint(f, static_argnums=1, policy=policy)
        np.testing.assert_allclose(tf.grad(g)(x, 3), want, rtol=1e-14)
    assert tf.remat(prevent_cse=False)(tnp.sin)(0.5) == np.sin(0.5)


def test_fwd_and_bwd_is_vjp_in_two_functions(jax):
    def f(np_):
        return lambda x, w: np_.tanh(x @ w)
    x, w = np.ones((2, 3)) * 0.3, np.arange(6.0).reshape(3, 2) / 6
    fwd, bwd = tf.fwd_and_bwd(f(tnp), argnums=(0, 1))
    y, res = fwd(x, w)
    got = bwd(res, np.ones((2, 2)))
    jfwd, jbwd = jax.fwd_and_bwd(f(jax.numpy), argnums=(0, 1))
    jy, jres = jfwd(x, w)
    for g, e in zip(got, jbwd(jres, np.ones((2, 2)))):
        np.testing.assert_allclose(g, e, rtol=1e-14)
    fwd1, bwd1 = tf.fwd_and_bwd(f(tnp), argnums=1)
    np.testing.assert_allclose(bwd1(fwd1(x, w)[1], np.ones((2, 2))), got[1], rtol=1e-15)


def test_version_and_environment():
    assert isinstance(tf.version.__version__, str)
    text = tf.print_environment_info(return_string=True)
    assert "tf_numba:" in text and "numba:" in text


def test_segment_reductions_match_jax(jax):
    data = np.array([[1.0, 2.0], [3.0, -4.0], [5.0, 6.0], [7.0, 8.0]])
    ids = np.array([0, 2, 0, 7])
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
        ours, theirs = getattr(tf.ops, name), getattr(jax.ops, name)
        np.testing.assert_array_equal(ours(data, ids, 3), theirs(data, ids, 3))
        np.testing.assert_array_equal(ours(data, ids), theirs(data, ids))
        np.testing.assert_array_equal(
            tf.jit(lambda d, i: ours(d, i, num_segments=3))(data, ids), theirs(data, ids, 3))
    np.testing.assert_array_equal(tf.ops.segment_max(np.array([3, 1, 2]), np.array([0, 0, 1])),
                                  [3, 2])
    tf.test_util.check_grads(lambda d: tf.ops.segment_sum(d, ids, 3) ** 2, (data,), order=2)
    with pytest.raises(ConcretizationError, match="num_segments"):
        tf.jit(lambda d, i: tf.ops.segment_sum(d, i))(data, ids)


@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "lanczos3", "lanczos5",
                                    "area", "cubic-pytorch"])
def test_image_resize_matches_jax(jax, method):
    x = np.random.default_rng(0).random((5, 7, 3))
    for shape in [(9, 4, 3), (3, 12, 3), (5, 7, 3)]:
        for antialias in (True, False):
            np.testing.assert_allclose(tf.image.resize(x, shape, method, antialias),
                                       jax.image.resize(x, shape, method, antialias),
                                       atol=1e-13)


def test_image_scale_and_translate_matches_jax_and_differentiates(jax):
    x = np.random.default_rng(1).random((5, 7))

    def warp(np_, image_module, s):
        return np_.sum(image_module.scale_and_translate(
            x, (6, 6), (0, 1), np_.stack([s, 0.8]), np_.asarray([0.5, -0.2]), "cubic") ** 2)
    np.testing.assert_allclose(warp(tnp, tf.image, 1.3), warp(jax.numpy, jax.image, 1.3),
                               rtol=1e-13)
    np.testing.assert_allclose(tf.grad(lambda s: warp(tnp, tf.image, s))(1.3),
                               jax.grad(lambda s: warp(jax.numpy, jax.image, s))(1.3),
                               rtol=1e-12)
    tf.test_util.check_grads(lambda im: tf.image.resize(im, (3, 9), "linear"), (x,), order=1)


def test_tree_additions_as_jax(jax):
    import operator
    tree = {"a": [1, 2], "b": (3, {"c": 4})}
    assert tf.tree.reduce_associative(operator.add, tree) == 10
    assert tf.tree_util.flatten_one_level(tree) == ([[1, 2], (3, {"c": 4})], ("a", "b"))
    assert tf.tree_util.is_tree_node(dict) and not tf.tree_util.is_tree_node(float)
    td = tf.tree_util.treedef_tuple([tf.tree.structure(1), tf.tree.structure([1, 2])])
    assert tf.tree.unflatten(td, [1, 2, 3]) == (1, [2, 3])


def test_linalg_and_fft_array_api_names_match_numpy():
    rng = np.random.default_rng(2)
    x = rng.random((2, 3, 3))
    chain = [rng.random((3, 4)), rng.random((4, 2)), rng.random((2, 5)), rng.random(5)]
    np.testing.assert_allclose(tnp.linalg.multi_dot(chain), np.linalg.multi_dot(chain))
    np.testing.assert_allclose(tnp.linalg.multi_dot(chain[1:][::-1][::-1]),
                               np.linalg.multi_dot(chain[1:]))
    for name, args, kw in [("trace", (x,), {"offset": 1}), ("diagonal", (x,), {}),
                           ("vecdot", (x, x), {}), ("cross", (x, x[::-1]), {}),
                           ("matmul", (x, x), {}), ("matrix_transpose", (x,), {}),
                           ("tensordot", (x, x[0]), {"axes": 1}),
                           ("outer", (x[0, 0], x[1, 1]), {})]:
        np.testing.assert_allclose(getattr(tnp.linalg, name)(*args, **kw),
                                   getattr(np.linalg, name)(*args, **kw), rtol=1e-14)
    z = rng.random(6) + 1j * rng.random(6)
    for norm in (None, "ortho", "forward"):
        np.testing.assert_allclose(tnp.fft.hfft(z, 9, norm=norm), np.fft.hfft(z, 9, norm=norm))
        np.testing.assert_allclose(tnp.fft.ihfft(z.real, norm=norm),
                                   np.fft.ihfft(z.real, norm=norm))
