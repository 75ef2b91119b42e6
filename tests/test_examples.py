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
