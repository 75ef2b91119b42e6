"""CNN training step: value_and_grad of a 2-conv-layer classifier on 28x28x1 images.

Batch 64, float32, NHWC: conv 3x3 (1 -> 16, SAME) + bias + relu, 2x2 max pool, conv 3x3
(16 -> 32, SAME) + bias + relu, 2x2 max pool, dense 1568 -> 10, softmax cross-entropy
on one-hot labels; the gradient is taken with respect to the six parameters.
Tools, timed interleaved in one process: tf_numba ``jit(value_and_grad(loss))`` (default
engine and all cores), tf_numba un-jitted (the NumPy interpreter), NumPy hand-written
im2col forward + backward (the reference), JAX ``jit(value_and_grad(loss))`` in both
dispatch configurations, and PyTorch on the CPU when it is installed.
Target: tf_numba faster than JAX (and than PyTorch, when present).

    python perf/cnn_bench.py [--quick] [--rounds N] [--json PATH]

How the convolution is built was chosen on this step (``tf_numba/ops/windows.py``): as a
composite of ``pad``, one strided ``slice`` per kernel offset, ``concatenate`` and
``dot_general``, every copy is a loop nest in the kernel, and numba took 98 s to compile
this step (jit 27 ms a step, JAX 40 ms, in that session). im2col and col2im are two
primitives; run as NumPy impls between three kernels they took 6.6 of the step's 16.5 ms
(one core), as hand-written loops called inside one kernel 2.2 ms (``loops.patches_into``).
On all cores the step is half products and half loops: the plan's parallel variant runs
each large product as one single-threaded BLAS call per chunk of rows (or of the
contraction, for the kernels' gradients) and im2col/col2im by examples, all on numba's
threads (``library._product``), where BLAS alone on two threads left the loops on one.

Where the all-cores step's ~3.6 ms went (each top-level step of its kernel timed by a
clock read between steps): the second layer's three products ~1.5 ms (BLAS), im2col
0.13 + 0.14 ms, the pools' passes ~0.4 ms, bias + relu and their backward ~0.25 ms.
Since then: the relu backward's bias-gradient sums run in row chunks on both threads
(they ran serially, 0.32 ms); the backward pass reads the pool's 1-byte mask of the maxima,
not its float conversion (``lowering/rewrites.convert_masks_where_read``: 0.19 -> 0.10 ms
in each direction); the input gradient's product and col2im are one step a few examples
at a time (``product_patches_transpose``); a one-channel im2col has a loop of its own.
Tried and measured slower: a direct convolution of the one-channel first layer (numba
loops over a 16-wide feature axis: 1.1 ms forward, 0.8 ms kernel gradient, against
~0.3 ms as im2col + BLAS), and im2col cut a few examples at a time into the forward
product and the kernel's gradient (layer 2: 0.71 and 0.74 ms against 0.65 and 0.55).
Measured and not built: the pools' backward products (gradient x mask) computed inside
the relu backward's loop, so neither is written out (a reshape that splits 28 into 14 x 2
stops the partitioner fusing them): the step 1.7% faster in 25 paired rounds, less than
the partitioner change is worth. Taking one step out of the kernel at a time (all cores,
15 paired rounds) put the three layer-2 products at 0.55 ms (forward), 0.59 (kernel
gradient) and 0.75 (input gradient with col2im) of a 3.8 ms step, im2col at 0.07 and
0.13, every elementwise or pooling loop under 0.1 ms.
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402
from tf_numba import lax, nn  # noqa: E402

BATCH, SIDE, C1, C2, CLASSES = 64, 28, 16, 32, 10
DENSE_IN = (SIDE // 4) ** 2 * C2
DN = ("NHWC", "HWIO", "NHWC")


def loss(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    h = nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=DN) + b1)
    h = nn.max_pool(h, (2, 2), (2, 2))
    h = nn.relu(lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=DN) + b2)
    h = nn.max_pool(h, (2, 2), (2, 2)).reshape(x.shape[0], -1)
    logits = h @ w3 + b3
    return -tnp.sum(y * nn.log_softmax(logits)) / x.shape[0]


# ---------------------------------------------------------------- NumPy hand-written

def _im2col(x):
    """(n, h, w, c) -> (n*h*w, 9c) patches of a 3x3 SAME convolution, offsets major."""
    n, h, w, c = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    cols = np.empty((n, h, w, 9, c), x.dtype)
    for k in range(9):
        i, j = divmod(k, 3)
        cols[:, :, :, k, :] = xp[:, i:i + h, j:j + w, :]
    return cols.reshape(n * h * w, 9 * c)


def _col2im(cols, shape):
    n, h, w, c = shape
    cols = cols.reshape(n, h, w, 9, c)
    xp = np.zeros((n, h + 2, w + 2, c), cols.dtype)
    for k in range(9):
        i, j = divmod(k, 3)
        xp[:, i:i + h, j:j + w, :] += cols[:, :, :, k, :]
    return xp[:, 1:-1, 1:-1, :]


def _pool(h):
    n, hh, ww, c = h.shape
    r = h.reshape(n, hh // 2, 2, ww // 2, 2, c)
    return r.max(axis=(2, 4)), r


def _unpool(g, r, m):
    """The max pool's gradient, shared among ties as tf_numba and JAX's reduce max do."""
    mask = r == m[:, :, None, :, None, :]
    share = mask / mask.sum(axis=(2, 4), keepdims=True)
    return (share * g[:, :, None, :, None, :]).reshape(
        r.shape[0], r.shape[1] * 2, r.shape[3] * 2, r.shape[5]).astype(g.dtype)


def numpy_step(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    n = x.shape[0]
    c1 = _im2col(x)
    z1 = (c1 @ w1.reshape(-1, C1)).reshape(n, SIDE, SIDE, C1) + b1
    m1, r1 = _pool(np.maximum(z1, 0))
    c2 = _im2col(m1)
    z2 = (c2 @ w2.reshape(-1, C2)).reshape(n, SIDE // 2, SIDE // 2, C2) + b2
    m2, r2 = _pool(np.maximum(z2, 0))
    h = m2.reshape(n, -1)
    logits = h @ w3 + b3
    s = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(s)
    se = e.sum(axis=1, keepdims=True)
    value = -np.sum(y * (s - np.log(se))) / n
    dl = (e / se - y) / n
    dh = (dl @ w3.T).reshape(m2.shape)
    dz2 = (_unpool(dh, r2, m2) * (z2 > 0)).reshape(-1, C2)
    dm1 = _col2im(dz2 @ w2.reshape(-1, C2).T, m1.shape)
    dz1 = (_unpool(dm1, r1, m1) * (z1 > 0)).reshape(-1, C1)
    grads = ((c1.T @ dz1).reshape(w1.shape), dz1.sum(0), (c2.T @ dz2).reshape(w2.shape),
             dz2.sum(0), h.T @ dl, dl.sum(0))
    return value, grads


def _check(tool, got, want):
    value, grads = got
    _bench.assert_close(f"{tool} value", value, want[0], 1e-4)
    for name, g, w in zip(("w1", "b1", "w2", "b2", "w3", "b3"), grads, want[1]):
        _bench.assert_close(f"{tool} d{name}", g, w, 2e-3, 2e-5)


def build_case(bench):
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = (rng.standard_normal((3, 3, 1, C1)).astype(f32) * f32(0.3),
              (rng.standard_normal(C1) * 0.1).astype(f32),
              rng.standard_normal((3, 3, C1, C2)).astype(f32) * f32(0.1),
              (rng.standard_normal(C2) * 0.1).astype(f32),
              rng.standard_normal((DENSE_IN, CLASSES)).astype(f32) * f32(0.03),
              np.zeros(CLASSES, f32))
    x = rng.uniform(0.0, 1.0, (BATCH, SIDE, SIDE, 1)).astype(f32)
    y = np.eye(CLASSES, dtype=f32)[rng.integers(0, CLASSES, BATCH)]
    case = bench.case(f"batch {BATCH}, {SIDE}x{SIDE}x1, conv 3x3 {C1}/{C2}, float32",
                      batch=BATCH, channels=[C1, C2], dtype="float32")
    want = numpy_step(tuple(p.astype(np.float64) for p in params), x.astype(np.float64),
                      y.astype(np.float64))

    def check(tool, got):
        assert all(g.dtype == f32 for g in got[1]), f"{tool} did not stay in float32"
        _check(tool, got, want)
    step = tf.value_and_grad(loss)
    _bench.add_tf(case, step, (params, x, y), check)
    if case.wants("tf_numba (eager)"):
        check("tf_numba (eager)", step(params, x, y))
        case.add("tf_numba (eager)", lambda: step(params, x, y))
    if case.wants("numpy"):
        check("numpy", numpy_step(params, x, y))
        case.add("numpy", lambda: numpy_step(params, x, y))
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy

        def jloss(params, x, y):
            w1, b1, w2, b2, w3, b3 = params

            def pool(h):
                return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1),
                                             (1, 2, 2, 1), "VALID")
            conv = jax.lax.conv_general_dilated
            h = pool(jax.nn.relu(conv(x, w1, (1, 1), "SAME", dimension_numbers=DN) + b1))
            h = pool(jax.nn.relu(conv(h, w2, (1, 1), "SAME", dimension_numbers=DN) + b2))
            logits = h.reshape(x.shape[0], -1) @ w3 + b3
            return -jnp.sum(y * jax.nn.log_softmax(logits)) / x.shape[0]
        jstep = jax.jit(jax.value_and_grad(jloss))
        jp, jx, jy = tuple(jnp.asarray(p) for p in params), jnp.asarray(x), jnp.asarray(y)
        check("jax", jstep(jp, jx, jy))
        case.add(_bench.JAX, lambda: jax.block_until_ready(jstep(jp, jx, jy)))
    if case.wants("torch") and _bench.have("torch"):
        case.add("torch", torch_step(params, x, y, check))
    return case


def torch_step(params, x, y, check):
    import torch
    import torch.nn.functional as F
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    w1, b1, w2, b2, w3, b3 = tp
    k1, k2 = w1.detach().permute(3, 2, 0, 1), w2.detach().permute(3, 2, 0, 1)   # OIHW
    tx = torch.tensor(x).permute(0, 3, 1, 2).contiguous()
    ty = torch.tensor(y)
    k1.requires_grad_(True)
    k2.requires_grad_(True)

    def step():
        for p in (k1, b1, k2, b2, w3, b3):
            p.grad = None
        h = F.max_pool2d(F.relu(F.conv2d(tx, k1, b1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, k2, b2, padding=1)), 2)
        h = h.permute(0, 2, 3, 1).reshape(tx.shape[0], -1)       # NHWC order, as w3's rows
        value = -(ty * F.log_softmax(h @ w3 + b3, dim=1)).sum() / tx.shape[0]
        value.backward()
        return value, (k1.grad, b1.grad, k2.grad, b2.grad, w3.grad, b3.grad)
    value, g = step()
    check("torch", (value.item(), (g[0].permute(2, 3, 1, 0).numpy(), g[1].numpy(),
                                   g[2].permute(2, 3, 1, 0).numpy(), g[3].numpy(),
                                   g[4].numpy(), g[5].numpy())))
    return step


def targets(bench):
    def check(case):
        judged = _bench.tf_judged(case)
        jax_ratio = bench.jax_best_vs(case, judged)
        out = [(f"best JAX / {judged} = {_bench.fmt_ratio(jax_ratio)} (> 1.00x)",
                None if jax_ratio is None else jax_ratio > 1.0)]
        torch_ratio = case.ratio("torch", judged)
        if torch_ratio is not None:
            out.append((f"torch / {judged} = {_bench.fmt_ratio(torch_ratio)} (> 1.00x)",
                        torch_ratio > 1.0))
        out.append((f"{judged} / numpy hand-written = "
                    f"{_bench.fmt_ratio(bench.ratio_to_ref(case, judged))}; eager / numpy = "
                    f"{_bench.fmt_ratio(bench.ratio_to_ref(case, 'tf_numba (eager)'))}",
                    _bench.INFO))
        return out
    return check


def main():
    bench = _bench.Bench("cnn_bench", __doc__, reference="numpy", default_rounds=15,
                         quick_rounds=5, batch_seconds=0.1)
    bench.run([build_case(bench)], "value_and_grad of a 2-conv-layer CNN, batch 64, "
              "28x28x1, float32", targets(bench))


if __name__ == "__main__":
    main()
