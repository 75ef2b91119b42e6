"""Which values ``tf.checkpoint`` keeps for the backward pass, by JAX's names
(``jax.checkpoint_policies``).

A policy is a function ``policy(prim, *avals, **params) -> bool`` (keep this equation's
output?), as JAX's. ``tf.checkpoint`` keeps either everything (``everything_saveable``:
as if not checkpointed) or nothing (every other policy, ``nothing_saveable`` the default):
a policy that keeps some values (products, named values) is followed by keeping none of
them, which computes the same values with more recomputation in the backward pass.

>>> f = tf.checkpoint(g, policy=tf.checkpoint_policies.dots_saveable)
"""

__all__ = ["checkpoint_dots", "checkpoint_dots_with_no_batch_dims", "dots_saveable",
           "dots_with_no_batch_dims_saveable", "everything_saveable", "nothing_saveable",
           "offload_dot_with_no_batch_dims", "save_and_offload_only_these_names",
           "save_any_names_but_these", "save_anything_except_these_names",
           "save_from_both_policies", "save_only_these_names"]


def everything_saveable(*_, **__):
    """Keep every value: the function is not rematerialized."""
    return True


def nothing_saveable(*_, **__):
    """Keep no value: everything is recomputed in the backward pass (the default)."""
    return False


def _is_product(prim, *_, **__):
    return getattr(prim, "name", str(prim)) == "dot_general"


def dots_saveable(prim, *avals, **params):
    """Keep the products' outputs (followed here by keeping nothing)."""
    return _is_product(prim)


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    """Keep the outputs of products without batch dimensions (followed here by keeping
    nothing)."""
    dims = params.get("dimension_numbers")
    return _is_product(prim) and not (dims and (dims[1][0] or dims[1][1]))


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """Move those products' outputs to host memory (one memory here: keep nothing)."""
    return dots_with_no_batch_dims_saveable


def save_only_these_names(*names):
    """Keep the values named by ``checkpoint_name`` (names are not recorded here: keep
    nothing)."""
    return nothing_saveable


def save_anything_except_these_names(*names):
    """Keep every value but the named ones (followed here by keeping nothing)."""
    return nothing_saveable


save_any_names_but_these = save_anything_except_these_names


def save_and_offload_only_these_names(*, names_which_can_be_saved=(),
                                      names_which_can_be_offloaded=(), offload_src=None,
                                      offload_dst=None):
    """Keep or offload the values named by ``checkpoint_name`` (names are not recorded
    here: keep nothing)."""
    return nothing_saveable


def save_from_both_policies(policy_1, policy_2):
    """Keep what either policy keeps."""
    def policy(*args, **kwargs):
        return policy_1(*args, **kwargs) or policy_2(*args, **kwargs)
    return policy


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
