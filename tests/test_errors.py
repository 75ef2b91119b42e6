"""tf_numba's errors: the op written once in front of the message, by TfNumbaError alone;
a bad input anywhere in the public API names the user's line, and its traceback keeps none
of tf_numba's frames."""
import ast
import inspect
import os
import pathlib
import re
import traceback

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.nn.initializers  # noqa: F401
import tf_numba.scipy.integrate  # noqa: F401
import tf_numba.scipy.linalg  # noqa: F401
import tf_numba.scipy.optimize  # noqa: F401
import tf_numba.scipy.signal  # noqa: F401
import tf_numba.scipy.stats  # noqa: F401
from tf_numba import lax, nn, optimizers, random
from tf_numba.errors import ShapeError, TfNumbaError
from tf_numba.example_libraries import stax
from tf_numba.runtime import CpuEngine, Runtime
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


def _compiled(function):
    """Whether a function is numba-compiled (``@_jit``, ``@njit``): it raises the builtin
    errors numba can, which the plan running it explains as tf_numba errors."""
    return any("jit" in ast.unparse(d) for d in function.decorator_list)


def test_no_raise_site_writes_an_op_prefix_by_hand():
    """An error whose message starts with its op ("random.choice: ...") passes it as
    ``op=`` instead, so that TfNumbaError alone writes the prefix (and ``locate`` cannot
    write a second one) and the error is a TfNumbaError, not a bare ValueError."""
    by_hand = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        skipped = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                   and _compiled(f) for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or id(node) in skipped \
                    or not isinstance(node.exc, ast.Call) or not node.exc.args \
                    or any(k.arg == "op" for k in node.exc.keywords):
                continue
            by_hand += [f"{path.relative_to(PACKAGE)}:{node.lineno}: {message[:60]!r}"
                        for message in _text(node.exc.args[0])
                        if re.match(r"[\w.]+(\([^)]*\))?: ", message)]
    assert not by_hand, "\n".join(by_hand)


X3, X4, EYE2 = np.ones(3), np.ones(4), np.eye(2)


def _custom_jvp_with_a_bad_rule():
    @tf.custom_jvp
    def f(x):
        return x

    @f.defjvp
    def f_jvp(primals, tangents):
        return primals[0], (tangents[0], tangents[0])     # a pair where one tangent belongs
    return tf.jvp(f, (X3,), (X3,))


def _custom_vjp_with_a_bad_rule():
    @tf.custom_vjp
    def f(x):
        return x * 2
    f.defvjp(lambda x: (f(x), None), lambda res, g: (g, g))   # two cotangents for one input
    return tf.grad(lambda x: tnp.sum(f(x)))(X3)


def _optimizer_update_with_another_tree():
    init, update, get_params = optimizers.adam(0.1)
    return update(0, (X3,), init((X3, X3)))


def _stax_apply_to_the_wrong_width():
    init, apply = stax.serial(stax.Dense(4), stax.Relu)
    _, params = init(random.key(0), (-1, 3))
    return apply(params, np.ones((2, 5)))


def _runtime_prepare_without_targets():
    return Runtime().prepare(tf.make_program(lambda x: x * 2)(X3), [X3], [])


def _runtime_run_on_another_shape():
    runtime, cpu = Runtime(), CpuEngine()
    prepared = runtime.prepare(tf.make_program(lambda x: x * 2)(X3), [X3], [cpu.target()])
    return runtime.run([cpu], prepared, [X4])


