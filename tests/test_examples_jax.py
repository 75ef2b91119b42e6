"""The examples written the JAX way compute JAX's losses: 20 training steps of each, run
on tf_numba and on JAX (the example's own text with its imports pointed at JAX,
``examples/in_jax.py``), from the same initial parameters and with the same batches and
keys, agree to 1e-8 relative in float64. Small batches keep each test short.

The transformer's losses agree to ~1e-9, not to the last bits as the others': JAX's
``dot_product_attention`` computes its softmax in float32 whatever the inputs' dtype,
tf_numba's in the inputs' (float64)."""
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
from in_jax import load_example, train_losses  # noqa: E402

STEPS = 20


@pytest.mark.parametrize("name, batch", [("cnn_digits", 16), ("vae", 16), ("transformer", 16)])
def test_example_computes_jaxs_losses(name, batch):
    pytest.importorskip("jax")
    pytest.importorskip("sklearn")
    ours, theirs = load_example(name), load_example(name, "jax")
    # tf_numba's initial parameters for both: JAX's eager initialization costs seconds
    params = ours.init_params(ours.random.PRNGKey(1))
    got = train_losses(ours, params, STEPS, batch)
    want = train_losses(theirs, params, STEPS, batch)
    np.testing.assert_allclose(got, want, rtol=1e-8)
    assert got[-1] < got[0], got      # it learns: the check is on a loss that moves
