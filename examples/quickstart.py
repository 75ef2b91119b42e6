"""A short tour of tf_numba: trace, differentiate to any order, and compile with numba."""
import time

import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp


def loss(w, x, y):
    """Mean squared error of a one-layer tanh model."""
    pred = tnp.tanh(x @ w)
    return tnp.mean((pred - y) ** 2)


rng = np.random.default_rng(0)
w = rng.normal(size=(3,))
x = rng.normal(size=(8, 3))
y = rng.normal(size=(8,))

print("1. The program tf_numba traces from `loss` (like jax.make_jaxpr):")
print(tf.make_program(loss)(w, x, y))

print("\n2. Its gradient program, simplified:")
print(tf.make_program(tf.grad(loss))(w, x, y))

print("\n3. grad(loss) =", tf.grad(loss)(w, x, y))


def f(t):
    return tnp.sin(t) * t


print("\n4. Derivatives of sin(t)*t at t=1, to third order:")
for order, fn in enumerate([f, tf.grad(f), tf.grad(tf.grad(f)), tf.grad(tf.grad(tf.grad(f)))]):
    print(f"   order {order}: {float(fn(1.0)):+.12f}")
print(f"   analytic third derivative: {-np.cos(1.0) - 3 * np.sin(1.0):+.12f}")

print("\n5. Hessian-vector product by forward-over-reverse, and the full Hessian:")
v = np.array([1.0, 0.0, 0.0])
hvp = tf.jvp(lambda w_: tf.grad(loss)(w_, x, y), (w,), (v,))[1]
print("   jvp(grad)(w; v) =", hvp)
print("   hessian(w) @ v  =", tf.hessian(loss)(w, x, y) @ v)

print("\n6. jit: one numba kernel for the whole gradient (first call compiles):")
fast_grad = tf.jit(tf.grad(loss), tiered=False)
start = time.perf_counter()
g = fast_grad(w, x, y)
print(f"   first call (trace + compile or disk-cache load): {time.perf_counter() - start:.3f} s")
start = time.perf_counter()
for _ in range(1000):
    fast_grad(w, x, y)
print(f"   steady state: {(time.perf_counter() - start) * 1e3:.1f} us per call")
print("   matches the interpreter:", np.allclose(g, tf.grad(loss)(w, x, y), rtol=1e-12))
print("\n   What the compiler decided, and the kernel it wrote (docs/schedule.md):")
lowered = fast_grad.lower(w, x, y).as_text()
print(lowered[lowered.index("== schedule"):])      # (the text before it is the program)
print("   kernel cache:", tf.cache_info())
