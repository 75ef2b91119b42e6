"""The lowering records (``kernel_vocab/rules.py``): stated with each primitive, keyed by the
primitive object, asked through ``fusion`` and ``lowerable``; the compiler tests no names."""
import ast
import pathlib

import numpy as np
import pytest
from schedule_checks import nests, numpy_steps

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.core.ir import ShapedArray
from tf_numba.core.primitive import RULES, Primitive, register
from tf_numba.lowering import library  # noqa: F401  (registers the library steps)
from tf_numba.kernel_vocab.rules import (Elementwise, IndexMap, Library, Reduction, fusion,
                                     lowerable)
from tf_numba.kernel_vocab.scalar_exprs import typed, written
from tf_numba.ops import contraction, elementwise, layout, reductions, special

LOWERING = pathlib.Path(tf.__file__).parent / "lowering"


def _eqn(f, *args, prim=None):
    """The first equation of ``f``'s program (of primitive ``prim``, when given)."""
    eqns = tf.make_program(f)(*args).eqns
    return next(e for e in eqns if prim is None or e.prim is prim)


def test_the_compiler_tests_no_primitive_names():
    """A rule is found by the primitive object: no module of the compiler compares
    ``eqn.prim.name`` (names appear only in messages and printed text)."""
    found = []
    for path in sorted(LOWERING.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            for side in [node.left, *node.comparators]:
                if (isinstance(side, ast.Attribute) and side.attr == "name"
                        and isinstance(side.value, ast.Attribute) and side.value.attr == "prim"):
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_each_fused_kind_is_stated_by_the_module_that_declares_the_primitive():
    assert type(RULES["lower"][elementwise.PRIMS["tanh"]]) is Elementwise
    assert type(RULES["lower"][special.PRIMS["xlogy"]]) is Elementwise
    assert type(RULES["lower"][reductions.reduce_max_p]) is Reduction
    assert type(RULES["lower"][layout.broadcast_in_dim_p]) is IndexMap
    assert type(RULES["lower"][layout.iota_p]) is IndexMap
    assert type(RULES["lower"][contraction.dot_general_p]) is Library
    # every elementwise primitive of the core vocabulary lowers
    assert all(type(RULES["lower"].get(p)) is Elementwise for p in elementwise.PRIMS.values())


def test_a_product_over_length_one_axes_fuses_and_any_other_is_a_library_step():
    product = contraction.dot_general_p
    outer = _eqn(lambda a, b: a @ b, np.ones((3, 1)), np.ones((1, 4)), prim=product)
    inner = _eqn(lambda a, b: a @ b, np.ones((3, 2)), np.ones((2, 4)), prim=product)
    assert type(fusion(outer)) is IndexMap
    assert fusion(inner) is None and lowerable(inner)


@pytest.mark.parametrize("f, arg, expected", [
    (tnp.tanh, np.ones(3), True),
    (tnp.sign, np.ones(3, complex), False),        # NumPy 2's complex sign: not in numba
    (lambda x: tnp.max(x, axis=0), np.ones(3, complex), False),
    (lambda x: tnp.max(x, axis=0), np.ones(3), True),
    (tnp.exp, np.ones(3, complex), True),
])
def test_lowerable_asks_the_record_about_dtypes(f, arg, expected):
    assert lowerable(_eqn(f, arg)) is expected


def test_a_special_function_without_a_lowering_runs_between_kernels():
    from tf_numba.scipy.special import erfinv
    eqn = _eqn(erfinv, np.full(3, 0.5))
    assert eqn.prim is special.PRIMS["erfinv"]
    assert not lowerable(eqn)


_cube_p = Primitive("test_rules.cube", lambda x: ShapedArray(x.shape, x.dtype),
                    lambda x: x * x * x)
register("lower", _cube_p, written(lambda a, i, o: typed(f"({a[0]} * {a[0]} * {a[0]})", o)))


def test_a_new_primitive_with_only_its_template_fuses_into_the_loop_nest():
    """Adding an elementwise primitive is its declaration and its template: the compiler
    fuses it with its neighbours into one loop."""
    f = tf.jit(lambda x: tnp.sum(_cube_p.bind(tnp.sin(x)) + 1.0), tiered=False)
    x = np.linspace(-2, 2, 50)
    np.testing.assert_allclose(f(x), np.sum(np.sin(x) ** 3 + 1.0), rtol=1e-13)
    (nest,) = nests(f, x)       # sin, the new op, the add and the sum: one loop
    assert _cube_p in [e.prim for e in nest.region.eqns] and not numpy_steps(f, x)
