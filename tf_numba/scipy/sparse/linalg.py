"""Krylov solvers of ``A x = b`` as ``jax.scipy.sparse.linalg``: ``cg`` (Hermitian positive
definite ``A``), ``gmres`` and ``bicgstab`` (any ``A``). ``A`` (and the preconditioner
``M``) is a function ``x -> A x`` or a square matrix; ``b`` an array or a pytree of arrays.

Each solver is a ``lax.while_loop`` inside ``lax.custom_linear_solve``: it compiles and
batches as a loop, and its derivative is implicit (another solve with the transposed
operator), never through the iterations, so it is right when both solves converge. The
stopping rule is SciPy's current one: ``norm(r) <= max(tol * norm(b), atol)``.

>>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> cg(lambda x: a @ x, np.array([1.0, 2.0]))[0]
array([0.09090909, 0.63636364])
"""
import functools
import operator

import numpy as np

import tf_numba.numpy as tnp

from ... import lax
from ...errors import ArgumentError, ShapeError
from ...tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "gmres", "bicgstab"]


# ---------------------------------------------------------------- vectors that are pytrees

def _vdot(x, y):
    """``sum(conj(x) * y)`` over every leaf."""
    return sum(tnp.vdot(a, b) for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _vdot_real(x, y):
    """The real part of ``_vdot`` (the real-imaginary cross terms left out): the value of a
    Hermitian form ``z^H M z``, which is real."""
    return sum(tnp.vdot(tnp.real(a), tnp.real(b)) + (tnp.vdot(tnp.imag(a), tnp.imag(b))
                                                     if tnp.iscomplexobj(a) else 0)
               for a, b in zip(tree_leaves(x), tree_leaves(y)))


def _norm(x):
    return tnp.sqrt(_vdot_real(x, x))


def _scaled(scalar, tree):
    return tree_map(lambda v: scalar * v, tree)


_add = functools.partial(tree_map, operator.add)
_sub = functools.partial(tree_map, operator.sub)


def _identity(x):
    return x


def _operator(a, name, what):
    """``a`` as a function ``x -> a x``: a function as it is, a square matrix by ``@``."""
    if callable(a):
        return a
    if hasattr(a, "shape") and hasattr(a, "__matmul__"):
        shape = tuple(np.shape(a))
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ShapeError(f"the {what} must be a square matrix or a function, got shape "
                             f"{shape}", op=name)
        return lambda x: tnp.matmul(a, x)
    raise ArgumentError(f"the {what} must be a function x -> A x or a square matrix, got "
                        f"{type(a).__name__}", op=name)


def _prepare(name, A, b, x0, M):
    """The operator, preconditioner and start of a solve, checked against ``b``."""
    if x0 is None:
        x0 = tree_map(tnp.zeros_like, b)
    if tree_structure(x0) != tree_structure(b):
        raise ShapeError(f"x0 and b must have one tree structure: {tree_structure(x0)} "
                         f"vs {tree_structure(b)}", op=name)
    shapes = ([np.shape(v) for v in tree_leaves(x0)], [np.shape(v) for v in tree_leaves(b)])
    if shapes[0] != shapes[1]:
        raise ShapeError(f"the arrays of x0 and b must have equal shapes: {shapes[0]} vs "
                         f"{shapes[1]}", op=name)
    M = _identity if M is None else _operator(M, name, "preconditioner M")
    return _operator(A, name, "linear operator A"), x0, M


def _size(b):
    return sum(int(np.size(v)) if not hasattr(v, "shape") else int(np.prod(v.shape))
               for v in tree_leaves(b))


def _dtype(tree):
    return tnp.result_type(*tree_leaves(tree))


# ---------------------------------------------------------------- cg and bicgstab

def _cg(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned conjugate gradients (Shewchuk, "An Introduction to the Conjugate
    Gradient Method Without the Agonizing Pain", B3)."""
    atol2 = tnp.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = _dtype(z0)
    gamma0 = tnp.asarray(_vdot_real(r0, z0)).astype(dtype)

    def keep_going(state):
        _, r, gamma, _, k = state
        rs = tnp.real(gamma) if M is _identity else _vdot_real(r, r)
        return (rs > atol2) & (k < maxiter)

    def step(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = gamma / tnp.asarray(_vdot_real(p, ap)).astype(dtype)
        x = _add(x, _scaled(alpha, p))
        r = _sub(r, _scaled(alpha, ap))
        z = M(r)
        gamma_next = tnp.asarray(_vdot_real(r, z)).astype(dtype)
        p = _add(z, _scaled(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(keep_going, step, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned BiCGSTAB (van der Vorst, SIAM J. Sci. Stat. Comput. 13 (1992) 631),
    stopping early on a small intermediate residual and on breakdown (``rho``, ``alpha`` or
    ``omega`` zero)."""
    atol2 = tnp.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r0 = _sub(b, A(x0))
    one = tnp.ones((), _dtype(b))

    def keep_going(state):
        r, k = state[1], state[-1]
        return (_vdot_real(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _vdot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _scaled(beta, _sub(p, _scaled(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _vdot(rhat, q)
        s = _sub(r, _scaled(alpha, q))
        done = _vdot_real(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega = _vdot(t, s) / _vdot(t, t)
        x = tree_map(lambda short, full: tnp.where(done, short, full),
                     _add(x, _scaled(alpha, phat)),
                     _add(x, _add(_scaled(alpha, phat), _scaled(omega, shat))))
        r = tree_map(lambda short, full: tnp.where(done, short, full),
                     s, _sub(s, _scaled(omega, t)))
        k = tnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = tnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(keep_going, step, state)[0]


def _krylov(name, method, A, b, x0, tol, atol, maxiter, M, symmetric):
    A, x0, M = _prepare(name, A, b, x0, M)
    if maxiter is None:
        maxiter = 10 * _size(b)           # SciPy's default
    solve = functools.partial(method, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    real = all(not tnp.iscomplexobj(v) for v in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve,
                                symmetric=symmetric and real)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """``(x, None)`` with ``A x = b`` for a Hermitian positive definite ``A``, by conjugate
    gradients preconditioned by ``M`` (an approximate inverse of ``A``), as
    ``jax.scipy.sparse.linalg.cg``; at most ``maxiter`` steps (default ``10 * size``).
    Its derivative is implicit (a second ``cg`` solve).

    >>> cg(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]))[0]
    array([0.09090909, 0.63636364])
    """
    return _krylov("cg", _cg, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """``(x, None)`` with ``A x = b`` for any square ``A``, by BiCGSTAB preconditioned by
    ``M``, as ``jax.scipy.sparse.linalg.bicgstab``; its derivative is implicit (a
    ``bicgstab`` solve with the transposed operator).

    >>> bicgstab(np.array([[4.0, 1.0], [0.0, 3.0]]), np.array([1.0, 3.0]))[0]
    array([0., 1.])
    """
    return _krylov("bicgstab", _bicgstab, A, b, x0, tol, atol, maxiter, M, symmetric=False)


# ---------------------------------------------------------------- gmres

def _normalized(x, threshold=None):
    """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is below ``threshold``
    (the dtype's epsilon by default)."""
    norm = _norm(x)
    if threshold is None:
        threshold = float(np.finfo(np.dtype(_dtype(norm))).eps)
    big = norm > threshold
    dtype = _dtype(x)
    scale = tnp.where(big, norm, 1.0).astype(dtype)
    return tree_map(lambda v: tnp.where(big, v / scale, 0), x), tnp.where(big, norm, 0.0)


def _column(V, k):
    return tree_map(lambda basis: lax.dynamic_index_in_dim(basis, k, basis.ndim - 1, False), V)


def _arnoldi_step(k, A, M, V, H):
    """Column ``k + 1`` of the Krylov basis ``V`` (the last axis of each leaf) and row ``k``
    of the Hessenberg matrix ``H`` (stored transposed): ``M A v_k`` orthogonalized against
    the basis by classical Gram-Schmidt done twice, which is as accurate as the modified
    form (Giraud et al., Numer. Math. 101 (2005) 87). A vector that vanishes is a
    breakdown: the solution lies in the basis so far."""
    w = M(A(_column(V, k)))
    _, norm0 = _normalized(w)
    h = 0
    for _ in range(2):
        overlap = sum(tnp.tensordot(tnp.conj(basis), v, (range(v.ndim), range(v.ndim)))
                      for basis, v in zip(tree_leaves(V), tree_leaves(w)))
        w = tree_map(lambda v, basis: v - tnp.tensordot(basis, overlap, 1), w, V)
        h = h + overlap
    eps = float(np.finfo(np.dtype(_dtype(norm0))).eps)
    unit, norm1 = _normalized(w, eps * norm0)
    V = tree_map(lambda basis, u: lax.dynamic_update_index_in_dim(
        basis, u, k + 1, basis.ndim - 1), V, unit)
    h = lax.dynamic_update_index_in_dim(h, norm1.astype(h.dtype), k + 1, 0)
    H = lax.dynamic_update_index_in_dim(H, h, k, 0)
    return V, H, norm1 == 0


def _gmres_cycle(A, b, x, unit_residual, residual_norm, restart, M):
    """One restart: the Arnoldi basis of ``restart`` vectors (fewer on a breakdown), then
    the update in its span that minimizes the residual (the small least-squares problem of
    the Hessenberg matrix, by its normal equations)."""
    V = tree_map(lambda v: tnp.concatenate(
        [v[..., None], tnp.zeros(tuple(v.shape) + (restart,), v.dtype)], axis=-1),
        unit_residual)
    dtype = _dtype(b)
    H = tnp.eye(restart, restart + 1, dtype=dtype)

    def keep_going(state):
        _, _, breakdown, k = state
        return (k < restart) & tnp.logical_not(breakdown)

    def step(state):
        V, H, _, k = state
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(keep_going, step, (V, H, False, 0))
    rhs = tnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
    hessenberg = H.T
    y = tnp.linalg.solve(tnp.conj(hessenberg.T) @ hessenberg, tnp.conj(hessenberg.T) @ rhs)
    x = _add(x, tree_map(lambda basis: basis[..., :-1] @ y, V))
    unit, norm = _normalized(M(_sub(b, A(x))))
    return x, unit, norm


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """``(x, info)`` with ``A x = b`` for any square ``A``, by restarted GMRES (Saad and
    Schultz, SIAM J. Sci. Stat. Comput. 7 (1986) 856) preconditioned on the left by ``M``,
    as ``jax.scipy.sparse.linalg.gmres``: Krylov bases of ``restart`` vectors, at most
    ``maxiter`` restarts (default ``10 * size``); ``info`` is -1 if the result is NaN,
    else 0. ``solve_method`` ('batched' or 'incremental') is accepted and each restart
    solves its least-squares problem once, at its end. Its derivative is implicit.

    >>> gmres(np.array([[4.0, 1.0], [0.0, 3.0]]), np.array([1.0, 3.0]))[0]
    array([0., 1.])
    """
    if solve_method not in ("batched", "incremental"):
        raise ArgumentError(f"solve_method must be 'batched' or 'incremental', got "
                            f"{solve_method!r}", op="gmres")
    A, x0, M = _prepare("gmres", A, b, x0, M)
    size = _size(b)
    maxiter = 10 * size if maxiter is None else maxiter
    restart = min(restart, size)
    b_norm = _norm(b)
    atol = tnp.maximum(tol * b_norm, atol)

    def solve(A, b):
        unit, norm = _normalized(M(_sub(b, A(x0))))

        def keep_going(state):
            return (state[1] < maxiter) & (state[3] > atol)

        def step(state):
            x, k, unit, norm = state
            x, unit, norm = _gmres_cycle(A, b, x, unit, norm, restart, M)
            return x, k + 1, unit, norm
        return lax.while_loop(keep_going, step, (x0, 0, unit, norm))[0]

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, tnp.where(tnp.isnan(_norm(x)), -1, 0)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
