"""Write ``docs/jax_names.json``: the public names of the JAX modules tf_numba mirrors, read
from the installed JAX, for ``tests/test_jax_coverage.py`` and the coverage table of
``docs/reference.md``. Run it when the JAX version the test extra installs changes:

    python tools/jax_names.py            (writes the file)
    python tools/jax_names.py --print    (prints what it would write)
"""
import builtins
import collections
import functools
import importlib
import json
import pathlib
import sys
import types
import typing

OUT = pathlib.Path(__file__).resolve().parents[1] / "docs" / "jax_names.json"
MODULES = [
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn", "jax.nn.initializers",
    "jax.random", "jax.lax", "jax.tree", "jax.tree_util", "jax.debug", "jax.dtypes",
    "jax.sharding", "jax.test_util", "jax.custom_derivatives",
    "jax.example_libraries.stax", "jax.example_libraries.optimizers",
    "jax.scipy.special", "jax.scipy.stats", "jax.scipy.linalg", "jax.scipy.signal",
    "jax.scipy.fft", "jax.scipy.integrate", "jax.scipy.optimize", "jax.scipy.ndimage",
    "jax.scipy.interpolate", "jax.scipy.cluster.vq", "jax.scipy.sparse.linalg",
    "jax.scipy.spatial.transform",
]
# what a module imports for itself, not its API: other libraries' modules, typing's names,
# builtins and the standard library's helpers
_HELPERS = {id(v) for v in vars(builtins).values()} | {
    id(functools.partial), id(functools.wraps), id(collections.namedtuple)}


def _is_api(module, name, value):
    if name.startswith("_") or name == "annotations" or id(value) in _HELPERS:
        return False
    if isinstance(value, types.ModuleType):       # a submodule, not an imported helper
        return value.__name__.startswith(module.__name__ + ".")
    return getattr(value, "__module__", None) not in ("typing", "collections.abc",
                                                      "typing_extensions") \
        and not isinstance(value, (typing.TypeVar, type(typing.Any)))


def public_names(module_name):
    module = importlib.import_module(module_name)
    return sorted(n for n in dir(module) if _is_api(module, n, getattr(module, n)))


def main():
    import jax
    data = {"jax_version": jax.__version__,
            "modules": {name: public_names(name) for name in MODULES}}
    if "--print" in sys.argv[1:]:
        print(json.dumps(data))
        return
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} (JAX {jax.__version__}, "
          f"{sum(len(v) for v in data['modules'].values())} names)")


if __name__ == "__main__":
    main()
