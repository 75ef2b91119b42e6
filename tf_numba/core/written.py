"""Python functions written as source for one structure: a pytree's shape
(``pytree._write_builder``), a jitted call's arguments (``jit._reader_for``). The values
the source uses are bound as its globals under names of their own."""


class Written:
    """The globals of a function being written: ``bind`` names a value for the source,
    ``function`` compiles the source and returns the function it defines."""

    def __init__(self, **named):
        self.globals = dict(named)

    def bind(self, value):
        name = f"_c{len(self.globals)}"
        self.globals[name] = value
        return name

    def function(self, source, name):
        exec(compile(source, f"<tf_numba {name}>", "exec"), self.globals)
        return self.globals[name]
