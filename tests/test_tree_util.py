"""tf_numba.tree_util and tf_numba.tree against jax.tree_util's semantics (structure,
leaf order, None as an empty subtree, prefixes, key paths), JAX as the oracle where
installed."""
import collections
import dataclasses
import operator

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import tree_util as tu
from tf_numba.errors import PytreeError

Point = collections.namedtuple("Point", "x y")

TREES = [
    1.0,
    None,
    (),
    [1, None, {"b": 3, "a": 2}],
    (1,),
    {"z": (1, 2), "a": [None, 3], "m": {"q": 4}},
    [Point(1, (2, 3)), Point(None, 4)],
    collections.OrderedDict([("b", 1), ("a", (2, None))]),
    collections.defaultdict(list, {"y": 1, "x": [2, 3]}),
    [[], {}, (None,), [None, [None]]],
]


@pytest.fixture(scope="module")
def jtu():
    return pytest.importorskip("jax").tree_util


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_matches_jax_leaves_order_and_structure(jtu, tree):
    leaves, treedef = tu.tree_flatten(tree)
    j_leaves, j_treedef = jtu.tree_flatten(tree)
    assert leaves == j_leaves
    assert repr(treedef) == repr(j_treedef)
    assert treedef.num_leaves == j_treedef.num_leaves
    assert treedef.num_nodes == j_treedef.num_nodes
    rebuilt = tu.tree_unflatten(treedef, [x * 10 for x in leaves])
    assert rebuilt == jtu.tree_unflatten(j_treedef, [x * 10 for x in leaves])
    assert type(rebuilt) is type(tree)


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_key_paths_match_jax(jtu, tree):
    ours = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(tree)]
    theirs = [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(tree)]
    assert ours == theirs


def test_is_leaf_stops_descent_and_can_keep_none(jtu):
    tree = [None, (1, 2), {"a": (3, 4)}]
    for pred in (lambda x: x is None, lambda x: isinstance(x, tuple)):
        assert tu.tree_leaves(tree, is_leaf=pred) == jtu.tree_leaves(tree, is_leaf=pred)
        assert repr(tu.tree_structure(tree, is_leaf=pred)) == repr(
            jtu.tree_structure(tree, is_leaf=pred))
    f = lambda x: x if x is None else len(x)  # noqa: E731
    pred = lambda x: isinstance(x, tuple) or x is None  # noqa: E731
    assert tu.tree_map(f, tree, is_leaf=pred) == jtu.tree_map(f, tree, is_leaf=pred)


@pytest.mark.parametrize("first,second", [
    ([1, 2], [(3, 4), 5]),          # the first tree is a prefix: whole subtrees passed
    ([1, 2], [None, 3]),            # None below a leaf of the first tree is a value
    ({"a": 1, "b": (2, 3)}, {"b": (20, 30), "a": 10}),
])
def test_tree_map_several_trees_prefix_semantics(jtu, first, second):
    f = lambda x, y: (x, y)  # noqa: E731
    assert tu.tree_map(f, first, second) == jtu.tree_map(f, first, second)


@pytest.mark.parametrize("first,second", [
    ([None, 1], [2, 3]),            # None in the first tree is a node: needs None
    ((1, 2), [3, 4]),               # tuple vs list
    ({"a": 1}, {"b": 1}),           # different keys
    ([1, 2], [1, 2, 3]),            # arity
    (Point(1, 2), (1, 2)),          # namedtuple vs tuple
])
def test_tree_map_structure_mismatch_raises_as_jax(jtu, first, second):
    with pytest.raises(ValueError):
        jtu.tree_map(lambda x, y: x, first, second)
    with pytest.raises(ValueError, match="tree structures differ") as info:   # as JAX's
        tu.tree_map(lambda x, y: x, first, second)
    assert isinstance(info.value, PytreeError)


def test_mismatch_error_names_the_key_path():
    with pytest.raises(PytreeError, match=r"\['w'\]\[1\]") as info:
        tu.tree_map(operator.add, {"w": [1, (2, 3)]}, {"w": [1, [2, 3]]})
    assert isinstance(info.value, ValueError)       # what JAX raises for it


def test_tree_reduce_all_and_structure(jtu):
    tree = {"a": [1, 2], "b": (3, None, 4)}
    assert tu.tree_reduce(operator.add, tree) == jtu.tree_reduce(operator.add, tree)
    assert tu.tree_reduce(operator.mul, tree, 10) == jtu.tree_reduce(operator.mul, tree, 10)
    assert tu.tree_all([True, (1, None)]) and not tu.tree_all([True, (0,)])
    assert tu.tree_structure(tree) == tu.tree_structure({"b": (0, None, 0), "a": [5, 6]})
    assert tu.tree_structure(tree) != tu.tree_structure({"a": [1, 2], "b": (3, 4)})
    assert hash(tu.tree_structure(tree)) == hash(tu.tree_structure({"b": (0, None, 0),
                                                                     "a": [5, 6]}))


