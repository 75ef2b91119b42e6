"""Helpers of the jit tests: compare compiled results within a few ulps of the interpreter's
or NumPy's; jit without tiering; run a child Python with a given kernel cache."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import tf_numba as tf

# numba's libm and NumPy's SIMD loops may round transcendental functions differently
ULPS = 8


def assert_ulp_close(actual, expected, ulps=ULPS):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = np.finfo(actual.real.dtype).eps * ulps
    np.testing.assert_allclose(actual, expected, rtol=scale, atol=scale, equal_nan=True)


def compiled(fn, **kw):
    return tf.jit(fn, tiered=False, **kw)


def run_child(code, env):
    """Run ``code`` (dedented) in a fresh Python with ``env``."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)


def child_env(cache_dir):
    """The environment of a child that imports this checkout's tf_numba with its kernel
    cache in ``cache_dir``."""
    env = dict(os.environ, TF_NUMBA_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(tf.__file__)),
                                         env.get("PYTHONPATH", "")])
    return env
