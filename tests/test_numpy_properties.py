"""Property tests (hypothesis): random shapes, dtypes and indices against NumPy."""
import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tf_numba.numpy as tnp

from conftest import assert_same, numpy_reference, run_traced

SETTINGS = settings(max_examples=60, deadline=None)
DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.bool_,
                          np.complex128])


def _values(dtype, shape):
    if np.dtype(dtype) == np.bool_:
        return hnp.arrays(dtype, shape)
    if np.dtype(dtype).kind in "iu":
        return hnp.arrays(dtype, shape, elements=st.integers(-50, 50))
    if np.dtype(dtype).kind == "c":
        return hnp.arrays(dtype, shape, elements=st.complex_numbers(max_magnitude=1e3,
                                                                   allow_nan=False))
    return hnp.arrays(dtype, shape, elements=st.floats(-1e3, 1e3, width=np.dtype(dtype).itemsize
                                                       * 8))


@st.composite
def broadcast_operands(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    dt1, dt2 = draw(DTYPES), draw(DTYPES)
    return (draw(_values(dt1, shapes.input_shapes[0])),
            draw(_values(dt2, shapes.input_shapes[1])))


@SETTINGS
@given(broadcast_operands(), st.sampled_from(["add", "multiply", "maximum", "equal",
                                              "true_divide", "logical_xor", "arctan2"]))
def test_binary_functions_broadcast_and_promote_like_numpy(operands, name):
    fn, np_fn = getattr(tnp, name), getattr(np, name)
    try:
        expected = numpy_reference(np_fn, operands)
    except TypeError:
        return
    with np.errstate(all="ignore"):
        assert_same(fn(*operands), expected, what="eager")
        assert_same(run_traced(fn, *operands), np.asarray(expected), check_type=False,
                    what="traced")


@st.composite
def array_and_index(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4))
    x = np.arange(np.prod(shape)).reshape(shape)
    index = draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    items = list(index) if isinstance(index, tuple) else [index]
    # swap some basic entries for integer arrays to mix advanced indexing in
    axis = 0
    for i, item in enumerate(items):
        if item is None:
            continue
        if item is Ellipsis:
            break
        if isinstance(item, int) or draw(st.booleans()) and axis < len(shape):
            n = shape[axis]
            if draw(st.booleans()):
                items[i] = np.asarray(draw(st.lists(st.integers(-n, n - 1), min_size=1,
                                                    max_size=3)))
        axis += 1
        if axis >= len(shape):
            break
    return x, tuple(items)


@SETTINGS
@given(array_and_index())
def test_getitem_matches_numpy_on_random_indices(case):
    x, index = case
    try:
        expected = x[index]
    except IndexError:
        return
    out = run_traced(lambda a: a[index], x)
    assert_same(out, np.asarray(expected), check_type=False)


@SETTINGS
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.integers(-n, n - 1), min_size=1, max_size=8))),
    st.sampled_from(["add", "multiply", "min", "max", "set"]))
def test_at_updates_match_numpy_ufunc_at(case, kind):
    n, idx = case
    idx = np.asarray(idx)
    x = np.arange(n, dtype=np.float64) - 2.5
    values = np.arange(len(idx), dtype=np.float64) * 1.5 - 3
    expected = x.copy()
    if kind == "set":
        expected[idx] = values
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum}[kind]
        ufunc.at(expected, idx, values)
    assert_same(getattr(tnp.at(x)[idx], kind)(values), expected)
    out = run_traced(lambda a, i, v: getattr(a.at[i], kind)(v), x, idx, values)
    assert_same(out, expected, check_type=False)
