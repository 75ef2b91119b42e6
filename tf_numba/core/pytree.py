"""Pytrees: nested tuples, lists, dicts, namedtuples and None, plus user-registered types.

``flatten(tree) -> (leaves, treedef)`` and ``unflatten(treedef, leaves)``. A ``TreeDef`` is
hashable and comparable, so it can be part of a dispatch key. ``None`` is a node with no
children, as in JAX. The public spelling of all this, with JAX's names, is
``tf_numba.tree_util``.
"""
import collections
import dataclasses

from ..errors import PytreeError
from .written import Written

_registry = {}   # node type -> (flatten_fn, unflatten_fn)
_key_fns = {}    # node type -> fn(node) -> the key entries of its children, in flatten order
# bumped by each registration: a builder written before it may call an unflatten_fn that is
# no longer the type's (``_write_builder``)
_registrations = [0]


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A path entry: the child at position ``idx`` of a tuple or list."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """A path entry: the value at ``key`` of a dict."""
    key: object

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """A path entry: the attribute ``name`` of a namedtuple or dataclass."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """A path entry: child number ``key`` of a node registered without key names."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(path):
    """A key path as text: ``keystr((SequenceKey(0), DictKey('w')))`` is ``"[0]['w']"``."""
    return "".join(map(str, path))


def register_pytree_node(cls, flatten_fn, unflatten_fn, keys_fn=None):
    """Register ``cls``: ``flatten_fn(x) -> (children, aux)``, ``unflatten_fn(aux, children)``.

    ``aux`` must be hashable; it is stored in the TreeDef. ``keys_fn(x)`` gives the path
    entries of the children (default: ``FlattenedIndexKey`` by position).
    """
    _registry[cls] = (flatten_fn, unflatten_fn)
    _registrations[0] += 1
    if keys_fn is None:
        _key_fns.pop(cls, None)
    else:
        _key_fns[cls] = keys_fn


def _sequence_keys(t):
    return [SequenceKey(i) for i in range(len(t))]


def _defaultdict_flatten(d):
    keys = tuple(sorted(d))
    return [d[k] for k in keys], (d.default_factory, keys)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c), _sequence_keys)
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c), _sequence_keys)
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)),
                     lambda d: [DictKey(k) for k in sorted(d)])
# An OrderedDict keeps its own order (and compares its keys in order), as in JAX.
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: collections.OrderedDict(zip(keys, c)),
                     lambda d: [DictKey(k) for k in d])
register_pytree_node(collections.defaultdict, _defaultdict_flatten,
                     lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
                     lambda d: [DictKey(k) for k in sorted(d)])
register_pytree_node(type(None), lambda _: ((), None), lambda _, c: None, lambda _: [])


def register_dataclass(cls, data_fields, meta_fields):
    """Register dataclass ``cls``: ``data_fields`` are children, ``meta_fields`` aux data.

    Unflattening sets the fields on a new instance without calling ``__init__`` (so
    ``__post_init__`` checks do not run on tracers), as JAX does.
    """
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)

    def flatten_dc(x):
        return ([getattr(x, f) for f in data_fields],
                tuple(getattr(x, f) for f in meta_fields))

    def unflatten_dc(aux, children):
        obj = object.__new__(cls)
        for name, value in zip(data_fields + meta_fields, (*children, *aux)):
            object.__setattr__(obj, name, value)
        return obj

    register_pytree_node(cls, flatten_dc, unflatten_dc,
                         lambda _: [GetAttrKey(f) for f in data_fields])
    return cls


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


