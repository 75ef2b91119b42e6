"""JAX's pytree utilities (``jax.tree_util``) over tf_numba's pytrees (``core/pytree.py``).

A pytree is a nest of tuples, lists, dicts (children in sorted key order), OrderedDicts,
namedtuples, registered dataclasses and classes, and ``None`` (a node with no children);
anything else is a leaf.

>>> tree_map(lambda w, g: w - 0.1 * g, {"w": 1.0, "b": 2.0}, {"w": 10.0, "b": 10.0})
{'b': 1.0, 'w': 0.0}
"""
import dataclasses
import functools

from .core import pytree
from .core.pytree import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey, flatten_up_to,
                          keystr, tree_map)
from .core.pytree import TreeDef as PyTreeDef
from .errors import PytreeError

__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey",
           "all_leaves", "keystr", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static",
           "tree_all", "tree_broadcast", "tree_flatten", "tree_flatten_with_path",
           "tree_leaves", "tree_leaves_with_path", "tree_map", "tree_map_with_path",
           "tree_reduce", "tree_structure", "tree_transpose", "tree_unflatten",
           "treedef_children", "treedef_is_leaf", "tree_reduce_associative", "is_tree_node",
           "flatten_one_level", "flatten_one_level_with_keys", "treedef_tuple", "KeyPath"]

_no_initializer = object()


def tree_flatten(tree, is_leaf=None):
    """``(leaves, treedef)``: ``tree_flatten({"a": 1, "b": (2, 3)})[0] == [1, 2, 3]``.

    ``is_leaf(x)`` true stops the descent at ``x``, which becomes one leaf.
    """
    return pytree.flatten(tree, is_leaf)


def tree_unflatten(treedef, leaves):
    """The tree of structure ``treedef`` holding ``leaves``: the inverse of ``tree_flatten``."""
    return pytree.unflatten(treedef, leaves)


