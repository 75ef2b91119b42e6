"""The core: dtype promotion, symbolic dims, the IR's fingerprint and printer, pytrees,
tracing errors (with the user's source line) and that a failed trace leaves no state."""
import collections
import os
import subprocess
import sys

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.core import dtypes, pytree
from tf_numba.core.shapes import Sym, broadcast_shapes
from tf_numba.core.trace import _state
from tf_numba.errors import (ConcretizationError, DTypeError, ImmutableArrayError, ShapeError,
                             TfNumbaError, TracerLeakError)

HERE = os.path.basename(__file__)


@pytest.mark.parametrize("operands, expected", [
    ((np.float32, 2.0), np.float32), ((np.int32, 1), np.int32), ((np.int32, 1.5), np.float64),
    ((np.bool_, 1), np.int64), ((np.float32, 1j), np.complex64),
    ((np.int32, np.int64), np.int64), ((np.float32, np.int64), np.float64),
    ((np.complex64, np.float64), np.complex128)])
def test_numpy2_promotion_with_weak_python_scalars(operands, expected):
    args = [np.dtype(o) if isinstance(o, type) else o for o in operands]
    assert dtypes.result_type(*args) == np.dtype(expected)


def test_float32_array_times_python_float_stays_float32_under_trace():
    program = tf.make_program(lambda x: x * 2.0)(np.ones(3, np.float32))
    assert program.out_avals[0].dtype == np.float32


def test_unknown_dtype_is_a_dtype_error():
    with pytest.raises(DTypeError) as info:
        tnp.zeros(3, dtype="float128" if hasattr(np, "float128") else "U5")
    assert "supported" in str(info.value) or "unknown" in str(info.value)
    with pytest.raises(DTypeError):
        tf.make_program(lambda x: x + 1)(np.array(["a"]))


def test_symbolic_dims_are_interned_polynomials():
    n, m = Sym("n"), Sym("m")
    assert Sym("n") is n and (n * 3) // 3 is n and n * m is m * n
    assert (n + 1) - 1 is n and n - n == 0 and repr(2 * n - 1) == "2*n - 1"
    with pytest.raises(ConcretizationError):
        int(n)
    with pytest.raises(ConcretizationError):
        bool(n < 5)
    assert n > 1 and n >= 2          # symbolic lengths are >= 2


def test_broadcast_shape_error_names_both_shapes():
    with pytest.raises(ShapeError) as info:
        broadcast_shapes((3,), (4,), op="add")
    assert "(3,)" in str(info.value) and "(4,)" in str(info.value)


def chain(x, op_at=None):
    y = tnp.sin(x) * 2.0
    y = y + x if op_at is None else y - x
    return tnp.sum(tnp.exp(y))


def test_same_function_traced_twice_has_the_same_fingerprint():
    x = np.ones((2, 3))
    a, b = tf.make_program(chain)(x), tf.make_program(chain)(x)
    assert a.eqns[0].outvars[0] is not b.eqns[0].outvars[0]     # different Vars ...
    assert a.fingerprint() == b.fingerprint()                    # ... same structure


def test_a_one_op_change_changes_the_fingerprint():
    x = np.ones((2, 3))
    assert (tf.make_program(chain)(x).fingerprint()
            != tf.make_program(lambda x: chain(x, op_at=1))(x).fingerprint())
    assert (tf.make_program(chain)(x).fingerprint()
            != tf.make_program(chain)(np.ones((2, 4))).fingerprint())


def test_fingerprint_is_stable_across_processes():
    code = ("import numpy as np, tf_numba as tf, tf_numba.numpy as tnp\n"
            "f = lambda x: tnp.sum(tnp.exp(tnp.sin(x) * 2.0 + x))\n"
            "print(tf.make_program(f)(np.ones((2, 3))).fingerprint())\n")
    env = dict(os.environ, PYTHONHASHSEED="123")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    here = tf.make_program(lambda x: tnp.sum(tnp.exp(tnp.sin(x) * 2.0 + x)))(np.ones((2, 3)))
    assert out.stdout.strip() == here.fingerprint()


def test_printer_reads_like_a_jaxpr():
    text = str(tf.make_program(lambda x, y: tnp.sum(x * y))(np.ones(3), np.ones(3)))
    lines = text.splitlines()
    assert lines[0] == "{ lambda ; a:f64[3] b:f64[3]. let"
    assert lines[1].strip() == "c:f64[3] = mul a b"
    assert lines[2].strip() == "d:f64[] = reduce_sum[axes=(0,)] c"
    assert lines[3].strip() == "in (d,) }"


Point = collections.namedtuple("Point", "x y")


class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label


pytree.register_pytree_node(Box, lambda b: ((b.value,), b.label),
                            lambda label, children: Box(children[0], label))


def test_pytrees_round_trip_every_node_kind():
    tree = {"b": [1, (2, None)], "a": Point(3, 4), "c": Box(5, "tag")}
    leaves, treedef = pytree.flatten(tree)
    assert leaves == [Point(3, 4).x, 4, 1, 2, 5]
    back = pytree.unflatten(treedef, leaves)
    assert back["a"] == Point(3, 4) and back["b"] == [1, (2, None)]
    assert isinstance(back["c"], Box) and back["c"].label == "tag"
    assert pytree.flatten(tree)[1] == treedef and hash(pytree.flatten(tree)[1]) == hash(treedef)


