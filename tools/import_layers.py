"""Read every import in ``tf_numba/`` with ``ast`` (those inside functions too) and print the
import cycles between files and between units (the top-level modules and subpackages).

    python tools/import_layers.py

``tests/test_layers.py`` checks the same edges against the allowed layer order. Importing a
submodule also runs its parents' ``__init__``; that implicit edge is not counted (every
file would otherwise sit in one cycle with ``tf_numba/__init__.py``).
"""
import ast
import collections
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tf_numba"

Import = collections.namedtuple("Import", "source target path line")


def modules(root=ROOT):
    """``{dotted module name: path}`` for every ``.py`` file under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _targets(module, node, is_package):
    """The dotted names ``node`` (an ``Import`` or ``ImportFrom`` in ``module``) reads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module
    return [f"{target}.{alias.name}" for alias in node.names]


def imports(root=ROOT):
    """Every import of one ``tf_numba`` file by another, as ``Import`` records."""
    mods = modules(root)
    out = []
    for module, path in mods.items():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for name in _targets(module, node, path.name == "__init__.py"):
                while name and name not in mods:     # ``from pkg import name``: the package
                    name = name.rpartition(".")[0]
                if name and name != module:
                    out.append(Import(module, name, path, node.lineno))
    return out


def unit(module):
    """The top-level module or subpackage a module belongs to (``tf_numba.core``)."""
    return ".".join(module.split(".")[:2])


def cycles(edges):
    """The strongly connected components of more than one node of ``{node: {nodes}}``,
    each sorted, largest first (Tarjan's algorithm, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in list(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found, key=lambda c: (-len(c), c))


def file_edges(records):
    edges = collections.defaultdict(set)
    for r in records:
        edges[r.source].add(r.target)
    return edges


def unit_edges(records):
    edges = collections.defaultdict(set)
    for r in records:
        if unit(r.source) != unit(r.target):
            edges[unit(r.source)].add(unit(r.target))
    return edges


def main():
    records = imports()
    file_cycles = cycles(file_edges(records))
    unit_cycles = cycles(unit_edges(records))
    print(f"file cycles: {len(file_cycles)}")
    for c in file_cycles:
        print(f"  {len(c)}: {' '.join(c)}")
    print(f"unit cycles: {len(unit_cycles)}")
    for c in unit_cycles:
        print(f"  {len(c)}: {' '.join(c)}")
    print("unit imports:")
    for source, targets in sorted(unit_edges(records).items()):
        print(f"  {source} -> {' '.join(sorted(targets))}")
    return 1 if unit_cycles else 0


if __name__ == "__main__":
    sys.exit(main())
