"""``docs/scipy.md``, generated from the code: every public name of every
``tf_numba.scipy`` module, with what its docstring says of its accuracy and derivatives,
and for ``stats`` the distributions' own tables (methods, how each is computed, the
accuracy the tests hold it to, the arguments it differentiates in).

    python -m tf_numba.scipy._reference          # rewrite docs/scipy.md
    python -m tf_numba.scipy._reference --check  # exit 1 if it is stale

``tests/test_scipy_reference.py`` fails when the committed page differs from ``render()``.
"""
import importlib
import inspect
import pathlib
import pkgutil
import re
import sys

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "scipy.md"

# a docstring sentence speaks of accuracy / of derivatives when it matches these
ACCURACY = re.compile(r"SciPy's (values|bits)|\bwithin\b|\bulps?\b|\brelative|accura|"
                      r"\bmeasured|\bcancel|\blos(e|es|ing)\b|\bexact|precision|underflow|"
                      r"overflow", re.I)
DERIVATIVE = re.compile(r"deriv|differentiab|gradient|MissingRuleError|adjoint|"
                        r"implicit-function|\bjvp\b|\bvjp\b", re.I)
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "cf.")


def _prose(doc):
    """The docstring without its doctest examples, as one line per paragraph."""
    paragraphs, current, in_example = [], [], False
    for line in (doc or "").splitlines():
        text = line.strip()
        if text.startswith((">>>", "...")):
            in_example = True
            continue
        if not text:
            in_example = False
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        if not in_example:
            current.append(text)
    if current:
        paragraphs.append(" ".join(current))
    return paragraphs


def _sentences(doc):
    out = []
    for para in _prose(doc):
        protected = para
        for abbr in _ABBREVIATIONS:
            protected = protected.replace(abbr, abbr.replace(".", "\0"))
        for s in re.split(r"(?<=\.)\s+(?=[A-Z`(])", protected):
            out.append(s.replace("\0", ".").strip())
    return [s for s in out if s]


def _summary(doc):
    sentences = _sentences(doc)
    return sentences[0] if sentences else "(no docstring)"


def _matching(doc, pattern):
    """The sentences after the summary that match ``pattern``; "as stated above" when only
    the summary does."""
    sentences = _sentences(doc)
    hits = [s for s in sentences[1:] if pattern.search(s)]
    if not hits and sentences and pattern.search(sentences[0]):
        return "as stated above"
    return " ".join(hits)


def _signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def _modules():
    import tf_numba.scipy as pkg
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__)
                   if not m.name.startswith("_"))
    return [(name, importlib.import_module(f"tf_numba.scipy.{name}")) for name in names]


def _public(module):
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not
                                                 n.startswith("_")]
    return [(n, getattr(module, n)) for n in names]


# ---------------------------------------------------------------- generic modules

def _entry(name, obj, lines):
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        lines.append(f"- `{name}`: the exception it raises ({obj.__module__}.{obj.__name__}).")
        return
    doc = inspect.getdoc(obj)
    sig = _signature(obj) if callable(obj) else ""
    lines.append(f"- **`{name}{sig}`**: {_summary(doc)}")
    accuracy = _matching(doc, ACCURACY)
    derivatives = _matching(doc, DERIVATIVE)
    if accuracy:
        lines.append(f"  - accuracy: {accuracy}")
    if derivatives:
        lines.append(f"  - derivatives: {derivatives}")
    if not accuracy and not derivatives:
        lines.append("  - accuracy and derivatives: as the module notes say")


def _module_section(name, module, lines):
    lines.append(f"## `tf_numba.scipy.{name}`")
    lines.append("")
    paragraphs = _prose(inspect.getdoc(module))
    if paragraphs:
        lines.append(paragraphs[0])
        lines.append("")
    notes = [s for s in _sentences(inspect.getdoc(module))[1:]
             if ACCURACY.search(s) or DERIVATIVE.search(s)]
    if notes:
        lines.append("Module notes: " + " ".join(notes))
        lines.append("")
    for entry_name, obj in _public(module):
        if name == "stats" and entry_name in module.DISTRIBUTIONS:
            continue
        _entry(entry_name, obj, lines)
    lines.append("")


# ---------------------------------------------------------------- stats

def _fmt_tol(tol):
    return "exact" if tol == 0 else f"{tol:.0e}".replace("e-0", "e-")


