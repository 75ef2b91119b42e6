"""Compile logs go through ``logging.getLogger("tf_numba")``: by default one warning per
slow compile of a user's function (named, with its kernel count, and the helpers it waited
for), no line of a helper's own;
with ``tf_numba_log_compiles`` every compile, with its key, seconds and worker."""
import logging
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import tf_numba as tf
from tf_numba import config
from tf_numba.lowering import compile_log


@pytest.fixture
def log_compiles(monkeypatch):
    def switch(on):
        monkeypatch.setitem(config._values, "tf_numba_log_compiles", on)
    switch(False)
    return switch


def _kernel(name):
    return {"module": compile_log.KERNEL_MODULE_PREFIX + name, "function": "kernel"}


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == "tf_numba" and r.levelno >= logging.WARNING]


def test_a_slow_compile_is_one_warning_naming_the_function_and_its_kernels(
        caplog, monkeypatch, log_compiles):
    monkeypatch.setattr(compile_log, "SLOW_COMPILE_SECONDS", 0.0)
    caplog.set_level(logging.DEBUG, logger="tf_numba")
    with compile_log.compiling_for("jit(loss)"):
        sent = [compile_log.requested(_kernel(k)) for k in ("aa", "bb", "cc")]
        compile_log.compiled_here("tf_numba.lowering.loops", "matvec", False, 2.0)
    for request, cached in zip(sent, (False, False, True)):
        assert not _warnings(caplog)                # not before the last kernel arrives
        compile_log.job_done(request, True, cached, 1.5, 4242)
    [line] = _warnings(caplog)
    assert re.match(r"compiling jit\(loss\) took \d+\.\d s \(2 kernels, 1 more from the "
                    r"disk cache, and 1 of tf_numba's helpers, compiled once for later runs; "
                    r"compiles over 0 s are logged, TF_NUMBA_LOG_COMPILES=1 logs every one\)",
                    line), line
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert "kernel aa compiled in 1.50 s by compile worker 4242" in debug
    assert "kernel cc found in the disk cache by compile worker 4242" in debug
    assert "helper tf_numba.lowering.loops.matvec compiled in 2.00 s in this process" in debug


def test_a_quick_compile_and_a_helper_say_nothing_by_default(caplog, log_compiles):
    caplog.set_level(logging.DEBUG, logger="tf_numba")
    compile_log.compiled_here("tf_numba.lowering.vmath", "tanh", False, 30.0)  # no call's
    with compile_log.compiling_for("jit(f)"):
        request = compile_log.requested(_kernel("dd"))
    compile_log.job_done(request, True, False, 0.5, 1)
    assert _warnings(caplog) == []


def test_helpers_compiled_during_a_call_count_in_its_time(caplog, monkeypatch, log_compiles):
    """A first call that waited for the library's helpers (a fresh installation, tiered=False)
    says so, though its one kernel was quicker than the threshold."""
    monkeypatch.setattr(compile_log, "SLOW_COMPILE_SECONDS", 1.0)
    with compile_log.compiling_for("jit(f)"):
        for helper in ("sum_rows", "tanh", "matvec"):
            compile_log.compiled_here("tf_numba.lowering.loops", helper, False, 2.0)
        compile_log.compiled_here(compile_log.KERNEL_MODULE_PREFIX + "ee", "kernel", True,
                                  0.5)
    [line] = _warnings(caplog)
    assert re.match(r"compiling jit\(f\) took \d+\.\d s \(1 kernel, and 3 of tf_numba's "
                    r"helpers, compiled once for later runs;", line), line


def test_log_compiles_logs_every_compile_with_key_seconds_and_worker(caplog, log_compiles):
    log_compiles(True)
    caplog.set_level(logging.WARNING, logger="tf_numba")
    compile_log.job_done(compile_log.requested(_kernel("ee")), True, False, 0.25, 77)
    compile_log.compiled_here("tf_numba.lowering.loops", "vecmat", False, 0.5)
    assert _warnings(caplog) == [
        "kernel ee compiled in 0.25 s by compile worker 77",
        "helper tf_numba.lowering.loops.vecmat compiled in 0.50 s in this process"]


def test_the_switches_start_from_the_environment_and_reject_bad_values(monkeypatch):
    monkeypatch.setenv("TF_NUMBA_LOG_COMPILES", "1")
    monkeypatch.setenv("TF_NUMBA_TRACEBACK_FILTERING", "off")
    assert config._initial("tf_numba_log_compiles") is True
    assert config._initial("tf_numba_traceback_filtering") == "off"
    with pytest.raises(tf.errors.ArgumentError, match="tf.config.update: no switch named"):
        tf.config.update("tf_numba_no_such_switch", True)
    with pytest.raises(tf.errors.ArgumentError, match="expected 'on' or 'off'"):
        tf.config.update("tf_numba_traceback_filtering", "sometimes")


def test_a_real_compile_is_logged_with_its_worker_and_no_stray_line(tmp_path):
    """A cold cache, a jitted function: the records a terminal shows, and nothing else."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""\
        import time
        import numpy as np
        import tf_numba as tf
        import tf_numba.numpy as tnp
        from tf_numba.lowering import compile_log

        tf.config.update("tf_numba_log_compiles", True)
        compile_log.SLOW_COMPILE_SECONDS = 0.0

        @tf.jit
        def step(x, y):
            return tnp.sum(tnp.sin(x) * y + 3.25)

        x = np.ones(5)
        deadline = time.monotonic() + 100
        while not tf.cache_info()["compiles"] and time.monotonic() < deadline:
            step(x, x)
            time.sleep(0.02)
        print(tf.cache_info()["compiles"])
        """))
    env = dict(os.environ, TF_NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TF_NUMBA_LOG_COMPILES", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=180)
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr
    lines = out.stderr.strip().splitlines()
    assert re.fullmatch(r"kernel [0-9a-f]{32} compiled in \d+\.\d\d s by compile worker \d+",
                        lines[0]), out.stderr
    assert re.match(r"compiling jit\(step\) took \d+\.\d s \(1 kernel;", lines[-1]), out.stderr
    assert all(line.startswith(("kernel ", "helper ", "compiling jit(step)"))
               for line in lines), out.stderr


def test_the_readmes_slow_compile_warning_is_the_loggers(caplog, monkeypatch, log_compiles):
    """The README quotes the warning and its threshold: both are the code's."""
    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    threshold = re.search(r"kernels took more than (\d+) s to compile", readme)
    assert threshold and float(threshold.group(1)) == compile_log.SLOW_COMPILE_SECONDS
    quoted = re.search(r"\(`(compiling jit\(loss\) took [^`]*)`\)", readme).group(1)
    pattern = re.escape(quoted).replace(r"\.\.\.", ".*").replace(r"6\.1", r"\d+\.\d")
    monkeypatch.setattr(compile_log, "SLOW_COMPILE_SECONDS", 0.0)
    with compile_log.compiling_for("jit(loss)"):
        sent = [compile_log.requested(_kernel(k)) for k in ("aa", "bb")]
    for request in sent:
        compile_log.job_done(request, True, False, 3.0, 4242)
    [line] = _warnings(caplog)
    assert re.fullmatch(pattern, line), (quoted, line)