# one or more bad inputs for each public module, transform and op family that raises
BAD_INPUTS = {
    "jit (a shape)": lambda: tf.jit(lambda a, b: a @ b)(np.ones((2, 3)), np.ones((4, 5))),
    "jit (a Python if)": lambda: tf.jit(lambda a: a if a > 0 else -a)(1.0),
    "grad (not a scalar)": lambda: tf.grad(lambda a: a)(X3),
    "grad (an int)": lambda: tf.grad(lambda a: a)(1),
    "grad (has_aux)": lambda: tf.grad(tnp.sum, has_aux=True)(X3),
    "value_and_grad": lambda: tf.value_and_grad(lambda a: a * 2)(X3),
    "vjp": lambda: tf.vjp(lambda a: a * 2, X3)[1](X4),
    "jvp": lambda: tf.jvp(lambda a: a * 2, (X3,), (X4,)),
    "linearize": lambda: tf.linearize(lambda a: a * 2, X3)[1](X4),
    "vmap (sizes)": lambda: tf.vmap(lambda a, b: a + b)(X3, X4),
    "vmap (in_axes)": lambda: tf.vmap(lambda a, b: a + b, in_axes=(0,))(X3, X3),
    "vmap (nothing batched)": lambda: tf.vmap(lambda a: a, in_axes=None)(X3),
    "jacfwd": lambda: tf.jacfwd(lambda a: a)(1),
    "jacrev (has_aux)": lambda: tf.jacrev(lambda a: a, has_aux=True)(X3),
    "make_program": lambda: tf.make_program(lambda a: a @ a)(np.ones((2, 3))),
    "eval_shape": lambda: tf.eval_shape(lambda a: a @ a, np.ones((2, 3))),
    "checkpoint": lambda: tf.checkpoint(lambda a: a @ a)(np.ones((2, 3))),
    "custom_jvp": _custom_jvp_with_a_bad_rule,
    "custom_vjp": _custom_vjp_with_a_bad_rule,
    "einsum (sizes)": lambda: tf.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5))),
    "einsum (labels)": lambda: tnp.einsum("ij,j->q", np.ones((2, 3)), X3),
    "reshape": lambda: tnp.reshape(X3, (2, 2)),
    "indexing": lambda: tf.jit(lambda a: a[5])(X3),
    "at[].set": lambda: tf.jit(lambda a: a.at[5].set(1.0))(X3),
    "concatenate": lambda: tnp.concatenate([]),
    "nonzero": lambda: tf.jit(tnp.nonzero)(X3),
    "median": lambda: tnp.median(np.ones(0)),
    "argmax": lambda: tnp.argmax(np.ones(0)),
    "fft (an axis)": lambda: tnp.fft.fft(X3, axis=3),
    "fft (norm)": lambda: tnp.fft.fft(X3, norm="bad"),
    "rfft (complex)": lambda: tnp.fft.rfft(X3 + 1j),
    "fft2 (rank)": lambda: tnp.fft.fft2(X3),
    "linalg (an option)": lambda: tnp.linalg.qr(EYE2, mode="bad"),
    "linalg (shapes)": lambda: tnp.linalg.solve(EYE2, X3),
    "linalg (not square)": lambda: tnp.linalg.det(np.ones((2, 3))),
    "lax.cond": lambda: lax.cond(X3, lambda: 1.0, lambda: 2.0),
    "lax.switch": lambda: lax.switch(0, []),
    "lax.scan": lambda: lax.scan(lambda c, a: (c, a), 0.0, X3, length=5),
    "lax.fori_loop": lambda: lax.fori_loop(0, 3, lambda i, c: (c, c), 0.0),
    "lax.while_loop": lambda: lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0.0),
    "lax.reduce_window": lambda: lax.reduce_window(X3, 0.0, "mean", (2,), (1,), "VALID"),
    "random.key": lambda: random.key(1.5),
    "random (a key)": lambda: random.normal(1.5, (2,)),
    "random (a shape)": lambda: random.normal(random.key(0), (2, -1)),
    "random.choice": lambda: random.choice(random.key(0), 3, (4,), replace=False),
    "random.multivariate_normal": lambda: random.multivariate_normal(
        random.key(0), np.zeros(2), EYE2, method="bad"),
    "random.split": lambda: random.split(X3, 2),
    "random.randint": lambda: random.randint(random.key(0), (2,), 0, 5, dtype=np.float32),
    "nn": lambda: nn.softmax(X3, axis=2),
    "nn.initializers": lambda: nn.initializers.normal()(1.5, (2,)),
    "tree_util.tree_map": lambda: tf.tree_util.tree_map(lambda a, b: a + b, (1, 2), (1,)),
    "tree.map": lambda: tf.tree.map(lambda a, b: a + b, (1, 2), (1,)),
    "tree_util.tree_transpose": lambda: tf.tree_util.tree_transpose(
        tf.tree_util.tree_structure((1, 2)), tf.tree_util.tree_structure([1]), (1, 2)),
    "tree_util.tree_unflatten": lambda: tf.tree_util.tree_unflatten(
        tf.tree_util.tree_structure((1, 2)), [1]),
    "optimizers (a step size)": lambda: optimizers.sgd("fast"),
    "optimizers (a schedule)": lambda: optimizers.piecewise_constant([1, 2], [1.0]),
    "optimizers (update)": _optimizer_update_with_another_tree,
    "optimizers (a gradient's shape)": lambda: optimizers.sgd(0.1)[1](0, X4, X3),
    "example_libraries.stax": _stax_apply_to_the_wrong_width,
    "Runtime.prepare": _runtime_prepare_without_targets,
    "Runtime.run": _runtime_run_on_another_shape,
    "config": lambda: tf.config.update("tf_numba_no_such_switch", 1),
    "scipy.signal (an option)": lambda: tf.scipy.signal.convolve(X3, X3, mode="bad"),
    "scipy.signal (rank)": lambda: tf.scipy.signal.convolve2d(X3, X3),
    "scipy.linalg (an option)": lambda: tf.scipy.linalg.qr(EYE2, pivoting=True),
    "scipy.linalg (assume_a)": lambda: tf.scipy.linalg.solve(EYE2, X3[:2], assume_a="bad"),
    "scipy.linalg (shapes)": lambda: tf.scipy.linalg.solve(EYE2, X4),
    "scipy.special": lambda: tf.scipy.special.logsumexp(X3, axis=3),
    "scipy.stats.rankdata": lambda: tf.scipy.stats.rankdata(X3, method="bad"),
    "scipy.stats.gaussian_kde": lambda: tf.scipy.stats.gaussian_kde(X3, bw_method="bad"),
    "scipy.special.multigammaln": lambda: tf.scipy.special.multigammaln(X3, 0),
    "packbits": lambda: tnp.packbits(X3 > 0, bitorder="bad"),
    "jit(f).lower": lambda: tf.jit(lambda a, b: a @ b).lower(np.ones((2, 3)), X4),
    "jit(f).lower().compile": lambda: tf.jit(lambda a: a * 2).lower(X3).compile(X4),
    "scipy.stats": lambda: tf.scipy.stats.norm.pdf(X3, np.ones(2)),
    "scipy.stats (multivariate)": lambda: tf.scipy.stats.multivariate_normal.pdf(X3, X4),
    "scipy.integrate": lambda: tf.scipy.integrate.odeint(lambda y, t: y, X3, np.ones((2, 2))),
    "scipy.optimize": lambda: tf.scipy.optimize.minimize(tnp.sum, np.ones((2, 2)),
                                                        method="BFGS"),
}


