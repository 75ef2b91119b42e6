"""``docs/reference.md``, generated from the code: every public name of tf_numba's public
modules, with a one-line description taken from its docstring; and ``docs/primitives.md``:
every primitive, with the files that state its rules and its lowering.

A module is public when it is one of ``ROOTS`` or is named in the ``__all__`` of a public
module (``tf.lax``, ``tnp.linalg``, ``tf.scipy.special``, ...); its public names are its
``__all__``. ``PUBLIC_MODULES`` lists them all; ``tests/test_reference.py`` checks that each
has an ``__all__``, that ``dir()`` shows nothing else (``core/public.py``), and that the
committed page is what ``render()`` gives.

    python -m tf_numba._reference            # rewrite docs/reference.md
    python -m tf_numba._reference --check    # exit 1 if it is stale
"""
import importlib
import inspect
import pathlib
import sys
import types

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "reference.md"
# the modules a user imports by name; the others are found through their __all__
ROOTS = ("tf_numba", "tf_numba.numpy", "tf_numba.scipy", "tf_numba.example_libraries")
# roots that need an optional extra (the test extra brings it, so CI's page has them)
OPTIONAL_ROOTS = ("tf_numba.dask",)
# how the page spells each root, as the README imports them
ALIASES = {"tf_numba": "tf", "tf_numba.numpy": "tnp"}
MAX_DESCRIPTION = 150


def public_modules():
    """Every public module, roots first, each once, in the order they are reached."""
    found, queue = [], [importlib.import_module(name) for name in ROOTS]
    for name in OPTIONAL_ROOTS:
        try:
            queue.append(importlib.import_module(name))
        except ImportError:
            pass
    while queue:
        module = queue.pop(0)
        if module in found:
            continue
        found.append(module)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name, None)
            if isinstance(value, types.ModuleType) and value.__name__.startswith("tf_numba"):
                queue.append(value)
    return found


def _spelled(module_name):
    for root, alias in sorted(ALIASES.items(), key=lambda item: -len(item[0])):
        if module_name == root:
            return alias
        if module_name.startswith(root + "."):
            return alias + module_name[len(root):]
    return "tf" + module_name[len("tf_numba"):]


def _first_sentence(doc):
    """The docstring's first sentence (of its first paragraph), on one line."""
    lines = []
    for line in inspect.cleandoc(doc).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    text = " ".join(lines)
    head, colon, rest = text.partition(": ")
    if colon and " " not in head:       # "``tf_numba.numpy``: the NumPy namespace ..."
        text = rest[:1].upper() + rest[1:]
    for end in (". ", ": "):
        cut = text.find(end)
        if 0 < cut < MAX_DESCRIPTION:
            text = text[:cut + 1]
            break
    if len(text) > MAX_DESCRIPTION:
        text = text[:MAX_DESCRIPTION - 3].rstrip() + "..."
    return text.rstrip(":")


def _mirrored(module_name, name):
    """``numpy.fft.fft2`` for ``tnp.fft.fft2`` (``scipy.linalg.det`` for
    ``tf.scipy.linalg.det``) when that library has the name; None otherwise."""
    for ours, theirs in (("tf_numba.numpy", "numpy"), ("tf_numba.scipy", "scipy")):
        if module_name == ours or module_name.startswith(ours + "."):
            path = theirs + module_name[len(ours):]
            try:
                found = getattr(importlib.import_module(path), name, None)
            except ImportError:
                return None
            return f"{path}.{name}" if found is not None else None
    return None


def describe(value, module_name="", name=""):
    """(kind, one line) for a public value (``name`` of module ``module_name``)."""
    if isinstance(value, types.ModuleType):
        return "module", _first_sentence(value.__doc__ or "") or "(no docstring)"
    own = getattr(value, "__module__", None) or ""
    if isinstance(value, type) and not own.startswith("tf_numba"):
        return "type", f"NumPy's `{value.__name__}` (the same object)"
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return "constant", f"`{value!r}`"
    if not callable(value):         # an instance (a distribution object): its class says
        doc = type(value).__doc__
        return "object", _first_sentence(doc) if doc else f"a `{type(value).__name__}`"
    kind = "class" if isinstance(value, type) else "function"
    if not own.startswith("tf_numba") and own:
        return kind, f"`{own}.{getattr(value, '__name__', '')}` (the same object)"
    if value.__doc__:
        return kind, _first_sentence(value.__doc__)
    mirrored = _mirrored(module_name, name)
    return kind, f"As `{mirrored}`." if mirrored else "(no docstring)"


