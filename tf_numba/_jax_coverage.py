"""How much of JAX's public surface tf_numba has: for each JAX module, its names
(``docs/jax_names.json``, read from the JAX version the test extra installs by
``tools/jax_names.py``), those tf_numba's module of the same path has, and the names it
leaves out on purpose, with the reason (``EXCLUDED``).

A module in ``COMPLETE`` has every JAX name that is not excluded, and
``tests/test_jax_coverage.py`` fails when one goes missing or an exclusion is no longer
missing. The others are still being filled in; their missing names are listed in the
coverage table of ``docs/reference.md`` (``render``), which the same test keeps current.
"""
import importlib
import json
import pathlib

NAMES = pathlib.Path(__file__).resolve().parents[1] / "docs" / "jax_names.json"

_DTYPES = ("low-precision dtypes that NumPy does not have: bfloat16, the float8 and "
           "the 1, 2 and 4-bit formats")
_INTERNALS = ("JAX's own machinery (tracers, interpreters, staging and export, the XLA "
              "client, profiling): tf_numba's counterparts are its own (tf.make_program, "
              "tf.runtime, tf.debug)")
_PRIMITIVES = ("JAX's primitive objects: tf_numba's primitives are its own "
               "(docs/primitives.md)")

EXCLUDED = {
    "jax": {
        _INTERNALS: ["ad", "api_util", "core", "custom_batching", "experimental", "export",
                     "ffi", "interpreters", "jax2tf_associative_scan_reductions", "lib",
                     "monitoring", "profiler", "stages", "make_user_context",
                     "explain_cache_misses", "no_execution", "no_tracing", "enable_checks"],
        "several processes or devices, and their memory: tf_numba computes in one process "
        "on one device": ["distributed", "memory", "Shard", "thread_guard", "auto_pcast",
                          "remove_size_one_mesh_axis_from_type",
                          "array_garbage_collection_guard", "live_arrays", "dlpack"],
        "mutable array references (JAX's Ref API): tf_numba's arrays are values": [
            "Ref", "ref", "new_ref", "empty_ref", "free_ref", "freeze", "ds"],
        "switches of JAX's PRNG implementations: tf.random is JAX's default, threefry2x32 "
        "(partitionable), and has no key-reuse checker": [
            "default_prng_impl", "enable_custom_prng", "legacy_prng_key",
            "threefry_partitionable", "debug_key_reuse"],
        "numeric switches tf_numba does not have: NaN/inf checks, rank and dtype promotion "
        "modes (it always promotes as NumPy 2), float16 reductions, softmax's JVP form": [
            "debug_nans", "debug_infs", "numpy_rank_promotion", "numpy_dtype_promotion",
            "allow_f16_reductions", "softmax_custom_jvp"],
    },
    "jax.numpy": {
        _DTYPES: ["bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
                  "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                  "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                  "int1", "int2", "int4", "uint1", "uint2", "uint4"],
        "JAX's ufunc objects (reduce, accumulate, outer and at of any scalar function); "
        "tnp.vectorize maps a scalar function": ["ufunc", "frompyfunc"],
    },
    "jax.nn": {
        "microscaled low-precision products (MXFP8 and friends): no such formats here": [
            "get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"],
    },
    "jax.lax": {
        "point-to-point sends and ragged exchanges between devices: on one device there is "
        "no other to exchange with (the other collectives are tf.lax's, over axes of size "
        "1)": ["psend", "precv", "ragged_all_to_all"],
    },
    "jax.random": {
        "typed keys' dtype: tf.random's keys are (2,) int64 word arrays": ["key_dtype"],
    },
    "jax.dtypes": {
        _DTYPES: ["bfloat16"],
        "JAX's extended dtypes (typed PRNG keys)": ["extended", "prng_key"],
    },
    "jax.sharding": {
        "abstract devices and manual axes of multi-device programs": [
            "AbstractDevice", "ManualAxisType"],
    },
    "jax.custom_derivatives": {
        "JAX's internal helpers for linear functions and symbolic zeros": [
            "custom_vjp_primal_tree_values", "linear_call", "zero_from_primal"],
    },
    "jax.example_libraries.optimizers": {
        "helpers JAX's module imports for itself (jax.util's map and zip)": [
            "map", "safe_map", "safe_zip", "unzip2", "zip"],
    },
    "jax.tree_util": {
        "the registry object of JAX's C++ pytrees: tf_numba's registry is "
        "register_pytree_node's": ["default_registry"],
    },
    "jax.debug": {
        "an interactive debugger stopped inside a running program: run it under "
        "tf.disable_jit() and use Python's breakpoint()": ["breakpoint"],
        "JAX's effect types and multi-device sharding displays": [
            "DebugEffect", "OrderedDebugEffect", "inspect_array_sharding",
            "visualize_array_sharding", "visualize_sharding"],
    },
}

