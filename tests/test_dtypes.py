"""The narrow dtypes (int8, int16, the unsigned ints, float16): promotion as NumPy 2's table
(and where, and only where, JAX's x64 lattice differs from it), creation and conversion,
wrapping integer arithmetic, bitwise ops and shifts, comparisons with Python ints, and
float16 computed in float32, eagerly and in compiled kernels."""
import importlib.util
import itertools
import operator

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import DTypeError

from jit_checks import compiled

ALL = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
       np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128]
NARROW = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
HAS_JAX = importlib.util.find_spec("jax") is not None
RNG = np.random.default_rng(39)


def _name(d):
    return np.dtype(d).name


@pytest.fixture
def jnp():
    if not HAS_JAX:
        pytest.skip("jax is not installed")
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax.numpy


def _same(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


def _wrapping_values(dtype, n=12):
    """Values over the whole range of an integer dtype, its extremes included."""
    info = np.iinfo(dtype)
    inner = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return np.concatenate([np.array([info.min, info.max, 0, 1], dtype), inner])


# ---------------------------------------------------------------- promotion

def test_promotion_table_is_numpy_s_over_every_pair():
    for a, b in itertools.product(ALL, ALL):
        assert tnp.result_type(a, b) == np.promote_types(a, b), (a, b)
        assert tf.dtypes.result_type(np.dtype(a), np.dtype(b)) == np.promote_types(a, b)
        x, y = np.ones(2, a), np.ones(2, b)
        assert tnp.add(x, y).dtype == np.add(x, y).dtype


def test_promotion_differs_from_jax_s_x64_lattice_only_where_an_int_meets_a_float(jnp):
    # JAX's lattice keeps the float's width when an integer meets it (int32 + float32 is
    # float32); NumPy widens the float until it holds the integer. Every other pair agrees.
    for a, b in itertools.product(ALL, ALL):
        ours, theirs = tnp.result_type(a, b), np.dtype(jnp.promote_types(a, b))
        if ours == theirs:
            continue
        kinds = {np.dtype(a).kind, np.dtype(b).kind}
        inexact = a if np.dtype(a).kind in "fc" else b
        assert kinds in ({"i", "f"}, {"u", "f"}, {"i", "c"}, {"u", "c"}), (a, b)
        assert theirs == np.dtype(inexact), (a, b, theirs)
        assert ours.itemsize > theirs.itemsize, (a, b)


@pytest.mark.parametrize("scalar", [1, 1.0, 1j, True], ids=repr)
def test_python_scalars_are_weak_as_numpy_s_and_jax_s(scalar):
    for dt in ALL:
        x = np.ones(3, dt)
        expected = (x + scalar).dtype
        assert tnp.add(x, scalar).dtype == expected, dt
        assert compiled(lambda v: v + scalar)(x).dtype == expected, dt
    assert tnp.add(np.uint8(200), 100).dtype == np.uint8


def test_weak_scalars_agree_with_jax(jnp):
    for dt, scalar in itertools.product(ALL, [1, 1.0, 1j, True]):
        assert tnp.add(np.ones(2, dt), scalar).dtype == jnp.add(jnp.ones(2, dt), scalar).dtype


def test_a_python_int_out_of_an_arrays_range_is_an_error_naming_the_op():
    with pytest.raises(DTypeError, match="add.*300 is out of range for uint8"):
        tnp.add(np.ones(2, np.uint8), 300)
    with pytest.raises(DTypeError, match="out of range for int8"):
        tf.jit(lambda x: x * -129)(np.ones(2, np.int8))


# ---------------------------------------------------------------- creation and conversion

@pytest.mark.parametrize("dt", NARROW + [np.float16], ids=_name)
def test_creation_takes_every_dtype(dt):
    _same(tnp.zeros((2, 3), dt), np.zeros((2, 3), dt))
    _same(tnp.ones(4, dtype=dt), np.ones(4, dtype=dt))
    _same(tnp.full(3, 7, dt), np.full(3, 7, dt))
    _same(tnp.arange(5, dtype=dt), np.arange(5, dtype=dt))
    _same(tnp.asarray([1, 2, 3], dtype=dt), np.asarray([1, 2, 3], dtype=dt))
    _same(tnp.array(np.arange(3, dtype=dt)), np.arange(3, dtype=dt))
    for fn in (lambda: tnp.zeros(3, dt) + tnp.ones(3, dt), lambda: tnp.arange(4, dtype=dt)):
        _same(compiled(fn)(), fn())
    assert tnp.dtype(getattr(tnp, _name(dt))) == np.dtype(dt)


@pytest.mark.parametrize("dt", ALL[1:-2], ids=_name)
def test_astype_converts_as_numpy(dt):
    x = np.array([-3.7, -1.0, 0.0, 0.5, 2.5, 100.9, 250.0])
    if np.dtype(dt).kind == "u":
        x = np.abs(x)       # a negative float to an unsigned int is undefined in C
    expected = x.astype(dt)
    _same(tnp.astype(x, dt), expected)
    _same(compiled(lambda v: v.astype(dt))(x), expected)
    y = _wrapping_values(np.int64)      # integer to narrower integer keeps the low bits
    if np.dtype(dt).kind in "iu":
        _same(compiled(lambda v: v.astype(dt))(y), y.astype(dt))
        _same(compiled(lambda v: v.astype(np.float64))(y.astype(dt)),
              y.astype(dt).astype(np.float64))


def test_iinfo_and_finfo_of_dtypes_arrays_and_traced_values():
    seen = []

    def f(x, h):
        seen.append((tnp.iinfo(x).max, tnp.iinfo(x).min, tnp.finfo(h).eps))
        return x
    tf.jit(f)(np.ones(2, np.uint8), np.ones(2, np.float16))
    assert seen[0] == (255, 0, np.finfo(np.float16).eps)
    assert tnp.iinfo(np.int16).min == -32768 and tnp.iinfo(np.ones(1, np.uint32)).max == 2**32 - 1
    assert tf.dtypes.finfo(np.float16).max == np.finfo(np.float16).max


# ---------------------------------------------------------------- integer arithmetic wraps

# each operator and the tnp function it stands for
TNP = {operator.add: tnp.add, operator.sub: tnp.subtract, operator.mul: tnp.multiply,
       operator.truediv: tnp.divide, operator.floordiv: tnp.floor_divide,
       operator.mod: tnp.remainder, operator.and_: tnp.bitwise_and,
       operator.or_: tnp.bitwise_or, operator.xor: tnp.bitwise_xor, operator.lt: tnp.less,
       operator.le: tnp.less_equal, operator.gt: tnp.greater, operator.ge: tnp.greater_equal,
       operator.eq: tnp.equal, operator.ne: tnp.not_equal}
ARITHMETIC = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
              operator.and_, operator.or_, operator.xor]