def test_tree_transpose_matches_jax(jtu):
    tree = [{"w": 1, "b": 2}, {"w": 3, "b": 4}, {"w": 5, "b": 6}]
    outer, inner = tu.tree_structure([0, 0, 0]), tu.tree_structure({"w": 0, "b": 0})
    expected = jtu.tree_transpose(jtu.tree_structure([0, 0, 0]),
                                  jtu.tree_structure({"w": 0, "b": 0}), tree)
    assert tu.tree_transpose(outer, inner, tree) == expected == {"b": [2, 4, 6], "w": [1, 3, 5]}
    assert tu.tree_transpose(outer, None, tree) == expected
    with pytest.raises(PytreeError, match="tree_transpose"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0)), tree)


def test_tree_broadcast_matches_jax(jtu):
    prefix, full = [1, {"a": 2}], [(0, [0]), {"a": (0, None)}]
    assert tu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)


class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Box and (self.value, self.label) == (other.value, other.label)


tu.register_pytree_node(Box, lambda b: ((b.value,), b.label), lambda label, c: Box(c[0], label))


def test_registered_node_aux_is_structure():
    leaves, td = tu.tree_flatten([Box(1.0, "a"), Box((2.0, 3.0), "b")])
    assert leaves == [1.0, 2.0, 3.0]
    assert tu.tree_unflatten(td, [4.0, 5.0, 6.0]) == [Box(4.0, "a"), Box((5.0, 6.0), "b")]
    assert tu.tree_structure(Box(1.0, "a")) != tu.tree_structure(Box(1.0, "z"))
    assert tu.keystr(tu.tree_leaves_with_path(Box(1.0, "a"))[0][0]) == "[<flat index 0>]"


@tu.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_register_pytree_node_class_and_keys():
    out = tu.tree_map(lambda x: x + 1, Pair(1, [2]))
    assert type(out) is Pair and out.a == 2 and out.b == [3]

    class Named:
        def __init__(self, w):
            self.w = w
    tu.register_pytree_with_keys(Named, lambda n: (((tu.GetAttrKey("w"), n.w),), None),
                                 lambda _, c: Named(*c))
    (path, leaf), = tu.tree_leaves_with_path(Named(7))
    assert tu.keystr(path) == ".w" and leaf == 7


@tu.register_dataclass
@dataclasses.dataclass(frozen=True)
class Layer:
    w: object
    b: object
    act: str = dataclasses.field(default="tanh", metadata={"static": True})

    def __post_init__(self):
        # a check that rejects placeholders: unflatten must not run it (JAX does not)
        assert self.act in ("tanh", "relu")


def test_register_dataclass_matches_jax(jtu):
    jax = pytest.importorskip("jax")

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass(frozen=True)
    class JLayer:
        w: object
        b: object
        act: str = dataclasses.field(default="tanh", metadata={"static": True})

    ours, theirs = Layer(1, (2, 3), "relu"), JLayer(1, (2, 3), "relu")
    assert tu.tree_leaves(ours) == jtu.tree_leaves(theirs) == [1, 2, 3]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(ours)] == \
        [jtu.keystr(p) for p, _ in jtu.tree_leaves_with_path(theirs)]
    assert tu.tree_structure(ours) != tu.tree_structure(Layer(1, (2, 3), "tanh"))
    out = tu.tree_map(lambda x: x * 2, ours)
    assert out == Layer(2, (4, 6), "relu")


def test_register_dataclass_explicit_fields_and_errors():
    @dataclasses.dataclass
    class Opt:
        lr: float
        state: object
    tu.register_dataclass(Opt, data_fields=["state"], meta_fields=["lr"])
    assert tu.tree_leaves(Opt(0.1, [1, 2])) == [1, 2]
    with pytest.raises(PytreeError, match="both"):
        tu.register_dataclass(Opt, data_fields=["state"])
    with pytest.raises(PytreeError, match="not a dataclass"):
        tu.register_dataclass(Box)


def test_register_static_and_partial():
    @tu.register_static
    @dataclasses.dataclass(frozen=True)
    class Config:
        depth: int
    assert tu.tree_leaves([Config(3), 1.0]) == [1.0]
    assert tu.tree_structure(Config(3)) != tu.tree_structure(Config(4))
    p = tu.Partial(operator.add, 1.0)
    q = tu.tree_map(lambda x: x * 5, p)
    assert isinstance(q, tu.Partial) and q(1.0) == 6.0
    assert tu.tree_leaves(tu.Partial(tu.Partial(operator.add, 1.0), 2.0)) == [1.0, 2.0]