def test_grad_and_jit_take_and_return_pytrees():
    params = {"w": np.array([1.0, 2.0]), "p": Point(np.array(3.0), None)}

    def loss(params):
        return tnp.sum(params["w"] ** 2) * params["p"].x
    g = tf.grad(loss)(params)
    np.testing.assert_allclose(g["w"], 2 * params["w"] * 3.0)
    assert isinstance(g["p"], Point) and g["p"].y is None and float(g["p"].x) == 5.0


def _raises_at_this_line(error, fn, *args):
    with pytest.raises(error) as info:
        fn(*args)
    return info.value


def test_shape_mismatch_names_op_shapes_and_line_and_leaves_no_state():
    def bad(x, y):
        return x + y                                  # the line the error must name
    err = _raises_at_this_line(ShapeError, tf.make_program(bad), np.ones(3), np.ones(4))
    assert err.op and "(3,)" in str(err) and "(4,)" in str(err)
    assert HERE in str(err.source) and "bad" in str(err.source)
    assert _state.builders == []                      # the trace stack is clean
    assert len(tf.make_program(bad)(np.ones(3), np.ones(3)).eqns) == 1


def test_bool_of_a_tracer_is_a_concretization_error_naming_value_and_line():
    def branchy(x):
        if x > 0:
            return x
        return -x
    assert tf.grad(branchy)(-1.0) == -1.0     # un-jitted grad knows the value (autograd)
    err = _raises_at_this_line(ConcretizationError, tf.make_program(branchy), 1.0)
    assert "bool[]" in str(err) and "tnp.where" in str(err)
    assert HERE in str(err.source)
    assert _state.builders == []


def test_python_control_flow_on_shapes_still_works():
    def f(x):
        return x * 2 if x.shape[0] > 2 else x
    assert len(tf.make_program(f)(np.ones(3)).eqns) == 1


def test_a_leaked_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2
    tf.make_program(f)(np.ones(2))
    with pytest.raises(TracerLeakError):
        tf.make_program(lambda y: y + leaked[0])(np.ones(2))
    with pytest.raises(TracerLeakError) as info:
        leaked[0] + 1.0                 # outside any trace: the op is the operator's
    assert info.value.op == "add" and str(info.value).startswith("add: a traced f64[2]")
    assert info.value.source[0] == __file__


def test_writing_into_a_traced_array_says_to_use_at_and_names_the_line():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(ImmutableArrayError) as info:
        tf.jit(f)(np.ones(3))
    assert isinstance(info.value, (TfNumbaError, TypeError)) and "x.at[index].set" in str(
        info.value)
    assert info.value.source[0] == __file__ and info.value.source[2] == "f"


def test_every_error_is_a_tfnumba_error():
    for cls in (ShapeError, DTypeError, ConcretizationError, TracerLeakError):
        assert issubclass(cls, TfNumbaError)


def test_un_jitted_evaluation_compiles_nothing():
    before = tf.cache_info()["compiles"]
    tf.grad(lambda x: tnp.sum(tnp.tanh(x) ** 2))(np.ones(4))
    assert tf.cache_info()["compiles"] == before


@pytest.mark.parametrize("setting, gc_before, frozen, enabled_after", [
    (None, "enable", True, True),       # default: import-time objects frozen, collector back on
    (None, "disable", True, False),     # a collector the user turned off stays off
    ("0", "enable", False, True),       # opted out: the collector is left exactly as it was
])
def test_import_freezes_import_time_objects_and_restores_the_collector(
        setting, gc_before, frozen, enabled_after):
    code = (f"import gc; gc.{gc_before}()\n"
            "import tf_numba\n"
            "print(gc.get_freeze_count() > 0, gc.isenabled())\n")
    env = dict(os.environ)
    env.pop("TF_NUMBA_GC_FREEZE", None)
    if setting is not None:
        env["TF_NUMBA_GC_FREEZE"] = setting
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(frozen), str(enabled_after)]


def test_import_makes_no_numba_dispatcher_and_helpers_appear_on_first_use():
    """A numba dispatcher costs ~0.4 ms to make (the first ~9 ms more): the library's
    helpers are made when first read (``loops.matvec``), not by ``import tf_numba``."""
    code = ("import numba\n"
            "from numba.core import dispatcher\n"
            "made = []\n"
            "init = dispatcher.Dispatcher.__init__\n"
            "def counting(self, *a, **k):\n"
            "    made.append(1)\n"
            "    init(self, *a, **k)\n"
            "dispatcher.Dispatcher.__init__ = counting\n"
            "import numpy as np\n"
            "import tf_numba, tf_numba.numpy\n"
            "from tf_numba.lowering import loops\n"
            "print(len(made))\n"
            "out = np.zeros(3)\n"
            "loops.matvec(np.eye(3), np.arange(3.0), out)\n"
            "print(type(loops.vecmat).__name__, out.tolist(), len(made) > 0)\n"
            "print(hasattr(loops, 'no_such_helper'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["0", "CPUDispatcher [0.0, 1.0, 2.0] True", "False"]


def test_scipy_and_dask_are_reached_without_importing_them_first():
    import subprocess
    import sys
    code = ("import tf_numba as tf, sys; assert 'tf_numba.scipy' not in sys.modules; "
            "print(tf.scipy.special.__name__, tf.dask.vmap.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["tf_numba.scipy.special", "tf_numba.dask.api"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = tf.nope
