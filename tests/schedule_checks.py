"""Reading a jitted function's schedules in tests: what the compiler decided, never the
text it generated (``tf_numba/lowering/schedule.py``)."""
from tf_numba.lowering.schedule import Call, Nest, RowBlock


def schedules(f, *args):
    """The schedules of ``f``'s kernels (a jitted function) for ``args``."""
    return f.lower(*args).schedules


def records(f, *args):
    """Every record of every kernel, bodies' included."""
    return [r for s in schedules(f, *args) for r in s.walk()]


def calls(f, *args, prim=None):
    """The library calls (of primitive ``prim``, a name, if given)."""
    return [r for r in records(f, *args)
            if type(r) is Call and (prim is None or r.eqn.prim.name == prim)]


def products(f, *args):
    """The ``products.Product`` of each ``dot_general`` call."""
    return [c.product for c in calls(f, *args, prim="dot_general")]


def nests(f, *args):
    return [r for r in records(f, *args) if type(r) is Nest]


def blocks(f, *args):
    return [r for r in records(f, *args) if type(r) is RowBlock]


def threaded(f, *args):
    """Has any kernel a prange (a threaded nest or row block)?"""
    return any(s.threaded for s in schedules(f, *args))


def helpers(f, *args):
    """The ``loops`` helpers the products call, and whether windows are threaded."""
    found = {p.helper for p in products(f, *args)}
    found |= {f"{c.eqn.prim.name} threaded" for c in calls(f, *args) if c.threaded}
    return found


def numpy_steps(f, *args):
    """The primitives ``f``'s plan runs as NumPy steps between its kernels."""
    plan = f.lower(*args).plan
    return [seg.eqn.prim.name for seg in plan.variant_for(1).segments if hasattr(seg, "eqn")]
