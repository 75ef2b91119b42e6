"""What a public module shows: ``dir()`` lists its ``__all__``, not the helpers it imports.

The public modules (``tf``, ``tnp``, ``tf.lax``, ... : ``tf_numba._reference`` lists them)
end with ``__dir__ = public_dir(globals())``.
"""


def public_dir(module_globals):
    """A module's ``__dir__`` (PEP 562) listing its ``__all__`` and dunder names, so that
    ``dir()`` and tab completion show the module's API, not ``np`` or ``dtypes``.

    >>> __dir__ = public_dir(globals())      # at the end of a public module
    """
    def __dir__():
        return sorted(set(module_globals["__all__"])
                      | {n for n in module_globals if n.startswith("__")})
    return __dir__
