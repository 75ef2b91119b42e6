"""Load an example of this folder as a module, on tf_numba or, with its source unchanged,
on JAX: every ``import tf_numba...`` in it then imports ``jax...`` instead (the examples
use only names JAX has), and JAX computes in float64, as tf_numba does.

    >>> cnn = load_example("cnn_digits")                  # the program as written
    >>> cnn_jax = load_example("cnn_digits", "jax")        # the same text on JAX

perf/examples_bench.py times the two side by side; tests/test_examples_jax.py checks that
they compute the same losses.
"""
import builtins
import importlib.util
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def _imports_jax_for_tf_numba(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and (name == "tf_numba" or name.startswith("tf_numba.")):
        name = "jax" + name[len("tf_numba"):]
    return builtins.__import__(name, globals, locals, fromlist, level)


def load_example(name, library="tf_numba"):
    """The module ``examples/<name>.py``, run on ``library`` ("tf_numba" or "jax")."""
    if library not in ("tf_numba", "jax"):
        raise ValueError(f"library must be 'tf_numba' or 'jax', not {library!r}")
    spec = importlib.util.spec_from_file_location(f"{name}_on_{library}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    if library == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
        module.__builtins__ = dict(vars(builtins), __import__=_imports_jax_for_tf_numba)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def train_losses(example, params, steps, batch, seed=0):
    """The losses of ``steps`` training steps of ``example`` (a loaded module) from
    ``params``, on its own batches and keys: its ``update(i, opt_state, *batch, key)``,
    with the step keys split from ``PRNGKey(seed)`` as its ``main`` does."""
    key = example.random.PRNGKey(seed)
    key, _ = example.random.split(key)
    opt_state = example.opt_init(params)
    losses = []
    for i, data in zip(range(steps), example.train_batches(batch, seed)):
        key, step_key = example.random.split(key)
        value, opt_state = example.update(i, opt_state, *data, step_key)
        losses.append(float(value))
    return losses
