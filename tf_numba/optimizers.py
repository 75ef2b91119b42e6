"""Optimizers as ``jax.example_libraries.optimizers``: each is an ``(init, update,
get_params)`` triple over any pytree of parameters, whose state is a pytree of arrays, so
``update`` can be jitted. Step sizes are numbers or schedules ``step -> step size``.

>>> opt_init, opt_update, get_params = adam(1e-3)
>>> state = opt_init({"w": np.zeros(3), "b": 0.0})
>>> step = tf.jit(lambda i, state, x: opt_update(i, tf.grad(loss)(get_params(state), x), state))
>>> for i in range(100):
...     state = step(i, state, x)
"""
import collections
import functools
import math

import numpy as np

from . import numpy as tnp
from .core import pytree
from .errors import ArgumentError, PytreeError, ShapeError

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "adamw",
           "clip_by_global_norm", "clip_grads", "constant", "cosine_decay",
           "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum",
           "nesterov", "optimizer", "pack_optimizer_state", "piecewise_constant",
           "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
           "unpack_optimizer_state", "warmup"]

Optimizer = collections.namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


class OptimizerState(collections.namedtuple("OptimizerState",
                                            ["packed_state", "tree_def", "subtree_defs"])):
    """An optimizer's state: the flattened per-parameter states (the pytree's children,
    arrays) and the structures that unflatten them (static, part of its tree structure)."""