def _raised(case):
    with pytest.raises(TfNumbaError) as info:
        BAD_INPUTS[case]()
    return info.value


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_a_bad_input_names_its_op_once(case):
    err = _raised(case)
    message = str(err)
    assert not names_its_op_twice(message), message
    assert err.op and message.startswith(f"{err.op}: "), message


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_a_bad_input_names_the_users_line(case):
    """The message says ``at <this file>:<a line of the case>``, the line that called
    tf_numba (or, under a transform, the line of the traced function that failed)."""
    err = _raised(case)
    lines, first = inspect.getsourcelines(BAD_INPUTS[case])
    where = re.search(rf"\n  at {re.escape(__file__)}:(\d+) ", str(err))
    assert where, str(err)
    assert first <= int(where.group(1)) < first + len(lines), str(err)


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_a_bad_input_leaves_no_tf_numba_frame_in_the_traceback(case):
    err = _raised(case)
    frames = [frame.filename for frame in traceback.extract_tb(err.__traceback__)]
    assert frames and not [f for f in frames if f.startswith(f"{PACKAGE}{os.sep}")], frames


def test_shape_errors_are_type_errors_as_jax_and_value_errors_as_numpy():
    # JAX's data loading notebook catches the TypeError of a mismatched product
    for bad in (lambda: tnp.dot(np.ones((3, 4)), np.ones(5)),
                lambda: tnp.matmul(np.ones((3, 4)), np.ones((5, 2))),
                lambda: tnp.add(np.ones(3), np.ones(4))):
        with pytest.raises(TypeError) as err:
            bad()
        assert isinstance(err.value, ShapeError) and isinstance(err.value, ValueError)