class TreeDef:
    """The structure of a pytree: a node type, its aux data and child TreeDefs (or a leaf)."""
    __slots__ = ("kind", "aux", "children", "num_leaves", "num_nodes", "_hash", "_builder")

    def __init__(self, kind, aux, children):
        self.kind = kind
        self.aux = aux
        self.children = children
        self._builder = None        # see ``unflatten``
        if kind is None:
            self.num_leaves = self.num_nodes = 1
        else:
            # list comprehensions, not generators: flatten runs on every transform call
            self.num_leaves = sum([c.num_leaves for c in children])
            self.num_nodes = 1 + sum([c.num_nodes for c in children])
        self._hash = hash((kind, aux, children))

    def __hash__(self):
        return self._hash

    def __reduce__(self):       # (not its builder: written code does not pickle)
        return TreeDef, (self.kind, self.aux, self.children)

    def __eq__(self, other):
        return (isinstance(other, TreeDef) and self.kind is other.kind
                and self.aux == other.aux and self.children == other.children)

    def __repr__(self):
        return f"PyTreeDef({self._text()})"

    def _text(self):
        kind, parts = self.kind, [c._text() for c in self.children]
        if kind is None:
            return "*"
        if kind is type(None):
            return "None"
        if kind is tuple:
            return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
        if kind is list:
            return f"[{', '.join(parts)}]"
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.aux, parts)) + "}"
        name = f"namedtuple[{kind.__name__}]" if kind not in _registry else \
            f"{kind.__name__}[{self.aux!r}]"
        return f"CustomNode({name}, [{', '.join(parts)}])"

    def unflatten(self, leaves):
        return unflatten(self, leaves)

    def flatten_up_to(self, tree):
        return flatten_up_to(self, tree)

    def compose(self, inner):
        """This structure with every leaf replaced by the structure ``inner``."""
        if self.kind is None:
            return inner
        return TreeDef(self.kind, self.aux, tuple(c.compose(inner) for c in self.children))


LEAF = TreeDef(None, None, ())


def _node_of(x):
    cls = type(x)
    if cls in _registry:
        return cls, _registry[cls]
    if _is_namedtuple(x):
        return cls, (lambda t: (tuple(t), None), lambda _, c, cls=cls: cls(*c))
    return None, None


def _keys_of(cls, x, num_children):
    if cls in _key_fns:
        return _key_fns[cls](x)
    if cls not in _registry:    # a namedtuple
        return [GetAttrKey(f) for f in cls._fields]
    return [FlattenedIndexKey(i) for i in range(num_children)]


def flatten(tree, is_leaf=None):
    """``(leaves, treedef)``; ``is_leaf(x)`` true makes the subtree ``x`` one leaf."""
    leaves = []

    def visit(x):
        cls, fns = _node_of(x)
        if cls is None:
            leaves.append(x)
            return LEAF
        children, aux = fns[0](x)
        return TreeDef(cls, aux, tuple([visit(c) for c in children]))

    def visit_until_leaf(x):
        if is_leaf(x):
            leaves.append(x)
            return LEAF
        cls, fns = _node_of(x)
        if cls is None:
            leaves.append(x)
            return LEAF
        children, aux = fns[0](x)
        return TreeDef(cls, aux, tuple([visit_until_leaf(c) for c in children]))

    treedef = visit(tree) if is_leaf is None else visit_until_leaf(tree)
    return leaves, treedef


def flatten_with_path(tree, is_leaf=None):
    """``([(path, leaf), ...], treedef)``: each leaf with its key path (a tuple of keys)."""
    leaves = []

    def visit(x, path):
        if is_leaf is not None and is_leaf(x):
            leaves.append((path, x))
            return LEAF
        cls, fns = _node_of(x)
        if cls is None:
            leaves.append((path, x))
            return LEAF
        children, aux = fns[0](x)
        keys = _keys_of(cls, x, len(children))
        return TreeDef(cls, aux, tuple(visit(c, path + (k,)) for c, k in zip(children, keys)))

    treedef = visit(tree, ())
    return leaves, treedef


def unflatten(treedef, leaves):
    """The tree of structure ``treedef`` with ``leaves`` (a sequence, in flatten order).

    A treedef unflattened again (a jitted step's outputs, every call) gets a function
    written for its structure, one expression building the whole tree (``_write_builder``):
    walking the structure costs ~0.6 us a node a call."""
    builder = treedef._builder
    if builder is None:
        treedef._builder = _SEEN_ONCE       # a structure built once is not worth writing
    elif (builder is not _TOO_DEEP and (type(leaves) is list or type(leaves) is tuple)
          and len(leaves) == treedef.num_leaves):
        if builder is _SEEN_ONCE or builder.registrations != _registrations[0]:
            builder = treedef._builder = _write_builder(treedef)
        if builder is not _TOO_DEEP:
            return builder(leaves)
    return _walk(treedef, leaves)


