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


@pytest.mark.parametrize("name, steps", [("vae.py", 30), ("transformer.py", 30),
                                        ("logistic_if.py", 20)])
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
    dump = done.stdout.split("the kernel it wrote (docs/schedule.md):\n", 1)[1]
    assert re.match(r"== schedule: 1 segment, serial variant ==\n"
                    r"segment 0: kernel [0-9a-f]{32} \(", dump), dump[:200]
    assert "\n== source ==\n# segment 0: kernel " in dump and "def kernel(" in dump
    # what reaches stderr comes through the tf_numba logger: at most the slow-compile line
    assert all(line.startswith("compiling jit(loss) took ")
               for line in done.stderr.splitlines()), done.stderr


@pytest.mark.parametrize("name, args", [
    ("quickstart.py", []), ("runtime_tour.py", []), ("cnn_digits.py", ["--steps", "20"]),
    ("vae.py", ["--steps", "5"]), ("logistic_if.py", ["--steps", "5"]),
    ("dask_train.py", ["--rows", "20000", "--steps", "3"])])
def test_example_leaves_no_process_behind(name, args, tmp_path):
    """On an empty kernel cache (so a compile is in flight when the script ends), no
    process the example started, compile workers and Dask's alike, is running 2 s after it
    exits. They are found by a mark in their environment, which every descendant inherits,
    not by their names."""
    import os
    import time
    if name == "dask_train.py":
        pytest.importorskip("distributed")
    mark = f"{os.getpid()}-{name}"
    env = dict(os.environ, TF_NUMBA_CACHE_DIR=str(tmp_path), TF_NUMBA_EXAMPLE_RUN=mark)
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    ended = time.monotonic()
    assert done.returncode == 0, done.stderr
    while _marked(mark) and time.monotonic() < ended + 2.0:
        time.sleep(0.05)
    assert not _marked(mark), f"{name} left processes {_marked(mark)} running"


def _marked(mark):
    """The live processes whose environment holds ``TF_NUMBA_EXAMPLE_RUN=mark``."""
    import os
    want = f"TF_NUMBA_EXAMPLE_RUN={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] != b"Z":
                    found.append(int(entry))
        except (OSError, IndexError):
            continue
    return found