def _cell(text):
    return text.replace("|", "\\|").replace("``", "`")


def render():
    """The text of docs/reference.md."""
    modules = public_modules()
    out = ["# tf_numba reference", "",
           "Every public name, with the first sentence of its docstring. Generated from the "
           "code by `python -m tf_numba._reference` (`tests/test_reference.py` checks that "
           "this page is current); `help(name)` has the rest. `tf` is `import tf_numba as "
           "tf`, `tnp` is `import tf_numba.numpy as tnp`; `tf.scipy` and `tf.dask` are "
           "imported on first use (`tf.dask` needs the `dask` extra). "
           "`docs/scipy.md` details accuracy and derivatives of `tf.scipy`.", "",
           "## Modules", ""]
    for module in modules:
        name = _spelled(module.__name__)
        out.append(f"- [`{name}`](#{name.replace('.', '')}): "
                   f"{_cell(describe(module)[1])} ({len(module.__all__)} names)")
    from . import _jax_coverage
    out += [""] + _jax_coverage.render()
    for module in modules:
        name = _spelled(module.__name__)
        out += ["", f"## {name}", "", f"`{module.__name__}`: {_cell(describe(module)[1])}",
                "", "| name | kind | what it is |", "| --- | --- | --- |"]
        for public in sorted(module.__all__, key=lambda n: (n.lower(), n)):
            kind, line = describe(getattr(module, public), module.__name__, public)
            out.append(f"| `{name}.{public}` | {kind} | {_cell(line)} |")
    return "\n".join(out) + "\n"


PRIMITIVES_PAGE = PAGE.with_name("primitives.md")
_ROLE_COLUMNS = ("jvp", "transpose", "batch", "partial_eval")


def render_primitives():
    """The text of docs/primitives.md: each primitive, the file that declares it, and
    the files that state its rules (``core.primitive.rules_table``) and its lowering's
    kind (``kernel_vocab/rules.py``)."""
    public_modules()
    importlib.import_module("tf_numba.lowering.plan")    # the library steps' lowerings
    from .core.primitive import RULES, REGISTRY, rules_table
    out = ["# tf_numba primitives", "",
           "Every primitive, where it is declared, and the file that states each of its rules "
           "(JVP, transpose, batching, partial evaluation for the loops and branches) and its "
           "lowering: `Elementwise`, `Reduction` and `IndexMap` fuse into a kernel's loop "
           "nests, a `Library` rule writes a step of its own, and a primitive without one "
           "runs its NumPy impl between kernels. A transpose is stated only for linear "
           "primitives. Generated by `python -m tf_numba._reference` (`tests/"
           "test_reference.py` checks that this page is current); "
           "`tf_numba.core.primitive.rules_table()` gives the lines.", "",
           "| primitive | declared in | jvp | transpose | batch | partial_eval | lowering |",
           "| --- | --- | --- | --- | --- | --- | --- |"]

    def where(site, declared):
        if site is None:
            return "-"
        path = site.rsplit(":", 1)[0]
        return "here" if path == declared else f"`{path}`"

    for name, row in rules_table().items():
        declared = row["module"][len("tf_numba."):].replace(".", "/") + ".py"
        if declared.endswith("/__init__.py") or not (PAGE.parents[1] / "tf_numba" /
                                                       declared).exists():
            declared = declared[:-3] + "/__init__.py"
        cells = [where(row[role], declared) for role in _ROLE_COLUMNS]
        rule = RULES["lower"].get(REGISTRY[name][0])
        lowering = "-" if rule is None else \
            f"{type(rule).__name__}, {where(row['lower'], declared)}"
        out.append(f"| `{name}` | `{declared}` | " + " | ".join(cells) + f" | {lowering} |")
    return "\n".join(out) + "\n"


def write_or_check(page, text, argv, command):
    """A generated page's ``main``: with ``--check`` in ``argv``, 1 if ``page`` is not
    ``text`` (saying to run ``command``), else write it; the exit code."""
    if "--check" in argv:
        current = page.read_text() if page.exists() else ""
        if current != text:
            print(f"{page} is stale: run {command}", file=sys.stderr)
            return 1
        return 0
    page.parent.mkdir(exist_ok=True)
    page.write_text(text)
    print(f"wrote {page} ({text.count(chr(10))} lines)")
    return 0


def main(argv):
    command = "python -m tf_numba._reference"
    return max(write_or_check(PAGE, render(), argv, command),
               write_or_check(PRIMITIVES_PAGE, render_primitives(), argv, command))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