pytree.register_pytree_node(
    OptimizerState, lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


# ---------------------------------------------------------------- schedules

def constant(step_size):
    """The schedule ``i -> step_size``."""
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``."""
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)`` (``floor`` of the ratio with
    ``staircase``)."""
    def schedule(i):
        ratio = tnp.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * ratio)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` as ``(1 - i / decay_steps) ** power``, then
    constant."""
    def schedule(i):
        frac = 1 - tnp.minimum(i, decay_steps) / decay_steps
        return (step_size - final_step_size) * frac ** power + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` for ``boundaries[k-1] < i <= boundaries[k]``, as JAX's (len(values) =
    len(boundaries) + 1)."""
    boundaries, values = np.asarray(boundaries), np.asarray(values)
    if values.shape != (boundaries.size + 1,):
        raise ArgumentError(f"{values.size} values for {boundaries.size} boundaries; give "
                            "one more value than boundaries", op="piecewise_constant")

    def schedule(i):
        return tnp.take(values, tnp.sum(tnp.asarray(i) > boundaries))
    return schedule


def cosine_decay(step_size, decay_steps, alpha=0.0):
    """Half a cosine from ``step_size`` down to ``alpha * step_size`` over ``decay_steps``
    steps, then constant (optax's ``cosine_decay_schedule``)."""
    def schedule(i):
        cosine = 0.5 * (1 + tnp.cos(math.pi * tnp.minimum(i, decay_steps) / decay_steps))
        return step_size * ((1 - alpha) * cosine + alpha)
    return schedule


def warmup(step_size, warmup_steps, init_value=0.0):
    """A linear ramp from ``init_value`` to ``step_size(0)`` over ``warmup_steps`` steps,
    then the schedule ``step_size`` (a number or a schedule) from its step 0.

    >>> lr = warmup(cosine_decay(1e-3, 1000), warmup_steps=100)
    """
    after = make_schedule(step_size)

    def schedule(i):
        ramp = init_value + (after(0) - init_value) * (i / warmup_steps)
        return tnp.where(i < warmup_steps, ramp, after(tnp.maximum(i - warmup_steps, 0)))
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a schedule or from a constant step size."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0 and np.asarray(scalar_or_schedule).dtype.kind in "biuf":
        return constant(scalar_or_schedule)
    raise ArgumentError(f"a step size is a number or a function of the step number, got "
                        f"{type(scalar_or_schedule).__name__} {scalar_or_schedule!r}")


def _scale(step_size, i, x):
    """The step size at step ``i`` in the dtype of the parameter ``x``: an array step size
    (a schedule's) would otherwise widen float32 parameters to float64."""
    value = step_size(i)
    if type(value) in (int, float):   # weak: takes x's dtype
        return value
    return tnp.asarray(value, dtype=tnp.result_type(x))


def _step_count(i, x):
    """``i + 1`` in ``x``'s dtype, for bias corrections ``1 - b ** (i + 1)``."""
    return tnp.asarray(i + 1, dtype=tnp.result_type(x))


# ---------------------------------------------------------------- the pytree wrapper

def optimizer(opt_maker):
    """Decorator: make an optimizer over pytrees from one over single arrays.

    ``opt_maker(*args)`` returns ``(init(x0) -> state, update(i, g, state) -> state,
    get_params(state) -> x)`` for one array; a state is a pytree of arrays.
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_flat, tree = pytree.flatten(x0_tree)
            states = [pytree.flatten(init(tnp.asarray(x0))) for x0 in x0_flat]
            return OptimizerState([s for s, _ in states], tree, tuple(t for _, t in states))

        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = pytree.flatten(grad_tree)
            if grad_tree_def != tree:
                raise PytreeError(f"the gradient has structure {grad_tree_def}, the "
                                  f"parameters {tree}; pass the gradient of the parameters "
                                  "the state was made from", op=f"{opt_maker.__name__} update")
            new = []
            for k, (g, s, sub) in enumerate(zip(grad_flat, states_flat, subtrees)):
                state = pytree.unflatten(sub, s)
                if tnp.shape(g) != tnp.shape(get_params(state)):
                    _wrong_gradient_shape(opt_maker.__name__, grad_tree, k, g,
                                          get_params(state))
                leaves, sub_new = pytree.flatten(update(i, g, state))
                if sub_new != sub:
                    raise PytreeError(f"changed a state's structure from {sub} to "
                                      f"{sub_new}", op=f"{opt_maker.__name__} update")
                new.append(leaves)
            return OptimizerState(new, tree, subtrees)

        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            return pytree.unflatten(tree, [get_params(pytree.unflatten(sub, s))
                                           for s, sub in zip(states_flat, subtrees)])
        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _wrong_gradient_shape(name, grad_tree, k, g, x):
    """A gradient leaf of another shape than its parameter would broadcast into it (or
    fail in NumPy's words): say which leaf."""
    path = pytree.keystr(pytree.flatten_with_path(grad_tree)[0][k][0])
    raise ShapeError(f"the gradient{path} has shape {tnp.shape(g)}, its parameter "
                     f"{tnp.shape(x)}; pass the gradient of the parameters the state was "
                     "made from", op=f"{name} update")


def _first(state):
    return state[0]


# ---------------------------------------------------------------- optimizers

@optimizer
def sgd(step_size):
    """Gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - _scale(step_size, i, x) * g
    return init, update, lambda x: x


@optimizer
def momentum(step_size, mass):
    """Heavy ball: ``v = mass * v + g``, ``x - step_size(i) * v``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _scale(step_size, i, x) * velocity, velocity
    return init, update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: ``v = mass * v + g``, ``x - step_size(i) * (mass * v + g)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - _scale(step_size, i, x) * (mass * velocity + g), velocity
    return init, update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum (Duchi et al. 2011), as JAX's: ``m`` averages
    ``g / sqrt(sum of g**2)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), tnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + tnp.square(g)
        g_sq_inv_sqrt = tnp.where(g_sq > 0, 1.0 / tnp.sqrt(tnp.where(g_sq > 0, g_sq, 1.0)),
                                  0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - _scale(step_size, i, x) * m, g_sq, m
    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (Tieleman and Hinton 2012): ``x - step_size(i) * g / sqrt(avg g**2 + eps)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + tnp.square(g) * (1.0 - gamma)
        return x - _scale(step_size, i, x) * g / tnp.sqrt(avg_sq_grad + eps), avg_sq_grad
    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum, as JAX's: ``mom = momentum * mom + step_size(i) * g /
    sqrt(avg g**2 + eps)``, ``x - mom``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), tnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + tnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + _scale(step_size, i, x) * g / tnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom
    return init, update, _first


def _adam_direction(i, g, x, m, v, b1, b2, eps):
    """Adam's moments and bias-corrected direction (Kingma and Ba 2015, Algorithm 1)."""
    m = (1 - b1) * g + b1 * m
    v = (1 - b2) * tnp.square(g) + b2 * v
    t = _step_count(i, x)
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    return m, v, mhat / (tnp.sqrt(vhat) + eps)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2015), as JAX's ``optimizers.adam``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), tnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m, v, direction = _adam_direction(i, g, x, m, v, b1, b2, eps)
        return x - _scale(step_size, i, x) * direction, m, v
    return init, update, _first


