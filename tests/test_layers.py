"""The package's layers: each top-level module or subpackage of ``tf_numba`` (a unit) imports
only units of lower layers, lazily or not, so no two units import each other.
``tools/import_layers.py`` reads the imports (with ``ast``) and prints the cycles."""
import functools
import importlib.util
import pathlib

TOOL = pathlib.Path(__file__).resolve().parents[1] / "tools" / "import_layers.py"
_spec = importlib.util.spec_from_file_location("import_layers", TOOL)
import_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_layers)
imports = functools.cache(import_layers.imports)     # (each test reads every file)

# Lowest first. A unit imports only units of the layers above it in this list (the units
# sharing a line import neither each other nor anything of their own line).
LAYERS = [
    "errors _heap _jax_coverage version numerics",
    "core",                    # the IR, tracing, rule tables: registries filled from above
    "config _reference device typing",
    "tracebacks",              # where an error leaves the public functions (every module's)
    "debug dtypes tree_util checkpoint_policies",
    "tree",
    "kernel_vocab",            # how a primitive lowers: the words ops states lowerings in
    "transforms",              # jvp, partial eval, transpose, vmap, simplify
    "ops",                     # the primitives and their rules
    "api callback",
    "custom_derivatives sharding test_util",
    "ext",                     # op families with their rules (linalg, fft, einsum)
    "numpy",
    "lax",
    "random image",
    "nn",
    "scipy",
    "optimizers",
    "lowering",                # the compiler
    "runtime",
    "jit",
    "dask example_libraries",
    "",                        # tf_numba/__init__.py: the public namespace, above all
]
LAYER = {("tf_numba." + name) if name else "tf_numba": depth
         for depth, line in enumerate(LAYERS) for name in (line.split() or [""])}
# A unit's cycles among its own files: at most this many, of at most this many files each.
FILE_CYCLES, FILE_CYCLE_SIZE = 4, 6


def _where(record):
    return f"{record.path.relative_to(import_layers.ROOT.parent)}:{record.line}"


def test_every_unit_has_a_layer():
    units = {import_layers.unit(m) for m in import_layers.modules()}
    missing = sorted(units - set(LAYER))
    assert not missing, f"give each new unit a line in LAYERS (tests/test_layers.py): {missing}"


def test_no_unit_imports_its_own_layer_or_one_above():
    unit = import_layers.unit
    climbing = [f"{_where(r)}: {unit(r.source)} (layer {LAYER[unit(r.source)]}) imports "
                f"{r.target} (layer {LAYER[unit(r.target)]})"
                for r in imports()
                if unit(r.source) != unit(r.target)
                and LAYER[unit(r.target)] >= LAYER[unit(r.source)]]
    assert not climbing, ("imports that climb the layers (move the code down, or fill a "
                          "registry of the lower layer from above):\n" + "\n".join(climbing))


def test_no_import_cycle_between_units():
    cycles = import_layers.cycles(import_layers.unit_edges(imports()))
    assert cycles == [], f"units that import each other: {cycles}"


def test_core_imports_only_core_errors_and_heap():
    allowed = {"tf_numba.core", "tf_numba.errors", "tf_numba._heap"}
    found = [f"{_where(r)}: imports {r.target}" for r in imports()
             if import_layers.unit(r.source) == "tf_numba.core"
             and import_layers.unit(r.target) not in allowed]
    assert not found, "\n".join(found)


def test_file_cycles_stay_inside_one_unit_and_small():
    cycles = import_layers.cycles(import_layers.file_edges(imports()))
    text = "\n".join(f"  {len(c)}: {' '.join(c)}" for c in cycles)
    assert len(cycles) <= FILE_CYCLES, f"{len(cycles)} file cycles:\n{text}"
    assert all(len(c) <= FILE_CYCLE_SIZE for c in cycles), f"a file cycle grew:\n{text}"
    assert all(len({import_layers.unit(m) for m in c}) == 1 for c in cycles), \
        f"a file cycle spans units:\n{text}"