def _distribution_rows(module, names, lines):
    lines.append("| distribution | parameters | methods (largest error vs SciPy, float64) "
                 "| derivatives |")
    lines.append("| --- | --- | --- | --- |")
    notes = []
    for name in names:
        dist = getattr(module, name)
        cells = []
        for method in dist.methods:
            how = dist.provided(method) if hasattr(dist, "provided") else "formula"
            if how is None:
                cells.append(f"~~{method}~~")
                continue
            tol = _fmt_tol(dist.accuracy[method])
            derived = f", = `{dist.derived_note(method)}`" if how == "derived" else ""
            cells.append(f"`{method}` {tol}{derived}")
        lines.append(f"| `{name}` | {_parameters(dist)} | {'; '.join(cells)} | "
                     f"{_derivatives(module, dist)} |")
        note = " ".join(s for s in (getattr(dist, "notes", ""),) if s)
        if note:
            notes.append(f"- `{name}`: {note}")
    lines.append("")
    lines.extend(notes)
    if notes:
        lines.append("")


def _parameters(dist):
    if hasattr(dist, "shapes") and hasattr(dist, "takes_scale"):
        names = [s for s, _ in dist.shapes] + ["loc"] + (["scale"] if dist.takes_scale
                                                         else [])
        return ", ".join(f"`{n}`" for n in names)
    sig = inspect.signature(getattr(dist, dist.methods[0]))
    return ", ".join(f"`{p}`" for p in list(sig.parameters)[1:])


def _derivatives(module, dist):
    from .stats._distribution import Discrete
    fixed = sorted({a for args in dist.no_derivative.values() for a in args} |
                   set(getattr(dist, "integer_shapes", ())))
    if isinstance(dist, Discrete):
        fixed = ["k", "loc"] + fixed
    real = [s for s, _ in getattr(dist, "shapes", ()) if s not in fixed]
    if isinstance(dist, Discrete):
        where = f"in {', '.join(f'`{s}`' for s in real)}" if real else "nowhere"
    else:
        where = "in every argument" + (f" but {', '.join(f'`{a}`' for a in fixed)}"
                                       if fixed else "")
    zero = f"; zero in {', '.join(f'`{a}`' for a in fixed)}" if fixed else ""
    steps = "; `ppf`, `isf` zero (step functions)" if isinstance(dist, Discrete) else ""
    return f"{where}, any order (tested to second){zero}{steps}"


def _stats_section(module, lines):
    lines.append("### Distributions")
    lines.append("")
    lines.append("Each is an object with SciPy's methods (`norm.logpdf(x, loc=0, scale=1)`); a "
                 "crossed-out method is not provided (it raises `UnsupportedError`). The "
                 "error figures are the largest relative differences from `scipy.stats` "
                 "(for logs and quantiles relative to `max(|value|, 1)`) that "
                 "`tests/test_scipy_stats.py` allows over points at the quantiles "
                 "1e-12 ... 1 - 1e-12, outside the support and at the parameter sets it "
                 "lists; a derived method is computed from the others as shown. Invalid "
                 "parameters give NaN.")
    lines.append("")
    for title, names in (("Continuous", module.CONTINUOUS), ("Discrete", module.DISCRETE),
                         ("Multivariate", module.MULTIVARIATE)):
        lines.append(f"#### {title}")
        lines.append("")
        _distribution_rows(module, names, lines)


def render():
    """The text of ``docs/scipy.md``."""
    lines = ["# `tf_numba.scipy`: what each module has", "",
             "Generated by `python -m tf_numba.scipy._reference` from the code (docstrings "
             "and the stats tables); `tests/test_scipy_reference.py` checks it is current. "
             "Accuracy and derivative notes are the docstrings' own sentences about them.",
             ""]
    modules = _modules()
    lines.append("Modules: " + ", ".join(f"[`{n}`](#tf_numbascipy{n})" for n, _ in modules))
    lines.append("")
    for name, module in modules:
        _module_section(name, module, lines)
        if name == "stats":
            _stats_section(module, lines)
    return "\n".join(lines).rstrip() + "\n"


def main(argv):
    from .._reference import write_or_check
    return write_or_check(PAGE, render(), argv, "python -m tf_numba.scipy._reference")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