# Where JAX's promotion (with x64 on) and NumPy 2's differ: (a, b, NumPy 2's result, JAX's),
# each pair in both orders, 28 of the 196 ordered pairs of the 14 dtypes both have.
# tf_numba promotes as NumPy 2 (tests/test_jax_coverage.py checks both columns).
PROMOTION_DIFFERS = [
    ("int32", "complex64", "complex128", "complex64"),
    ("int64", "complex64", "complex128", "complex64"),
    ("uint32", "complex64", "complex128", "complex64"),
    ("uint64", "complex64", "complex128", "complex64"),
    ("int16", "float16", "float32", "float16"),
    ("uint16", "float16", "float32", "float16"),
    ("int32", "float16", "float64", "float16"),
    ("int64", "float16", "float64", "float16"),
    ("uint32", "float16", "float64", "float16"),
    ("uint64", "float16", "float64", "float16"),
    ("int32", "float32", "float64", "float32"),
    ("int64", "float32", "float64", "float32"),
    ("uint32", "float32", "float64", "float32"),
    ("uint64", "float32", "float64", "float32"),
]

# the modules that have every JAX name but the excluded ones
COMPLETE = ("jax", "jax.lax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.nn",
            "jax.nn.initializers", "jax.random", "jax.tree", "jax.tree_util", "jax.debug",
            "jax.dtypes", "jax.sharding", "jax.test_util", "jax.custom_derivatives",
            "jax.example_libraries.stax", "jax.example_libraries.optimizers",
            "jax.scipy.integrate", "jax.scipy.sparse.linalg", "jax.scipy.fft",
            "jax.scipy.ndimage", "jax.scipy.interpolate", "jax.scipy.special",
            "jax.scipy.stats", "jax.scipy.linalg", "jax.scipy.optimize", "jax.scipy.cluster.vq",
            "jax.scipy.signal", "jax.scipy.spatial.transform")
# tf_numba's modules that are imported on first use, by the attribute that reaches them
_ON_FIRST_USE = {"tf_numba": ("scipy", "dask")}


def jax_names():
    """``(jax_version, {jax module: [names]})`` from ``docs/jax_names.json``."""
    data = json.loads(NAMES.read_text())
    return data["jax_version"], data["modules"]


def ours(jax_module):
    """The public names of tf_numba's module at ``jax_module``'s path (empty if none)."""
    name = "tf_numba" + jax_module[len("jax"):]
    try:
        module = importlib.import_module(name)
    except ImportError:
        return set()
    return set(getattr(module, "__all__", ())) | set(_ON_FIRST_USE.get(name, ()))


def excluded(jax_module, names=()):
    """``{name: reason}`` of the names (of ``names``) tf_numba leaves out of ``jax_module``
    on purpose: those of ``EXCLUDED``, and JAX's primitive objects (``*_p``) anywhere."""
    out = {n: why for why, listed in EXCLUDED.get(jax_module, {}).items() for n in listed}
    out.update({n: _PRIMITIVES for n in names if n.endswith("_p")})
    return out


def coverage():
    """Per JAX module: ``(module, names, had, excluded {name: why}, missing)``."""
    _, modules = jax_names()
    rows = []
    for module, names in modules.items():
        have, skip = ours(module), excluded(module, names)
        had = [n for n in names if n in have]
        missing = [n for n in names if n not in have and n not in skip]
        rows.append((module, names, had, {n: w for n, w in skip.items() if n in names},
                     missing))
    return rows


def render():
    """The coverage section of ``docs/reference.md``."""
    version, _ = jax_names()
    rows = coverage()
    out = ["## Coverage of JAX's names", "",
           f"For each JAX module (JAX {version}, `docs/jax_names.json`), how many of its "
           "public names the tf_numba module of the same path (`jax` is `tf`) has, how many "
           "it leaves out and why (`tf_numba/_jax_coverage.py`), and which it lacks still. "
           "`tests/test_jax_coverage.py` fails when a module marked complete lacks a name.",
           "", "| JAX module | tf_numba has | left out | still missing |",
           "| --- | --- | --- | --- |"]
    for module, names, had, skip, missing in rows:
        mark = " (complete)" if module in COMPLETE else ""
        shown = ", ".join(f"`{n}`" for n in missing) if missing else "-"
        out.append(f"| `{module}`{mark} | {len(had)} of {len(names)} | {len(skip)} | "
                   f"{shown} |")
    out += ["", "### Dtype promotion", "",
            "tf_numba promotes dtypes as NumPy 2 does (`tnp.result_type` is NumPy's, with "
            "Python scalars weak as NEP 50), not by JAX's lattice, so a program ported "
            "from NumPy keeps its dtypes. Of the 196 ordered pairs of the 14 dtypes both "
            "have (bool, int8 to uint64, float16 to float64, complex64, complex128), JAX "
            "(with x64 on) gives another result for 28, the 14 pairs below in either "
            "order: an integer whose values the float cannot all hold (16 bits or more with "
            "float16, 32 or more with float32 or complex64). NumPy widens the float so "
            "that the integer fits; JAX keeps the float's width. "
            "Cast the integer first (`n.astype(x.dtype)`) to get JAX's dtype.", "",
            "| operands | tf_numba (NumPy 2) | JAX |", "| --- | --- | --- |"]
    out += [f"| `{a}`, `{b}` | `{ours}` | `{jax}` |" for a, b, ours, jax in PROMOTION_DIFFERS]
    out += ["", "Left out, and why:", "",
            f"- every module: the names ending in `_p`: {_PRIMITIVES}."]
    for module, reasons in EXCLUDED.items():
        for why, names in reasons.items():
            out.append(f"- `{module}`: {', '.join(f'`{n}`' for n in names)}: {why}.")
    return out