@pytest.mark.parametrize("op", ARITHMETIC, ids=lambda o: o.__name__)
@pytest.mark.parametrize("dt", INTS, ids=_name)
def test_integer_arithmetic_wraps_as_numpy_s(dt, op):
    x, y = _wrapping_values(dt), _wrapping_values(dt)[::-1].copy()
    if op in (operator.floordiv, operator.mod):
        y[y == 0] = 3
    with np.errstate(all="ignore"):
        expected = op(x, y)
        _same(TNP[op](x, y), expected)
        _same(compiled(op)(x, y), expected)
        scalar = op(x, 7)
        _same(compiled(lambda v: op(v, 7))(x), scalar)
        _same(compiled(lambda v: op(3, v))(y), op(3, y))


@pytest.mark.parametrize("dt", NARROW, ids=_name)
def test_unary_integer_ops_wrap_as_numpy_s(dt):
    x = _wrapping_values(dt)
    with np.errstate(all="ignore"):
        for tfn, nfn in [(tnp.negative, np.negative), (tnp.abs, np.abs),
                         (tnp.invert, np.invert), (tnp.square, np.square),
                         (lambda v: tnp.power(v, 3), lambda v: np.power(v, 3)),
                         (tnp.sign, np.sign), (tnp.reciprocal, np.reciprocal)]:
            _same(tfn(x), nfn(x))
            _same(compiled(tfn)(x), nfn(x))


@pytest.mark.parametrize("dt", INTS, ids=_name)
def test_shifts_on_every_int_as_numpy_s_past_the_width_too(dt):
    x = _wrapping_values(dt)
    bits = np.iinfo(dt).bits
    for n in (0, 1, 3, bits - 1, bits, bits + 5):
        count = np.full(x.shape, n, dt)
        for tfn, nfn in [(tnp.left_shift, np.left_shift), (tnp.right_shift, np.right_shift)]:
            _same(tfn(x, count), nfn(x, count))
            _same(compiled(tfn)(x, count), nfn(x, count))
    if np.iinfo(dt).bits < 64:  # numba lets LLVM assume 64-bit products do not overflow
        _same(compiled(lambda v: (v << 2) >> 1)(x), (x << 2) >> 1)


@pytest.mark.parametrize("dt", INTS, ids=_name)
def test_comparisons_with_python_ints_compare_values_as_numpy(dt):
    x = _wrapping_values(dt)
    info = np.iinfo(dt)
    for scalar in (-1, 0, 5, info.max, info.max + 1, info.min - 1, 2**70, -2**70):
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                   operator.ne):
            expected = op(x, scalar)
            _same(TNP[op](x, scalar), expected)
            _same(compiled(lambda v: op(v, scalar))(x), expected)
            _same(compiled(lambda v: op(scalar, v))(x), op(scalar, x))


