"""Shared helpers for the tf_numba.numpy tests: run a function eagerly and traced, and compare
both with NumPy (dtype, shape, scalar-ness and values)."""
import re
import sys

import numpy as np
import pytest

from tf_numba.core.interpreter import eval_program
from tf_numba.core.ir import aval_of_value
from tf_numba.core.pytree import flatten, unflatten
from tf_numba.core.trace import trace
from tf_numba.errors import TfNumbaError

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex128]
TOLERANCE = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 1e-6,
             np.dtype(np.complex64): 1e-6, np.dtype(np.float64): 1e-13,
             np.dtype(np.complex128): 1e-13}


def numpy_reference(np_fn, args):
    """NumPy's result (bool inputs may compute in float16/int8, as tf_numba then does)."""
    with np.errstate(all="ignore"):
        return np_fn(*args)


def run_traced(fn, *args):
    """Trace ``fn`` on avals of ``args``, then evaluate the program on ``args``.

    Outputs may be any pytree of arrays (tuples from divmod, lists from split).
    """
    structure = []

    def flat_fn(*xs):
        leaves, treedef = flatten(fn(*xs))
        structure.append(treedef)
        return leaves

    program, captured = trace(flat_fn, [aval_of_value(a) for a in args])
    assert not captured
    return unflatten(structure[0], eval_program(program, list(args)))


def sample(dtype, shape, rng, kind="any"):
    """Random values of ``dtype``: ``kind`` picks a domain (any, positive, unit, ge1, small)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo, hi = {"positive": (1, 6), "unit": (-1, 2), "ge1": (1, 6), "small": (0, 4)}.get(
            kind, (-5, 6))
        return rng.integers(lo, hi, shape).astype(dtype)
    if kind == "positive":
        real = rng.uniform(0.1, 3.0, shape)
    elif kind == "unit":
        real = rng.uniform(-0.95, 0.95, shape)
    elif kind == "ge1":
        real = rng.uniform(1.05, 4.0, shape)
    elif kind == "small":
        real = rng.uniform(0.0, 3.0, shape)
    else:
        real = rng.normal(0, 2, shape)
    if dtype.kind == "c":
        imag = rng.uniform(0.1, 1.0, shape) if kind in ("positive", "ge1") else \
            rng.normal(0, 1, shape) * (0.5 if kind == "unit" else 1.0)
        return (real + 1j * imag).astype(dtype)
    return real.astype(dtype)


def assert_same(actual, expected, *, exact=True, rtol=None, check_type=True, what=""):
    """Equal dtype and shape (and scalar-ness), equal values (NaN == NaN); with
    ``exact=False`` values within the dtype's tolerance."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{what}: expected a sequence, got {actual!r}"
        assert len(actual) == len(expected), what
        for a, e in zip(actual, expected):
            assert_same(a, e, exact=exact, rtol=rtol, check_type=check_type, what=what)
        return
    if isinstance(expected, (bool, int, float, complex)) and not isinstance(expected,
                                                                            np.generic):
        assert type(actual) is type(expected), f"{what}: {type(actual)} vs {type(expected)}"
        assert actual == expected or (actual != actual and expected != expected), what
        return
    e = np.asarray(expected)
    a = np.asarray(actual)
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype} != {e.dtype}"
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if check_type:
        assert isinstance(actual, np.ndarray) == isinstance(expected, np.ndarray), (
            f"{what}: {type(actual).__name__} returned where NumPy returns "
            f"{type(expected).__name__}")
    if exact:
        np.testing.assert_array_equal(a, e, err_msg=what)
    else:
        tol = rtol if rtol is not None else TOLERANCE.get(e.dtype, 0)
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def check(fn, np_fn, *args, exact=True, rtol=None, traced=True, static=(), np_static=None):
    """``fn(*args, *static)`` eagerly and traced (over ``args``) against ``np_fn``.

    ``static`` arguments are closed over rather than traced (Python scalars stay weak).
    """
    np_static = static if np_static is None else np_static
    with np.errstate(all="ignore"):
        expected = np_fn(*args, *np_static)
        eager = fn(*args, *static)
    assert_same(eager, expected, exact=exact, rtol=rtol, what="eager")
    if traced:
        with np.errstate(all="ignore"):
            out = run_traced(lambda *xs: fn(*xs, *static), *args)
        assert_same(out, expected, exact=exact, rtol=rtol, check_type=False, what="traced")
    return expected


@pytest.fixture(autouse=True)
def _jax_x64_left_as_found():
    """JAX's x64 mode is process-wide: a test that turns it on must not change what the
    tests after it compare against (test_random's bit-for-bit checks expect JAX's
    default)."""
    jax = sys.modules.get("jax")
    before = bool(jax.config.jax_enable_x64) if jax is not None else False
    yield
    jax = sys.modules.get("jax")
    if jax is not None and bool(jax.config.jax_enable_x64) != before:
        jax.config.update("jax_enable_x64", before)


def names_its_op_twice(message):
    """Whether a message's first line repeats the op it starts with ("vmap: vmap got ...",
    "random.randint: randint needs ...", "grad: grad(..., has_aux=True) ...")."""
    found = re.match(r"([\w.]+)(?:\([^)]*\))?: (.*)", message.split("\n")[0])
    if found is None:
        return False
    op, rest = found.groups()
    return any(re.match(rf"{re.escape(name)}(?:\b|'s)", rest)
               for name in {op, op.rsplit(".", 1)[-1]})


@pytest.fixture(autouse=True)
def _every_error_names_its_op_once(monkeypatch):
    """Every TfNumbaError a test makes (the suite's bad-input cases) says its op once."""
    rendered = []
    render = TfNumbaError._render

    def recorded(err):
        text = render(err)
        rendered.append(text)
        return text

    monkeypatch.setattr(TfNumbaError, "_render", recorded)
    yield
    doubled = [text for text in rendered if names_its_op_twice(text)]
    if doubled:
        pytest.fail("an error names its op twice:\n" + "\n".join(doubled), pytrace=False)


# The suite's time is mostly numba compiling kernels, on one xdist worker per core. The
# files whose tests compile the most (the longest tests of a cold run) go first, so that
# none of those tests is left at the end of a worker's queue while the other core idles.
COMPILE_HEAVY_FIRST = ("test_codegen.py", "test_control_flow.py", "test_scipy_linalg.py",
                       "test_jit.py", "test_windows.py", "test_random.py", "test_nn.py",
                       "test_segments.py", "test_kernel_cache.py", "test_compile_service.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(COMPILE_HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