def tree_leaves(tree, is_leaf=None):
    """The leaves, left to right: ``tree_leaves([1, None, {"b": 3, "a": 2}]) == [1, 2, 3]``."""
    return pytree.flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The ``PyTreeDef`` of ``tree``: ``tree_structure((1, [2]))`` is ``PyTreeDef((*, [*]))``."""
    return pytree.flatten(tree, is_leaf)[1]


def tree_reduce(function, tree, initializer=_no_initializer, is_leaf=None):
    """``functools.reduce`` over the leaves: ``tree_reduce(operator.add, [1, (2, 3)]) == 6``."""
    leaves = pytree.flatten(tree, is_leaf)[0]
    if initializer is _no_initializer:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(operation, tree, *, identity=_no_initializer, is_leaf=None):
    """``operation`` folded over the leaves as a balanced tree of pairs (an associative
    operation gives the same as ``tree_reduce``, in depth log n), as
    ``jax.tree.reduce_associative``; ``identity`` is the result of no leaves.

    >>> tree_reduce_associative(operator.add, [1, (2, 3), 4])
    10
    """
    leaves = pytree.flatten(tree, is_leaf)[0]
    if not leaves:
        if identity is _no_initializer:
            raise PytreeError("a tree of no leaves needs an identity to reduce to",
                              op="tree_reduce_associative")
        return identity
    while len(leaves) > 1:
        paired = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = paired + ([leaves[-1]] if len(leaves) % 2 else [])
    return leaves[0]


def tree_all(tree, *, is_leaf=None):
    """Whether every leaf is true: ``tree_all([True, (1, None)])`` is True."""
    return all(pytree.flatten(tree, is_leaf)[0])


def all_leaves(iterable, is_leaf=None):
    """Whether every element of ``iterable`` is a leaf (not a pytree node)."""
    return all(pytree.flatten(x, is_leaf)[1] == pytree.LEAF for x in iterable)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], treedef)``; ``keystr(key_path)`` spells a path."""
    return pytree.flatten_with_path(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    """``[(key_path, leaf), ...]``: ``tree_leaves_with_path({"w": 1})[0][0] == (DictKey("w"),)``."""
    return pytree.flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(fn, tree, *rest, is_leaf=None):
    """``fn(key_path, leaf, *other_leaves)`` leaf-wise, as ``tree_map``.

    >>> tree_map_with_path(lambda p, x: keystr(p), {"w": 1})
    {'w': "['w']"}
    """
    pairs, treedef = pytree.flatten_with_path(tree, is_leaf)
    others = [flatten_up_to(treedef, r) for r in rest]
    return pytree.unflatten(treedef, [fn(p, x, *xs) for (p, x), *xs
                                      in zip(pairs, *others)])


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
    """``prefix_tree`` with each leaf repeated over the matching subtree of ``full_tree``.

    >>> tree_broadcast([1, 2], [(0, 0), 0])
    [(1, 1), 2]
    """
    leaves, treedef = pytree.flatten(prefix_tree, is_leaf)
    subtrees = flatten_up_to(treedef, full_tree)
    return pytree.unflatten(treedef, [tree_map(lambda _, leaf=leaf: leaf, sub, is_leaf=is_leaf)
                                      for leaf, sub in zip(leaves, subtrees)])


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """An outer tree of inner trees turned into an inner tree of outer trees.

    ``inner_treedef=None`` takes the structure of the first inner tree.

    >>> tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
    """
    if inner_treedef is None:
        inner_treedef = tree_structure(flatten_up_to(outer_treedef, pytree_to_transpose)[0])
    leaves, treedef = pytree.flatten(pytree_to_transpose)
    expected = outer_treedef.compose(inner_treedef)
    if treedef != expected:
        raise PytreeError(f"the tree has structure {treedef}, which is not "
                          f"{outer_treedef} of {inner_treedef} ({expected})",
                          op="tree_transpose")
    n_inner = inner_treedef.num_leaves
    per_outer = [leaves[i:i + n_inner] for i in range(0, len(leaves), n_inner)]
    return pytree.unflatten(inner_treedef, [pytree.unflatten(outer_treedef, list(column))
                                            for column in zip(*per_outer)])


def treedef_children(treedef):
    """The child structures of the root node of ``treedef``."""
    return list(treedef.children)


def treedef_is_leaf(treedef):
    """Whether ``treedef`` is a single leaf (or a node without children, such as None)."""
    return treedef.num_nodes == 1


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Make ``nodetype`` a pytree node, as ``jax.tree_util.register_pytree_node``.

    ``flatten_func(x) -> (children, aux_data)``, ``unflatten_func(aux_data, children) -> x``;
    ``aux_data`` is hashable and compared when structures are compared.

    >>> register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(*c))
    """
    keys = None
    if flatten_with_keys_func is not None:
        def keys(x):
            return [k for k, _ in flatten_with_keys_func(x)[0]]
    pytree.register_pytree_node(nodetype, flatten_func, unflatten_func, keys)
    return nodetype


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register ``nodetype`` with named children: ``flatten_with_keys(x) -> (((key, child),
    ...), aux_data)``; the keys appear in the paths of ``tree_flatten_with_path``."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    return register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten(self)`` and ``cls.tree_unflatten(aux, children)``
    (a classmethod) make it a pytree node."""
    pytree.register_pytree_node(cls, cls.tree_flatten, cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: as ``register_pytree_node_class`` with ``cls.tree_flatten_with_keys``."""
    return register_pytree_with_keys(cls, cls.tree_flatten_with_keys, cls.tree_unflatten,
                                     getattr(cls, "tree_flatten", None))


def register_static(cls):
    """Make instances of ``cls`` nodes with no children: a value lives in the structure (it
    must be hashable), not in the leaves."""
    pytree.register_pytree_node(cls, lambda x: ((), x), lambda x, _: x, lambda _: [])
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Make a dataclass a pytree node: ``data_fields`` are children, ``meta_fields`` are
    static (part of the structure). Without field lists, fields declared with
    ``dataclasses.field(metadata={"static": True})`` are static and the others data.
    Usable as a decorator.

    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Layer:
    ...     w: np.ndarray
    ...     act: str = dataclasses.field(default="tanh", metadata={"static": True})
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise PytreeError("it is not a dataclass; pass data_fields and meta_fields",
                              op=f"register_dataclass({nodetype.__name__})")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise PytreeError("give both data_fields and meta_fields, or neither",
                          op=f"register_dataclass({nodetype.__name__})")
    return pytree.register_dataclass(nodetype, data_fields, meta_fields)


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the function is structure, the bound arguments
    are children, so a Partial can be passed through ``jit`` and ``vmap``.

    >>> tree_leaves(Partial(operator.add, 1.0))
    [1.0]
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):   # flatten nested partials into one
            args, kw = func.args + args, {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


pytree.register_pytree_node(
    Partial, lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))


def is_tree_node(typ):
    """Whether ``typ`` is a pytree node type (a container of subtrees) rather than a leaf
    type, as ``jax.tree_util.is_tree_node``."""
    return typ in pytree._registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree):
    """``(children, aux)`` of one pytree node, its subtrees not flattened further, as
    ``jax.tree_util.flatten_one_level``: ``({'a': [1, 2], 'b': 3}) -> ([[1, 2], 3],
    ('a', 'b'))``. A leaf is a ValueError."""
    kind, fns = pytree._node_of(tree)
    if kind is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = fns[0](tree)
    return list(children), aux


def flatten_one_level_with_keys(tree):
    """``([(key, child), ...], aux)`` of one pytree node, as
    ``jax.tree_util.flatten_one_level_with_keys``."""
    children, aux = flatten_one_level(tree)
    keys = pytree._keys_of(type(tree), tree, len(children))
    return list(zip(keys, children)), aux


def treedef_tuple(treedefs):
    """The structure of a tuple whose items have the structures ``treedefs``."""
    children = tuple(treedefs)
    return pytree.TreeDef(tuple, None, children)


# a tree's key path: a tuple of DictKey, SequenceKey, GetAttrKey or FlattenedIndexKey
KeyPath = tuple


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers

