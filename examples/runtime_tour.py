"""The run-cache walk-through (after tenferro's `run_cache` example), on tf_numba's Runtime.

Each step prints the plan-cache statistics, so you can watch what is prepared once, what
hits, and what a reconfiguration does.
"""
import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import SpecializationMismatch, UnboundPlaceholder
from tf_numba.runtime import CpuEngine, Runtime

rt = Runtime()
serial, pooled = CpuEngine(threads=1), CpuEngine(threads=2)
cpu = serial.target()


def show(step, **extra):
    stats = rt.stats()
    keys = ("entries", "hits", "misses", "preparations", "negative_hits", "waits")
    print(f"{step:<62s}", " ".join(f"{k}={stats[k]}" for k in keys), *extra.values())


def refused(err):
    """An error as the tour shows it: its name, and its message indented under the step."""
    print(f"   {type(err).__name__}:", str(err).replace("\n", "\n   "))


print("1. sum(x * x) over a symbolic length n: one program for every n")
program = tf.make_program(lambda x: tnp.sum(x * x))(tf.symbolic(("n",), name="x"))
print(program)
for n in (3, 5, 1000):
    x = np.arange(float(n))
    prepared = rt.prepare(program, [x], [cpu])
    out = rt.run([serial], prepared, [x])[0]
    show(f"   prepare + run, n = {n}", result=f"sum={out:.0f}")

print("\n2. Running twice does not touch the cache")
rt.run([serial], prepared, [np.ones(4)])
rt.run([serial], prepared, [np.ones(9)])
show("   two runs")

print("\n3. Pooled and serial engines share the plan (width is not in the key)")
prepared_pooled = rt.prepare(program, [np.ones(3)], [pooled.target()])
rt.run([pooled], prepared_pooled, [np.ones(3)])
show("   prepare for the pooled engine", same_plan=prepared_pooled.entry is prepared.entry)

print("\n4. A symbolic matmul prepared for 2x3 @ 3x4 runs 5x7 @ 7x4")
matmul = tf.make_program(lambda a, b: a @ b)(tf.symbolic(("n", "k")), tf.symbolic(("k", "m")))
prepared_mm = rt.prepare(matmul, [np.ones((2, 3)), np.ones((3, 4))], [cpu])
a, b = np.random.rand(5, 7), np.random.rand(7, 4)
ok = np.allclose(rt.run([serial], prepared_mm, [a, b])[0], a @ b)
show("   run 5x7 @ 7x4 on the 2x3 @ 3x4 preparation", correct=ok)

print("\n5. A concrete matmul refuses other lengths, and says which axis")
concrete = tf.make_program(lambda a, b: a @ b)(np.ones((2, 3)), np.ones((3, 4)))
prepared_c = rt.prepare(concrete, [], [cpu])
try:
    rt.run([serial], prepared_c, [a, b])
except SpecializationMismatch as err:
    refused(err)
show("   after the refused run")

print("\n6. Another program of the same structure, built from other data, hits")
other = tf.make_program(lambda a, b: a @ b)(np.full((2, 3), 2.0), np.full((3, 4), 3.0))
prepared_o = rt.prepare(other, [], [cpu])
show("   prepare the other program", first=rt.run([serial], prepared_o, [])[0][0, 0])

print("\n7. Inputs: defaults, partial and full lists; input order is public")
data = np.array([1.0, 2.0])
diff = tf.make_program(lambda a, b: b - a)(data, tf.symbolic(("n",), name="b"))
print(f"   input_index('b') = {diff.input_index('b')}")
try:
    rt.prepare(diff, [], [cpu])
except UnboundPlaceholder as err:
    refused(err)
b = np.array([10.0, 20.0])
prepared_d = rt.prepare(diff, [b], [cpu])
print("   partial [b]     ->", rt.run([serial], prepared_d, [b])[0])
print("   full [a, b]     ->", rt.run([serial], prepared_d, [np.zeros(2), b])[0])

print("\n8. reconfigure publishes a new snapshot and bumps the epoch: old plans are refused")
rt.reconfigure(rt.config, plan_cache_entries=64)
try:
    rt.run([serial], prepared, [np.ones(3)])
except Exception as err:
    refused(err)
prepared = rt.prepare(program, [np.ones(3)], [cpu])
show(f"   prepare again in epoch {rt.epoch}")
