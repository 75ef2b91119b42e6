"""The runtime: compile once (symbolic shapes), prepare per specialization, run many times.

>>> rt = Runtime()
>>> cpu = CpuEngine(threads=2)
>>> program = tf.make_program(f)(tf.symbolic(("n",), np.float64))
>>> prepared = rt.prepare(program, [x], [cpu.target()])
>>> rt.run([cpu], prepared, [x])
"""
from .engine import CpuEngine, EngineTarget
from .plan_cache import PlanCache
from .runtime import Prepared, Runtime, RuntimeConfig, default_runtime

__all__ = ["CpuEngine", "EngineTarget", "PlanCache", "Prepared", "Runtime", "RuntimeConfig",
           "default_runtime"]


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