def test_uint8_plus_one_stays_uint8_and_wraps():
    x = np.array([0, 1, 254, 255], np.uint8)
    _same(tnp.add(x, 1), np.array([1, 2, 255, 0], np.uint8))
    _same(compiled(lambda v: v + 1)(x), np.array([1, 2, 255, 0], np.uint8))
    _same(compiled(lambda v: v - 1)(x), np.array([255, 0, 253, 254], np.uint8))


def test_integer_reductions_accumulate_as_numpy(jnp):
    for dt in NARROW:
        x = _wrapping_values(dt, 40).reshape(4, 11)
        for tfn, nfn in [(tnp.sum, np.sum), (tnp.prod, np.prod), (tnp.max, np.max),
                         (tnp.min, np.min), (tnp.cumsum, np.cumsum), (tnp.mean, np.mean)]:
            with np.errstate(all="ignore"):
                expected = nfn(x, axis=1)
            out = compiled(lambda v: tfn(v, axis=1))(x)
            assert out.dtype == expected.dtype, (dt, tfn)
            np.testing.assert_allclose(out, expected, rtol=1e-12)
        assert tnp.sum(x).dtype == jnp.sum(jnp.asarray(x)).dtype


# ---------------------------------------------------------------- float16

FLOAT16_UNARY = [(tnp.sin, np.sin), (tnp.exp, np.exp), (tnp.tanh, np.tanh),
                 (tnp.sqrt, np.sqrt), (tnp.log1p, np.log1p), (tnp.negative, np.negative)]


def _halves(n=64):
    return RNG.uniform(0.01, 3.0, n).astype(np.float16)


def test_float16_arithmetic_is_numpy_s_computed_in_float32_stored_as_float16():
    x, y = _halves(), _halves()
    for op in (operator.add, operator.sub, operator.mul, operator.truediv):
        _same(TNP[op](x, y), op(x, y))
        _same(compiled(op)(x, y), op(x, y))
        _same(compiled(lambda v: op(v, 0.1))(x), op(x, 0.1))
    for tfn, nfn in FLOAT16_UNARY:
        _same(tfn(x), nfn(x))
        _same(compiled(tfn)(x), nfn(x))
    _same(tnp.nextafter(x, np.float16(0)), np.nextafter(x, np.float16(0)))
    _same(tnp.spacing(x), np.spacing(x))


def test_float16_reductions_and_products_stay_float16():
    x = _halves(24).reshape(4, 6)
    for tfn, nfn in [(tnp.sum, np.sum), (tnp.max, np.max), (tnp.mean, np.mean)]:
        out = compiled(lambda v: tfn(v, axis=0))(x)
        assert out.dtype == np.float16
        np.testing.assert_allclose(out, nfn(x, axis=0), rtol=2e-3)
    out = compiled(lambda a: a @ a.T)(x)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, (x.astype(np.float32) @ x.T.astype(np.float32)),
                               rtol=2e-3)


def test_bit_counts_and_packing_are_uint8_as_numpy_s():
    x = np.array([0, 7, -8, 255, 1 << 40])
    _same(tnp.bitwise_count(x), np.bitwise_count(x))
    bits = np.array([1, 0, 1, 1, 0, 0, 0, 0, 1])
    _same(tnp.packbits(bits), np.packbits(bits))
    _same(tnp.unpackbits(np.packbits(bits)), np.unpackbits(np.packbits(bits)))
    _same(tnp.frombuffer(b"\x01\xff", dtype=np.uint8), np.frombuffer(b"\x01\xff", np.uint8))


# ---------------------------------------------------------------- grad and vmap

def _digits_as_uint8():
    """scikit-learn's 8x8 digits (values 0-16) as the uint8 images a loader gives."""
    sklearn = pytest.importorskip("sklearn.datasets")
    digits = sklearn.load_digits()
    images = np.minimum(digits.images * 16, 255).astype(np.uint8).reshape(-1, 64)
    return images[:200], digits.target[:200]


def _numpy_step(w, b, images, labels, lr):
    """One step of softmax regression's gradient descent, by hand in float32."""
    x = images.astype(np.float32) / np.float32(255)
    logits = x @ w + b
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(labels)), labels] -= 1
    d = p / np.float32(len(labels))
    return w - lr * (x.T @ d), b - lr * d.sum(axis=0)


