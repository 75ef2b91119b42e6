"""tf.lax's collectives on the one device (every named axis of size 1) inside shard_map
and pmap, against JAX's on its one-device mesh where JAX is installed; unbound names are
NameErrors; rng_uniform draws anew on each call."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.errors import ArgumentError, DTypeError, UnboundAxisError

X = np.arange(6.0).reshape(1, 2, 3)


def _everything(lax_, x):
    return (lax_.psum(x, "i"), lax_.pmean({"a": x}, "i"), lax_.pmax(x, "i"),
            lax_.pmin(x, ("i",)), lax_.all_gather(x, "i", axis=1),
            lax_.all_gather(x, "i", tiled=True), lax_.all_to_all(x, "i", 0, 2),
            lax_.psum_scatter(x, "i", scatter_dimension=0), lax_.axis_index("i"),
            lax_.ppermute(x, "i", [(0, 0)]), lax_.ppermute(x, "i", []),
            lax_.pswapaxes(x, "i", 0), lax_.pshuffle(x, "i", [0]), lax_.axis_size("i"),
            lax_.psum(1, "i"))


def test_collectives_inside_shard_map_are_jax_s_on_one_device():
    mesh = tf.make_mesh((1,), ("i",))
    f = tf.shard_map(lambda x: _everything(lax, x), mesh=mesh, in_specs=tf.P(),
                     out_specs=tf.P())
    got, jitted = f(X), tf.jit(f)(X)
    want = [X, {"a": X}, X, X, X[:, None], X, X[0][:, :, None], X[0], 0, X, 0 * X, X, X, 1, 1]
    for g, j, w in zip(got, jitted, want):
        for a, b, c in zip(tf.tree.leaves(g), tf.tree.leaves(j), tf.tree.leaves(w)):
            np.testing.assert_array_equal(a, c)
            np.testing.assert_array_equal(b, c)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.sharding import PartitionSpec
    theirs = jax.shard_map(lambda x: _everything(jax.lax, x), mesh=jax.make_mesh((1,), ("i",)),
                           in_specs=PartitionSpec(), out_specs=PartitionSpec(),
                           check_vma=False)(X)
    for g, t in zip(got, theirs):
        for a, b in zip(tf.tree.leaves(g), jax.tree.leaves(t)):
            np.testing.assert_array_equal(a, b)


def test_pmap_binds_its_axis_name_and_derivatives_pass_through():
    out = tf.pmap(lambda v: lax.pmean(v, "d") * lax.axis_size("d"), axis_name="d")(X[:, 0])
    np.testing.assert_array_equal(out, X[:, 0])
    g = tf.grad(lambda v: tnp.sum(tf.pmap(lambda w: lax.psum(w ** 2, "d"),
                                          axis_name="d")(v)))(X[:, 0])
    np.testing.assert_array_equal(g, 2 * X[:, 0])


def test_unbound_names_and_other_devices_are_errors():
    with pytest.raises(UnboundAxisError, match="unbound axis name: 'i'") as info:
        lax.psum(X, "i")
    assert isinstance(info.value, NameError)
    mesh = tf.make_mesh((1,), ("i",))
    with pytest.raises(ArgumentError, match="beyond"):
        tf.shard_map(lambda x: lax.ppermute(x, "i", [(0, 1)]), mesh=mesh, in_specs=tf.P(),
                     out_specs=tf.P())(X)


def test_rng_uniform_draws_anew_within_its_bounds():
    a, b = np.float64(2.0), np.float64(5.0)
    f = tf.jit(lambda lo, hi: lax.rng_uniform(lo, hi, (1000,)))
    first, second = f(a, b), f(a, b)
    assert not np.array_equal(first, second)
    assert first.min() >= 2.0 and first.max() < 5.0 and abs(first.mean() - 3.5) < 0.2
    grads = tf.grad(lambda lo: tnp.sum(lax.rng_uniform(lo, b, (8,))), argnums=0)(a)
    assert 0.0 <= grads <= 8.0
    with pytest.raises(DTypeError, match="scalars of one float dtype"):
        lax.rng_uniform(np.float32(0), np.float64(1), (2,))
