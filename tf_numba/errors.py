"""The errors tf_numba raises: every one is a ``TfNumbaError`` and says what to do next.

Errors raised while tracing carry the primitive (``op``) and the user's source line
(``source``); both are added to the message so a person sees where it came from. The op
is written once, by ``TfNumbaError`` itself, in front of the message: a raise site passes
``op=`` and a message that does not start with the op's name ("got different sizes ...",
not "vmap got different sizes ..."), so no message says its op twice.
"""


class TfNumbaError(Exception):
    """Base class of every error tf_numba raises on purpose."""

    def __init__(self, message, *, op=None, source=None):
        self.op = op
        self.source = source
        self.detail = message
        super().__init__(self._render())

    def _render(self):
        text = f"{self.op}: {self.detail}" if self.op else self.detail
        if self.source:
            text += f"\n  at {self.source}"
        return text

    def locate(self, op, source):
        """Fill in the op and the user's source line if the raiser did not know them."""
        if self.op is None:
            self.op = op
        if self.source is None:
            self.source = source
        self.args = (self._render(),)
        return self


class ShapeError(TfNumbaError, ValueError, TypeError):
    """Shapes that do not fit the operation (broadcasting, contraction, reshape, ...): a
    ``ValueError`` as NumPy raises, and a ``TypeError`` as JAX raises (shapes are part of
    an array's type there), so code written against either catches it."""


class DTypeError(TfNumbaError, TypeError):
    """A dtype that tf_numba does not support, or that the operation does not accept."""


class ConcretizationError(TfNumbaError, TypeError):
    """A traced value was used where Python needs a concrete one (``if``, ``int()``, ...)."""


class UnboundAxisError(TfNumbaError, NameError):
    """A collective over an axis name that no enclosing ``shard_map`` or ``pmap`` binds (a
    ``NameError``, as JAX's)."""


class UnsupportedError(TfNumbaError, NotImplementedError):
    """A feature or argument combination that tf_numba does not implement."""


class TfIndexError(TfNumbaError, IndexError):
    """An index out of range, or an index kind that cannot be traced."""


class MissingRuleError(TfNumbaError, NotImplementedError):
    """A primitive (or extension family op) has no rule for a transform role."""

    def __init__(self, prim, role, family=None):
        owner = f"this op of family {family!r}" if family else "this primitive"
        super().__init__(
            f"{owner} has no {role} rule, so this transform cannot be applied to it",
            op=str(prim))
        self.role = role


class TracerArrayConversionError(TfNumbaError, TypeError):
    """A NumPy function (``np.sin``, ``np.asarray``, ...) was handed a traced value."""


class TracerLeakError(TfNumbaError, RuntimeError):
    """A traced value escaped the function being traced and was used afterwards."""


class ArgumentError(TfNumbaError, ValueError, TypeError):
    """Arguments that do not fit the transform (``argnums``, ``in_axes``, options, the
    structure of tangents or cotangents, a call that does not bind): JAX raises
    ``ValueError`` for some of these and ``TypeError`` for others, so this is both."""


class ImmutableArrayError(TfNumbaError, TypeError):
    """An in-place update of a traced array (``x[i] = v``): use ``x.at[i].set(v)``."""


class PytreeError(TfNumbaError, TypeError, ValueError):
    """A pytree that does not match the expected structure (JAX raises ValueError for
    mismatched trees, and TypeError for a leaf it cannot take: this is both)."""


class RuntimeUsageError(TfNumbaError):
    """Base of the errors ``tf_numba.runtime`` raises for a misuse of its API."""


class SpecializationMismatch(RuntimeUsageError):
    """``Runtime.run`` got inputs that do not match what the plan was prepared for."""


class UnboundPlaceholder(RuntimeUsageError):
    """A program input has no value: none was given and the leaf has no default data."""


class ConcurrentReconfiguration(RuntimeUsageError):
    """``Runtime.reconfigure`` lost a race: the snapshot changed since the caller read it."""


class EmptyTargets(RuntimeUsageError):
    """``prepare`` was given no engine targets."""


class NoEngineForTarget(RuntimeUsageError):
    """``run`` was given no engine for one of the prepared targets."""


class EngineMismatch(RuntimeUsageError):
    """``run`` was given engines whose count or order differs from the prepared targets."""


class ForeignPrepared(RuntimeUsageError):
    """A ``Prepared`` plan from another Runtime was passed to ``run``."""


class StalePrepared(RuntimeUsageError):
    """A ``Prepared`` plan from an older epoch (before ``reconfigure``) was passed to ``run``."""


__all__ = sorted(name for name, value in globals().items()
                 if isinstance(value, type) and issubclass(value, TfNumbaError))