def test_uint8_images_load_and_train_as_numpy():
    images, labels = _digits_as_uint8()
    assert images.dtype == np.uint8
    lr = np.float32(0.5)

    def loss(params, images, labels):
        w, b = params
        x = images.astype(np.float32) / 255
        logits = x @ w + b
        picked = tnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
        return tnp.mean(tf.nn.logsumexp(logits, axis=1) - picked)

    @tf.jit
    def step(params, images, labels):
        grads = tf.grad(loss)(params, images, labels)
        return tuple(p - lr * g for p, g in zip(params, grads))

    params = (np.zeros((64, 10), np.float32), np.zeros(10, np.float32))
    expected = params
    for _ in range(5):
        params = step(params, images, labels)
        expected = _numpy_step(*expected, images, labels, lr)
    for p, e in zip(params, expected):
        assert p.dtype == np.float32
        np.testing.assert_allclose(p, e, rtol=2e-5, atol=2e-6)
    assert float(loss(params, images, labels)) < float(loss((np.zeros((64, 10), np.float32),
                                                             np.zeros(10, np.float32)),
                                                            images, labels))


def _float16_loss(x):
    return tnp.sum(tnp.sin(x) * x + 0.5 * x * x)


def test_float16_gradients_agree_with_finite_differences():
    x = _halves(16)
    g = tf.grad(_float16_loss)(x)
    gj = tf.jit(tf.grad(_float16_loss))(x)
    assert g.dtype == gj.dtype == np.float16
    wide = x.astype(np.float64)
    h = 1e-6
    fd = np.array([(_float16_loss(wide + h * e) - _float16_loss(wide - h * e)) / (2 * h)
                   for e in np.eye(len(x))])
    np.testing.assert_allclose(g.astype(np.float64), fd, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(gj.astype(np.float64), fd, rtol=1e-2, atol=1e-2)


def test_float32_gradients_of_uint8_inputs_agree_with_finite_differences():
    images = _wrapping_values(np.uint8, 20).reshape(4, 6)
    w = RNG.normal(size=6).astype(np.float32)

    def f(w, images):
        return tnp.sum(tnp.tanh((images.astype(np.float32) / 255) @ w))
    g = tf.jit(tf.grad(f))(w, images)
    assert g.dtype == np.float32
    wide, h = w.astype(np.float64), 1e-6
    fd = np.array([(f(wide + h * e, images) - f(wide - h * e, images)) / (2 * h)
                   for e in np.eye(6)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_integer_inputs_get_float0_gradients_as_jax_s(jnp):
    import jax
    x, idx = np.linspace(0.5, 2.0, 4).astype(np.float32), np.array([3, 0, 1], np.uint8)

    def f(x, idx):
        return tnp.sum(x[idx] * idx.astype(np.float32))
    ours = tf.grad(f, argnums=(0, 1), allow_int=True)(x, idx)
    theirs = jax.grad(f_jax := (lambda x, i: jnp.sum(x[i] * i.astype(jnp.float32))),
                      argnums=(0, 1), allow_int=True)(x, idx)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert ours[1].dtype == np.asarray(theirs[1]).dtype == tf.dtypes.float0
    assert ours[1].shape == idx.shape
    _, pullback = tf.vjp(f, x, idx)
    cx, cidx = pullback(np.float32(1))
    _, jax_pullback = jax.vjp(f_jax, x, idx)
    np.testing.assert_allclose(cx, jax_pullback(np.float32(1))[0], rtol=1e-6)
    # vjp's cotangent of an integer input is float0, as JAX's
    assert cidx.dtype == np.asarray(jax_pullback(np.float32(1))[1]).dtype == tf.dtypes.float0
    assert cidx.shape == idx.shape


def test_float16_gradients_agree_with_jax_s(jnp):
    import jax
    x = _halves(16)
    theirs = jax.grad(lambda v: jnp.sum(jnp.sin(v) * v + 0.5 * v * v))(x)
    ours = tf.grad(_float16_loss)(x)
    assert ours.dtype == theirs.dtype == np.float16
    np.testing.assert_allclose(ours.astype(np.float32), np.asarray(theirs, np.float32),
                               rtol=4e-3, atol=4e-3)


@pytest.mark.parametrize("dt", NARROW + [np.float16], ids=_name)
def test_vmap_keeps_narrow_dtypes_and_wraps(dt):
    x = (_wrapping_values(dt, 20) if np.dtype(dt).kind in "iu" else _halves(24)).reshape(4, 6)

    def f(row):
        return row * row + row[0], (row.astype(np.float32) / 255).sum()
    with np.errstate(all="ignore"):
        expected = [np.stack(v) for v in zip(*[(r * r + r[0], (r.astype(np.float32) / 255)
                                                .sum()) for r in x])]
    for fn in (tf.vmap(f), compiled(tf.vmap(f))):
        out = fn(x)
        if np.dtype(dt).kind in "iu":
            _same(out[0], expected[0])
        else:
            np.testing.assert_allclose(out[0], expected[0], rtol=2e-3)
        assert out[0].dtype == np.dtype(dt) and out[1].dtype == np.float32
        np.testing.assert_allclose(out[1], expected[1], rtol=1e-5)