@optimizer
def adamw(step_size, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4):
    """Adam with decoupled weight decay (Loshchilov and Hutter 2019), as optax's ``adamw``:
    ``x - step_size(i) * (adam direction + weight_decay * x)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), tnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m, v, direction = _adam_direction(i, g, x, m, v, b1, b2, eps)
        return x - _scale(step_size, i, x) * (direction + weight_decay * x), m, v
    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam under the infinity norm (Kingma and Ba 2015, Algorithm 2), as JAX's:
    ``u = max(b2 * u, |g|)``, ``x - step_size(i) / (1 - b1 ** (i + 1)) * m / (u + eps)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), tnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = tnp.maximum(b2 * u, tnp.abs(g))
        rate = _scale(step_size, i, x) / (1 - b1 ** _step_count(i, x))
        return x - rate * m / (u + eps), m, u
    return init, update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019, "Memory-efficient adaptive optimization"), as JAX's: the
    accumulated squared gradient is kept as one vector per axis (its maxima over the other
    axes), and each entry's is the minimum of its vectors' entries, plus ``g**2``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, tnp.zeros_like(x0), [tnp.zeros(n, x0.dtype) for n in tnp.shape(x0) or (1,)]

    def update(i, g, state):
        x, m, vs = state
        shape = tnp.shape(x)
        rank = len(vs)          # a scalar parameter keeps one accumulator of length 1
        g1 = tnp.reshape(g, shape or (1,))
        per_axis = [tnp.expand_dims(v, [a for a in range(rank) if a != axis])
                    for axis, v in enumerate(vs)]
        accum = functools.reduce(tnp.minimum, per_axis) + tnp.square(g1)
        inv_sqrt = tnp.where(accum > 0, 1.0 / tnp.sqrt(tnp.where(accum > 0, accum, 1.0)), 0.0)
        m = (1.0 - momentum) * (g * tnp.reshape(inv_sqrt, shape)) + momentum * m
        vs = [tnp.max(accum, axis=tuple(a for a in range(rank) if a != axis))
              for axis in range(rank)]
        return x - _scale(step_size, i, x) * m, m, vs
    return init, update, _first


# ---------------------------------------------------------------- gradient clipping

def l2_norm(tree):
    """The Euclidean norm of all the leaves of ``tree`` together."""
    return tnp.sqrt(sum(tnp.real(tnp.vdot(x, x)) for x in pytree.flatten(tree)[0]))


def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled down to global norm ``max_norm`` if its norm is larger
    (clipping by global norm, Pascanu et al. 2013), as JAX's ``optimizers.clip_grads``.

    >>> state = opt_update(i, clip_grads(tf.grad(loss)(params), 1.0), state)
    """
    norm = l2_norm(grad_tree)
    return pytree.tree_map(
        lambda g: tnp.where(norm < max_norm, g,
                            g * tnp.asarray(max_norm / tnp.maximum(norm, max_norm),
                                            dtype=tnp.result_type(g))),
        grad_tree)


clip_by_global_norm = clip_grads


# ---------------------------------------------------------------- serialization

class JoinPoint:
    """A leaf of ``unpack_optimizer_state``'s tree: one parameter's state (a pytree), kept
    whole so that the two levels of the optimizer state can be told apart again."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """``opt_state`` as the parameters' pytree with a ``JoinPoint`` of each parameter's
    state at its leaf (for saving with pickle or a checkpointer); ``pack_optimizer_state``
    is its inverse.

    >>> saved = pickle.dumps(unpack_optimizer_state(state))
    >>> state = pack_optimizer_state(pickle.loads(saved))
    """
    states_flat, tree, subtrees = opt_state
    return pytree.unflatten(tree, [JoinPoint(pytree.unflatten(sub, s))
                                   for s, sub in zip(states_flat, subtrees)])


def pack_optimizer_state(marked_pytree):
    """The ``OptimizerState`` that ``unpack_optimizer_state`` made ``marked_pytree`` of."""
    joins, tree = pytree.flatten(marked_pytree)
    if not all(isinstance(j, JoinPoint) for j in joins):
        raise PytreeError("every leaf must be a JoinPoint, as unpack_optimizer_state makes "
                          f"them; got {sorted({type(j).__name__ for j in joins})}",
                          op="pack_optimizer_state")
    states = [pytree.flatten(j.subtree) for j in joins]
    return OptimizerState([s for s, _ in states], tree, tuple(t for _, t in states))


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
