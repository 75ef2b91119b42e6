"""The README's and docs/'s Python blocks run as pasted, in order, in one session per page
(as a reader would paste them); a block shown with the traceback it ends in prints that
traceback when run as a script; the errors the README describes say what it says; and its
first screen keeps the two set-up-and-go commands."""
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, TfIndexError, TfNumbaError

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
# a python block followed by the traceback it ends in
FAILING = r"```python\n((?:(?!```).)*)```\n\n```text\n(Traceback (?:(?!```).)*)```"


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), re.S)


DOCS = sorted(README.parent.glob("docs/*.md"))
FENCED = r"```(\w*)\n(.*?)```"


def test_every_fenced_block_is_one_the_tests_read():
    """Python blocks run (here; docs/schedule.md's printed schedule is compared in
    tests/test_schedule.py), text blocks are what one of them prints, bash blocks are
    commands (the README's set-up, checked here, and its Dask cluster's, which needs a
    cluster): no block of another kind goes untested."""
    for page in [README, *DOCS]:
        kinds = {kind for kind, _ in re.findall(FENCED, page.read_text(), re.S)}
        assert kinds <= {"python", "text", "bash"}, (page.name, kinds)


@pytest.mark.parametrize("page", [p for p in DOCS if "```python" in p.read_text()],
                         ids=lambda p: p.name)
def test_docs_python_blocks_run_in_order(page):
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    namespace = {"__name__": "docs"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{page.name} python block {i}", "exec"), namespace)


def test_readme_python_blocks_run_in_order(capsys):
    namespace = {"__name__": "readme"}
    failing = {code for code, _ in re.findall(FAILING, README.read_text(), re.S)}
    blocks = [code for code in _blocks("python") if code not in failing]
    assert blocks
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md python block {i}", "exec"), namespace)
    assert "dot_general" in capsys.readouterr().out     # the printed gradient program
    assert namespace["g"].shape == namespace["w"].shape


def test_readme_starts_with_the_two_setup_commands():
    first = _blocks("bash")[0]
    commands = [line for line in first.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2 and all("python3 -m venv .venv" in c for c in commands)
    assert "examples/quickstart.py" in commands[0] and "pytest" in commands[1]
    assert "../shared" not in README.read_text()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the last line is an exception note, "
                    "which Python 3.11 added (3.10 shows tf_numba's frame that raised the "
                    "error again instead: tracebacks.RAISE_AGAIN)")
def test_readme_tracebacks_are_what_a_terminal_shows(tmp_path):
    """Run as ``python example.py``, each failing block prints the README's traceback
    (the column markers under a line, which vary with Python's version, aside)."""
    shown = re.findall(FAILING, README.read_text(), re.S)
    assert shown
    for code, traceback in shown:
        (tmp_path / "example.py").write_text(code)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TF_NUMBA_TRACEBACK")}
        out = subprocess.run([sys.executable, "example.py"], capture_output=True, text=True,
                             cwd=tmp_path, env=env, timeout=120)
        printed = out.stderr.replace(f"{tmp_path}{os.sep}", "")
        printed = "".join(line for line in printed.splitlines(keepends=True)
                          if not re.fullmatch(r"\s*[~^]+\s*", line))
        assert printed == traceback


def _raised(fn, *args):
    with pytest.raises(TfNumbaError) as info:
        fn(*args)
    return info.value, str(info.value)


def test_readme_advice_for_python_control_flow_under_jit():
    """"raises ConcretizationError with the advice (tnp.where, lax.cond, or static_argnums /
    static_argnames ...)\""""
    err, text = _raised(tf.jit(lambda x: x if x > 0 else -x), 1.0)
    assert isinstance(err, ConcretizationError)
    for advice in ("tnp.where", "lax.cond", "static_argnums", "static_argnames"):
        assert advice in text
    assert f"at {__file__}:" in text


def test_readme_numpy_function_on_a_traced_value_names_tnp_and_the_line():
    """"np.sin(x) on a traced x raises an error naming tnp.sin and your line\""""
    _, text = _raised(tf.jit(lambda x: np.sin(x)), np.ones(3))
    assert "tnp.sin" in text and f"at {__file__}:" in text


def test_readme_index_out_of_range_names_index_size_and_line_under_jit():
    """"TfIndexError names the index, the size and your line, under jit too\""""
    err, text = _raised(tf.jit(lambda x: x[7]), np.ones(3))
    assert isinstance(err, TfIndexError)
    assert "7" in text and "size 3" in text and f"at {__file__}:" in text


def test_readme_float16_computes_in_float32_stored_as_float16():
    """"float16 computes in float32 and is stored as float16, as NumPy's half loops" """
    x = np.linspace(0, 3, 7).astype(np.float16)
    out = tf.jit(lambda x: tnp.sin(x) * 3)(x)
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.sin(x) * np.float16(3))


def test_readme_uint8_plus_one_stays_uint8_and_wraps():
    """"`uint8_array + 1` stays uint8 and wraps" """
    x = np.array([0, 255], np.uint8)
    out = tf.jit(lambda x: x + 1)(x)
    assert out.dtype == np.uint8 and out.tolist() == [1, 0]
