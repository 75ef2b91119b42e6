"""tf_numba's errors: the op written once in front of the message, by TfNumbaError alone."""
import ast
import pathlib
import re

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax, nn, random
from tf_numba.errors import ShapeError, TfNumbaError
from conftest import names_its_op_twice

PACKAGE = pathlib.Path(tf.__file__).parent


def test_the_op_is_written_once_in_front_of_the_message():
    assert str(TfNumbaError("bad seed", op="random.key")) == "random.key: bad seed"
    err = TfNumbaError("bad seed").locate("random.key", "f.py:3 (in g)")
    assert str(err) == "random.key: bad seed\n  at f.py:3 (in g)"
    assert str(TfNumbaError("no op here")) == "no op here"


def test_a_doubled_op_is_recognized():
    assert names_its_op_twice("vmap: vmap got different sizes")
    assert names_its_op_twice("random.randint: randint needs an integer dtype")
    assert names_its_op_twice("grad: grad(..., has_aux=True) needs a pair")
    assert names_its_op_twice("qr: qr's mode")
    assert not names_its_op_twice("vmap: got different sizes")
    assert not names_its_op_twice("pad: padding_value must be rank 0")


def _text(node):
    """The text of a message or op expression, "{...}" for each formatted value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value)
                        + "}" for v in node.values)]
    if isinstance(node, ast.IfExp):
        return _text(node.body) + _text(node.orelse)
    if isinstance(node, ast.BinOp):            # "..." + "..." or "..." % (...)
        return _text(node.left)
    return ["{" + ast.unparse(node) + "}"]


def _constants(scope):
    """The names a function (or module) binds to a string constant (``name = "minimize"``)."""
    return {target.id: node.value.value for node in ast.walk(scope)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for target in node.targets if isinstance(target, ast.Name)}


def _raise_sites():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        seen = set()
        scopes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] + [tree]
        for scope in scopes:            # each function with the names it binds, then the module
            constants = _constants(scope)
            for node in ast.walk(scope):
                op = next((k.value for k in getattr(node, "keywords", ()) if k.arg == "op"),
                          None)
                if not isinstance(node, ast.Call) or not node.args or op is None \
                        or id(node) in seen:
                    continue
                seen.add(id(node))
                ops = _text(op)
                if isinstance(op, ast.Name) and op.id in constants:
                    ops.append(constants[op.id])
                yield path, node, ops, _text(node.args[0])


def test_no_raise_site_writes_its_op_into_its_message():
    """Each error made with ``op=`` leaves the op out of its message (TfNumbaError puts it
    in front): "got different sizes", not "vmap got different sizes"."""
    sites = list(_raise_sites())
    assert len(sites) > 200
    doubled = [f"{path.relative_to(PACKAGE)}:{node.lineno}: {message[:60]!r}"
               for path, node, ops, messages in sites for op in ops for message in messages
               if re.match(rf"{re.escape(op)}(?:[ :(]|'s)", message)]
    assert not doubled, "\n".join(doubled)


def _call(fn, *args):
    return lambda: fn(*args)


X3, X4 = np.ones(3), np.ones(4)

# one bad input per transform and per op family that raises; each names its op once
BAD_INPUTS = {
    "jit (a shape)": _call(tf.jit(lambda a, b: a @ b), np.ones((2, 3)), np.ones((4, 5))),
    "jit (a Python if)": _call(tf.jit(lambda a: a if a > 0 else -a), 1.0),
    "grad (not a scalar)": _call(tf.grad(lambda a: a), X3),
    "grad (an int)": _call(tf.grad(lambda a: a), 1),
    "grad (has_aux)": _call(tf.grad(tnp.sum, has_aux=True), X3),
    "value_and_grad": _call(tf.value_and_grad(lambda a: a * 2), X3),
    "vjp": lambda: tf.vjp(lambda a: a * 2, X3)[1](X4),
    "jvp": lambda: tf.jvp(lambda a: a * 2, (X3,), (X4,)),
    "linearize": lambda: tf.linearize(lambda a: a * 2, X3)[1](X4),
    "vmap (sizes)": _call(tf.vmap(lambda a, b: a + b), X3, X4),
    "vmap (in_axes)": _call(tf.vmap(lambda a, b: a + b, in_axes=(0,)), X3, X3),
    "vmap (nothing batched)": _call(tf.vmap(lambda a: a, in_axes=None), X3),
    "jacfwd": _call(tf.jacfwd(lambda a: a), 1),
    "jacrev (has_aux)": _call(tf.jacrev(lambda a: a, has_aux=True), X3),
    "reshape": lambda: tnp.reshape(X3, (2, 2)),
    "indexing": _call(tf.jit(lambda a: a[5]), X3),
    "concatenate": lambda: tnp.concatenate([]),
    "nonzero": _call(tf.jit(tnp.nonzero), X3),
    "median": lambda: tnp.median(np.ones(0)),
    "argmax": lambda: tnp.argmax(np.ones(0)),
    "fft": lambda: tnp.fft.fft(X3, axis=3),
    "linalg": lambda: tnp.linalg.qr(np.eye(2), mode="bad"),
    "einsum": lambda: tf.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))),
    "lax.cond": lambda: lax.cond(X3, lambda: 1.0, lambda: 2.0),
    "lax.switch": lambda: lax.switch(0, []),
    "lax.scan": lambda: lax.scan(lambda c, a: (c, a), 0.0, X3, length=5),
    "random (a key)": lambda: random.normal(1.5, (2,)),
    "random.randint": lambda: random.randint(random.key(0), (2,), 0, 5, dtype=np.float32),
    "nn": lambda: nn.softmax(X3, axis=2),
    "tree_util": lambda: tf.tree_util.tree_map(lambda a, b: a + b, (1, 2), (1,)),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_a_bad_input_names_its_op_once(case):
    with pytest.raises(TfNumbaError) as info:
        BAD_INPUTS[case]()
    message = str(info.value)
    assert not names_its_op_twice(message), message
    if info.value.op:
        assert message.startswith(f"{info.value.op}: "), message


SCIPY_BAD_INPUTS = {
    "signal": lambda s: s.signal.convolve(X3, X3, mode="bad"),
    "integrate": lambda s: s.integrate.odeint(lambda y, t: y, X3, np.ones((2, 2))),
    "optimize": lambda s: s.optimize.minimize(tnp.sum, np.ones((2, 2)), method="BFGS"),
    "linalg": lambda s: s.linalg.qr(np.eye(2), pivoting=True),
}


@pytest.mark.parametrize("case", SCIPY_BAD_INPUTS)
def test_a_bad_scipy_input_names_its_op_once(case):
    import tf_numba.scipy.integrate  # noqa: F401
    import tf_numba.scipy.linalg  # noqa: F401
    import tf_numba.scipy.optimize  # noqa: F401
    import tf_numba.scipy.signal  # noqa: F401
    with pytest.raises(TfNumbaError) as info:
        SCIPY_BAD_INPUTS[case](tf.scipy)
    assert not names_its_op_twice(str(info.value)), str(info.value)
    assert str(info.value).startswith(f"{info.value.op}: ")


def test_shape_errors_are_type_errors_as_jax_and_value_errors_as_numpy():
    # JAX's data loading notebook catches the TypeError of a mismatched product
    for bad in (lambda: tnp.dot(np.ones((3, 4)), np.ones(5)),
                lambda: tnp.matmul(np.ones((3, 4)), np.ones((5, 2))),
                lambda: tnp.add(np.ones(3), np.ones(4))):
        with pytest.raises(TypeError) as err:
            bad()
        assert isinstance(err.value, ShapeError) and isinstance(err.value, ValueError)
