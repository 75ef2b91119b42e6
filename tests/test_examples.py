"""The training examples run as scripts (`--steps N`), exit 0, and learn: their final
loss is finite and below the first loss they print."""
import math
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def _run(name, steps):
    # the suite's own environment, so the kernel cache is the one the other tests use
    done = subprocess.run([sys.executable, str(EXAMPLES / name), "--steps", str(steps)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _losses(out):
    """The first loss of a step line and the final loss."""
    first = re.search(r"^step\s+0\b.*?\bloss\s+(\S+)", out, re.M)
    final = re.search(r"^final loss (\S+)", out, re.M)
    assert first and final, out
    return float(first.group(1)), float(final.group(1).rstrip(","))


@pytest.mark.parametrize("name, steps", [("vae.py", 30), ("logistic_if.py", 20)])
def test_example_trains(name, steps):
    first, final = _losses(_run(name, steps))
    assert math.isfinite(final) and final < first, (first, final)


def test_logistic_if_shows_the_jit_error():
    out = _run("logistic_if.py", 2)
    assert "under tf.jit: ConcretizationError:" in out


def test_quickstart_runs_and_prints_its_kernel_under_its_header():
    done = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    dump = done.stdout.split("The generated kernel:\n", 1)[1]
    assert re.match(r"# segment 0: kernel [0-9a-f]{32} \(", dump), dump[:200]
    assert "def kernel(" in dump
    # what reaches stderr comes through the tf_numba logger: at most the slow-compile line
    assert all(line.startswith("compiling jit(loss) took ")
               for line in done.stderr.splitlines()), done.stderr
