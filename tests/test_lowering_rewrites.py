"""Program rewrites made before lowering: same values, code that compiles better."""
import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.transforms.lowering_rewrites import inline_custom_calls

SHIFT = np.linspace(0.0, 1.0, 4)        # a constant the custom function's body closes over


@tf.custom_vjp
def _scaled_softplus(x):
    return tnp.log1p(tnp.exp(x + SHIFT)) * 1.5


_scaled_softplus.defvjp(lambda x: (_scaled_softplus(x), x),
                        lambda x, g: (g * 1.5 / (1.0 + tnp.exp(-(x + SHIFT))),))


def test_a_custom_vjp_function_is_inlined_and_compiles_with_the_rest():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    program = tf.make_program(lambda x: tnp.sum(_scaled_softplus(x) ** 2))(x)
    assert any(e.prim.name == "custom_vjp_call" for e in program.eqns)
    inlined = inline_custom_calls(program)
    assert not any(e.prim.name == "custom_vjp_call" for e in inlined.eqns)
    f = tf.jit(lambda x: tnp.sum(_scaled_softplus(x) ** 2), tiered=False)
    want = np.sum((np.log1p(np.exp(x + SHIFT)) * 1.5) ** 2)
    np.testing.assert_allclose(f(x), want, rtol=1e-13)
    assert "NumPy step" not in f.lower(x).as_text()          # one kernel, no host step
    # the rule still applies to transforms taken before jit
    g = tf.jit(tf.grad(lambda x: tnp.sum(_scaled_softplus(x))), tiered=False)
    np.testing.assert_allclose(g(x), 1.5 / (1.0 + np.exp(-(x + SHIFT))), rtol=1e-13)
