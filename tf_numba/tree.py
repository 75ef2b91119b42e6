"""JAX's short pytree names (``jax.tree``, JAX 0.4.25+): ``tf.tree.map`` is
``tf.tree_util.tree_map`` and so on.

>>> tf.tree.map(lambda x: x * 2, {"a": 1, "b": (2, None)})
{'a': 2, 'b': (4, None)}
"""
import dataclasses

from .tree_util import tree_all as all  # noqa: A001 (JAX's name)
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001 (JAX's name)
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]


def static(**field_kwargs):
    """A dataclass field that ``register_dataclass`` makes static (part of the structure,
    not a leaf), as ``jax.tree.static``: ``dataclasses.field`` with
    ``metadata={"static": True}``.

    >>> op: str = tf.tree.static(default="add")
    """
    metadata = dict(field_kwargs.pop("metadata", None) or {}, static=True)
    return dataclasses.field(metadata=metadata, **field_kwargs)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
