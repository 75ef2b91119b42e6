"""Pytrees: nested tuples, lists, dicts, namedtuples and None, plus user-registered types.

``flatten(tree) -> (leaves, treedef)`` and ``unflatten(treedef, leaves)``. A ``TreeDef`` is
hashable and comparable, so it can be part of a dispatch key.
"""
from ..errors import PytreeError

_registry = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn):
    """Register ``cls``: ``flatten_fn(x) -> (children, aux)``, ``unflatten_fn(aux, children)``.

    ``aux`` must be hashable; it is stored in the TreeDef.
    """
    _registry[cls] = (flatten_fn, unflatten_fn)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ((), None), lambda _, c: None)


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class TreeDef:
    """The structure of a pytree: a node type, its aux data and child TreeDefs (or a leaf)."""
    __slots__ = ("kind", "aux", "children", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind = kind
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        self._hash = hash((kind, aux, children))

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self.kind is other.kind
                and self.aux == other.aux and self.children == other.children)

    def __repr__(self):
        if self.kind is None:
            return "*"
        return f"{self.kind.__name__}({', '.join(map(repr, self.children))})"


LEAF = TreeDef(None, None, ())


def _node_of(x):
    cls = type(x)
    if cls in _registry:
        return cls, _registry[cls]
    if _is_namedtuple(x):
        return cls, (lambda t: (tuple(t), None), lambda _, c, cls=cls: cls(*c))
    return None, None


def flatten(tree):
    leaves = []

    def visit(x):
        cls, fns = _node_of(x)
        if cls is None:
            leaves.append(x)
            return LEAF
        children, aux = fns[0](x)
        return TreeDef(cls, aux, tuple(visit(c) for c in children))

    treedef = visit(tree)
    return leaves, treedef


def unflatten(treedef, leaves):
    it = iter(leaves)

    def build(td):
        if td.kind is None:
            return next(it)
        _, fns = _node_of_kind(td.kind)
        return fns[1](td.aux, [build(c) for c in td.children])

    out = build(treedef)
    if next(it, _sentinel) is not _sentinel:
        raise PytreeError(f"too many leaves for tree structure {treedef}")
    return out


_sentinel = object()


def _node_of_kind(cls):
    if cls in _registry:
        return cls, _registry[cls]
    return cls, (None, lambda _, c, cls=cls: cls(*c))


def tree_map(fn, tree, *rest):
    leaves, treedef = flatten(tree)
    others = [flatten(r) for r in rest]
    for leaves_r, td in others:
        if td != treedef:
            raise PytreeError(f"tree structures differ: {treedef} vs {td}")
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *(o[0] for o in others))])