def _walk(treedef, leaves):
    it = iter(leaves)

    def build(td):
        if td.kind is None:
            return next(it)
        _, fns = _node_of_kind(td.kind)
        return fns[1](td.aux, [build(c) for c in td.children])

    try:
        out = build(treedef)
    except StopIteration:
        raise PytreeError(f"too few leaves for tree structure {treedef}: it takes "
                          f"{treedef.num_leaves}") from None
    if next(it, _sentinel) is not _sentinel:
        raise PytreeError(f"too many leaves for tree structure {treedef}: it takes "
                          f"{treedef.num_leaves}")
    return out


# a treedef's ``_builder`` before it has one: unflattened once so far, or too deep to
# write as one expression (Python's parser refuses expressions nested ~200 deep)
_SEEN_ONCE, _TOO_DEEP = object(), object()
_DEEPEST_WRITTEN = 50


def _write_builder(treedef):
    """``build(leaves) -> tree`` for ``treedef``: tuples, lists, dicts and None written as
    literals, other nodes as calls of their ``unflatten_fn`` (bound as it is now; the
    builder remembers the registration count, ``_registrations``)."""
    written, position = Written(), iter(range(treedef.num_leaves))
    const = written.bind

    def expr(td, depth):
        if td.kind is None:
            return f"leaves[{next(position)}]"
        if depth > _DEEPEST_WRITTEN:
            raise RecursionError
        parts = [expr(c, depth + 1) for c in td.children]
        if td.kind is tuple:
            return "(" + "".join(p + ", " for p in parts) + ")"
        if td.kind is list:
            return "[" + ", ".join(parts) + "]"
        if td.kind is dict:
            return "{" + ", ".join(f"{const(k)}: {p}" for k, p in zip(td.aux, parts)) + "}"
        if td.kind is type(None):
            return "None"
        _, fns = _node_of_kind(td.kind)
        return f"{const(fns[1])}({const(td.aux)}, [{', '.join(parts)}])"
    try:
        builder = written.function(
            f"def build(leaves):\n    return {expr(treedef, 0)}\n", "build")
    except RecursionError:
        return _TOO_DEEP
    builder.registrations = _registrations[0]
    return builder


_sentinel = object()


def _node_of_kind(cls):
    if cls in _registry:
        return cls, _registry[cls]
    return cls, (None, lambda _, c, cls=cls: cls(*c))


def _path_text(trail):
    """The key path of a ``((node, child_index), ...)`` trail, computed only for errors."""
    keys = [_keys_of(type(node), node, i + 1)[i] for node, i in trail]
    return keystr(keys) or "the root"


def flatten_up_to(treedef, tree):
    """The subtrees of ``tree`` at the leaves of ``treedef``, a prefix of its structure.

    ``flatten_up_to(structure of [a, b], [(1, 2), 3])`` is ``[(1, 2), 3]``.
    """
    out = []

    def visit(td, x, trail):
        if td.kind is None:
            out.append(x)
            return
        cls, fns = _node_of(x)
        if cls is not td.kind:
            raise PytreeError(
                f"tree structures differ at {_path_text(trail)}: expected a "
                f"{td.kind.__name__} ({td}), got a {type(x).__name__}; every tree must "
                "have the first one's structure (or it as a prefix)")
        children, aux = fns[0](x)
        if aux != td.aux or len(children) != len(td.children):
            raise PytreeError(
                f"tree structures differ at {_path_text(trail)}: a {cls.__name__} with "
                f"{len(children)} children and metadata {aux!r} where the first tree has "
                f"{len(td.children)} children and metadata {td.aux!r}")
        for i, (c, ctd) in enumerate(zip(children, td.children)):
            visit(ctd, c, trail + ((x, i),))

    visit(treedef, tree, ())
    return out


def tree_map(fn, tree, *rest, is_leaf=None):
    """``fn`` applied leaf-wise, as ``jax.tree_util.tree_map``.

    Each of ``rest`` has ``tree``'s structure or that structure as a prefix (``fn`` then
    gets its whole subtree); ``is_leaf(x)`` true makes ``x`` a leaf of ``tree``.

    >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, None)}, {"a": 10, "b": (20, None)})
    {'a': 11, 'b': (22, None)}
    """
    leaves, treedef = flatten(tree, is_leaf)
    if not rest:
        return unflatten(treedef, [fn(x) for x in leaves])
    others = [flatten_up_to(treedef, r) for r in rest]
    return unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others)])
