"""An uncaught tf_numba error, as a terminal shows it: its traceback ends at the user's code
(tf_numba's frames removed, as JAX_TRACEBACK_FILTERING), unless filtering is turned off;
other exceptions and other code keep every frame."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import tf_numba

PACKAGE = str(pathlib.Path(tf_numba.__file__).parent) + os.sep


def _run(tmp_path, code, *, env=None, **modules):
    """The stderr of ``python script.py`` (which must fail), with ``modules`` beside it."""
    for name, text in modules.items():
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    environment = {k: v for k, v in os.environ.items() if k != "TF_NUMBA_TRACEBACK_FILTERING"}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(pathlib.Path(PACKAGE).parent), environment.get("PYTHONPATH", "")])
    environment.update(env or {})
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=tmp_path, env=environment, timeout=120)
    assert out.returncode == 1, out.stderr
    return out.stderr, str(script)


SHAPE_ERROR_UNDER_JIT = """\
    import numpy as np
    import tf_numba as tf
    import tf_numba.numpy as tnp

    @tf.jit
    def predict(w, x):
        return tnp.tanh(x @ w)

    predict(np.ones((3, 2)), np.ones((4, 5)))
    """


def _frames(stderr):
    return [line.strip() for line in stderr.splitlines() if line.strip().startswith("File ")]


def _filtered_frames(stderr):
    """The frames of a filtered traceback, which must be the user's alone, and which must say
    how to see tf_numba's: an exception note, or on Python 3.10 (no notes; its bare
    ``raise`` keeps the traceback it caught) the one frame of tf_numba's that raised the
    error again, whose line says it."""
    frames = _frames(stderr)
    ours = [f for f in frames if PACKAGE in f]
    assert len(ours) == (0 if sys.version_info >= (3, 11) else 1), stderr
    assert "TF_NUMBA_TRACEBACK_FILTERING=off shows them" in stderr
    return [f for f in frames if PACKAGE not in f]


def test_a_tf_numba_error_shows_only_the_users_frames(tmp_path):
    stderr, script = _run(tmp_path, SHAPE_ERROR_UNDER_JIT)
    assert _filtered_frames(stderr) == [f'File "{script}", line 9, in <module>',
                                        f'File "{script}", line 7, in predict'], stderr
    assert "ShapeError: matmul: Input operand 1" in stderr
    assert f"  at {script}:7 (in predict)" in stderr


@pytest.mark.parametrize("call, error", [
    ("predict.lower(np.ones((3, 2)), np.ones((4, 5)))", "ShapeError: matmul: Input operand 1"),
    ("predict.lower(np.ones((3, 2)), np.ones((4, 3))).compile(np.ones((3, 2)), np.ones((4, 5)))",
     "SpecializationMismatch: compile: input 1 axis 1 was prepared as 3, got 5")])
def test_a_jitted_functions_lower_and_compile_are_entry_points(tmp_path, call, error):
    """``f.lower(*args)`` traces as a call does; ``.compile(*args)`` with arguments of
    another shape than the lowered one says so, as ``Runtime.run`` does."""
    code = SHAPE_ERROR_UNDER_JIT.replace("predict(np.ones((3, 2)), np.ones((4, 5)))", call)
    stderr, script = _run(tmp_path, code)
    frames = _filtered_frames(stderr)
    assert frames[0] == f'File "{script}", line 9, in <module>', stderr
    assert error in stderr


@pytest.mark.parametrize("how", ["environment", "config"])
def test_filtering_off_shows_tf_numba_frames(tmp_path, how):
    if how == "environment":
        stderr, script = _run(tmp_path, SHAPE_ERROR_UNDER_JIT,
                              env={"TF_NUMBA_TRACEBACK_FILTERING": "off"})
    else:
        code = SHAPE_ERROR_UNDER_JIT.replace(
            "import tf_numba as tf\n",
            "import tf_numba as tf\n    tf.config.update('tf_numba_traceback_filtering', 'off')\n")
        stderr, script = _run(tmp_path, code)
    frames = _frames(stderr)
    assert sum(PACKAGE in f for f in frames) >= 3, stderr
    assert f'File "{script}"' in frames[0] and any("in predict" in f for f in frames)
    assert "TF_NUMBA_TRACEBACK_FILTERING=off" not in stderr


def test_an_error_that_is_not_tf_numbas_keeps_every_frame(tmp_path):
    """The user's own exception raised inside a jitted function passes through tf_numba's
    tracing frames; they stay (as would a tf_numba bug's, which is not a TfNumbaError)."""
    stderr, script = _run(tmp_path, """\
        import numpy as np
        import tf_numba as tf

        @tf.jit
        def f(x):
            raise KeyError("the user's own")

        f(np.ones(3))
        """)
    frames = _frames(stderr)
    assert sum(PACKAGE in f for f in frames) >= 3, stderr
    assert frames[-1] == f'File "{script}", line 6, in f'
    assert "TF_NUMBA_TRACEBACK_FILTERING" not in stderr


def test_a_library_between_the_user_and_tf_numba_keeps_its_frames(tmp_path):
    """A library the user called (here ``mylib``), which calls tf_numba and is called back
    by it, keeps its frames; only tf_numba's go."""
    stderr, script = _run(tmp_path, """\
        import numpy as np
        import mylib

        mylib.batched_add(np.ones(3), np.ones(4))
        """, mylib="""\
        import tf_numba as tf

        def _add(a, b):
            return a + b

        def batched_add(a, b):
            return tf.jit(tf.vmap(_add))(a, b)
        """)
    library = str(pathlib.Path(script).parent / "mylib.py")
    assert _filtered_frames(stderr) == [f'File "{script}", line 4, in <module>',
                                        f'File "{library}", line 7, in batched_add'], stderr
    assert "ShapeError: vmap: got different sizes along the mapped axes" in stderr


def test_an_error_inside_a_traced_function_keeps_the_users_frames_in_order(tmp_path):
    """grad of a function that calls a helper that misuses vmap: every user frame between
    the call and the bad line, in order; none of tf_numba's."""
    stderr, script = _run(tmp_path, """\
        import numpy as np
        import tf_numba as tf
        import tf_numba.numpy as tnp

        def helper(x):
            return tf.vmap(lambda a, b: a * b)(x, x[:2])

        def loss(x):
            return tnp.sum(helper(x))

        tf.grad(loss)(np.ones(3))
        """)
    assert _filtered_frames(stderr) == [f'File "{script}", line 11, in <module>',
                                        f'File "{script}", line 9, in loss',
                                        f'File "{script}", line 6, in helper'], stderr


def test_a_function_the_user_hands_to_tf_numba_keeps_its_frame(tmp_path):
    """tree_map calls the user's function, which misuses tnp: the user's two frames stay,
    tree_map's and tnp's go."""
    stderr, script = _run(tmp_path, """\
        import numpy as np
        import tf_numba as tf
        import tf_numba.numpy as tnp

        def square(x):
            return tnp.reshape(x, (2, 2))

        tf.tree_util.tree_map(square, {"w": np.ones(3)})
        """)
    assert _filtered_frames(stderr) == [f'File "{script}", line 8, in <module>',
                                        f'File "{script}", line 6, in square'], stderr
    assert "ShapeError: reshape: cannot reshape" in stderr


def test_the_users_exception_being_handled_stays_as_the_context(tmp_path):
    """A tf_numba error raised while the user's code handles an exception of its own shows
    that exception first, as Python does ("During handling of ...")."""
    stderr, script = _run(tmp_path, """\
        import numpy as np
        import tf_numba.numpy as tnp

        try:
            {}["missing"]
        except KeyError:
            tnp.reshape(np.ones(3), (2, 2))
        """)
    assert "KeyError: 'missing'" in stderr
    assert "During handling of the above exception, another exception occurred" in stderr
    assert f'File "{script}", line 7, in <module>' in stderr


def test_every_public_function_is_an_entry_point():
    """What the user can call by name in a public module (docs/reference.md's modules) is an
    entry point: its errors name the user's line and lose tf_numba's frames. (A public
    module ends with ``mark_entry_points(globals())``.)"""
    from tf_numba import _reference, tracebacks
    missing = []
    for module in _reference.public_modules():
        for name in module.__all__:
            value = getattr(module, name)
            calls = [(name, value)] if tracebacks._is_own_function(value) else []
            if isinstance(value, type) and not issubclass(value, BaseException):
                calls = [(f"{name}.{attr}", method) for attr, method in vars(value).items()
                         if tracebacks._is_own_function(method)
                         and tracebacks._takes_arguments(method)
                         and (not attr.startswith("_") or attr in ("__init__", "__call__"))]
            missing += [f"{module.__name__}: {shown}" for shown, fn in calls
                        if fn.__code__ not in tracebacks._ENTRY_POINTS]
    assert not missing, "\n".join(missing)