def test_unflatten_leaf_count_errors():
    td = tu.tree_structure((1, 2))
    with pytest.raises(PytreeError, match="too few leaves"):
        tu.tree_unflatten(td, [1])
    with pytest.raises(PytreeError, match="too many leaves"):
        tu.tree_unflatten(td, [1, 2, 3])


@pytest.mark.parametrize("tree", TREES + [[Box(1.0, "a"), Pair(2, (3, None))]],
                         ids=range(len(TREES) + 1))
def test_a_structure_unflattened_again_builds_what_the_walk_builds(tree):
    # the second unflatten of one treedef runs code written for it (pytree._write_builder)
    from tf_numba.core import pytree
    leaves, td = tu.tree_flatten(tree)
    fresh = list(range(len(leaves)))
    want = pytree._walk(td, fresh)
    for _ in range(3):
        got = tu.tree_unflatten(td, fresh)
        assert type(got) is type(want) and tu.tree_structure(got) == td
        assert tu.tree_leaves(got) == tu.tree_leaves(want) == fresh
        if isinstance(want, collections.defaultdict):
            assert got.default_factory is want.default_factory
    assert callable(td._builder)
    assert tu.tree_leaves(tu.tree_unflatten(td, tuple(fresh))) == fresh
    with pytest.raises(PytreeError, match="too many leaves"):
        tu.tree_unflatten(td, fresh + [0])


def test_a_written_builder_follows_a_new_registration():
    class Node:
        def __init__(self, a):
            self.a = a
    tu.register_pytree_node(Node, lambda n: ((n.a,), "first"), lambda aux, c: ("first", c))
    td = tu.tree_structure([Node(1)])
    assert tu.tree_unflatten(td, [2]) == tu.tree_unflatten(td, [2]) == [("first", [2])]
    tu.register_pytree_node(Node, lambda n: ((n.a,), "first"), lambda aux, c: ("second", c))
    assert tu.tree_unflatten(td, [2]) == [("second", [2])]


def test_a_structure_too_deep_to_write_is_walked():
    from tf_numba.core import pytree
    tree = 1.0
    for _ in range(300):
        tree = [tree]
    leaves, td = tu.tree_flatten(tree)
    for _ in range(3):
        assert tu.tree_unflatten(td, [2.0]) == tu.tree_map(lambda x: 2.0, tree)
    assert td._builder is pytree._TOO_DEEP


def test_tree_module_aliases_match_jax_tree(jtu):
    jax = pytest.importorskip("jax")
    tree = {"a": (1, None), "b": [2, 3]}
    assert tf.tree.map(lambda x: x * 2, tree) == jax.tree.map(lambda x: x * 2, tree)
    assert tf.tree.leaves(tree) == jax.tree.leaves(tree)
    assert repr(tf.tree.structure(tree)) == repr(jax.tree.structure(tree))
    assert tf.tree.reduce(operator.add, tree) == jax.tree.reduce(operator.add, tree)
    leaves, td = tf.tree.flatten(tree)
    assert tf.tree.unflatten(td, leaves) == tree
    assert tf.tree.all(tree) == jax.tree.all(tree)
    for name in tf.tree.__all__:
        assert hasattr(jax.tree, name), name


def test_pytree_params_through_grad_and_jit():
    params = {"layer": Layer(np.array([1.0, 2.0]), np.array(0.5)), "scale": (np.array(3.0),
                                                                             None)}

    def loss(p, x):
        layer = p["layer"]
        return tnp.sum(tnp.tanh(x * layer.w + layer.b)) * p["scale"][0]

    x = np.array([0.3, -0.2])
    g = tf.grad(loss)(params, x)
    assert tu.tree_structure(g) == tu.tree_structure(params)
    t = np.tanh(x * params["layer"].w + 0.5)
    np.testing.assert_allclose(g["layer"].w, 3.0 * (1 - t ** 2) * x, rtol=1e-12)
    np.testing.assert_allclose(g["scale"][0], np.sum(t), rtol=1e-12)
    step = tf.jit(lambda p, x: tu.tree_map(lambda a, b: a - 0.1 * b, p, tf.grad(loss)(p, x)),
                  tiered=False)
    new = step(params, x)
    expected = tu.tree_map(lambda a, b: a - 0.1 * b, params, g)
    for a, b in zip(tu.tree_leaves(new), tu.tree_leaves(expected)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert new["layer"].act == "tanh"
