"""The interpreted tier: a jitted training step answered by the NumPy interpreter (as every
call is until its kernels arrive), against the same step written in NumPy by hand, in one
process.

The steps are those of ``perf/first_minute`` (linear regression, the MLP, the RNN over
``lax.scan``, the GP marginal likelihood): ``<name>_tf_numba.py``'s ``step`` and
``<name>_numpy.py``'s, on their first iteration's arguments. The compile service is told
never to answer, so each tf_numba call is the interpreter's, through jit's own call path.
Both run with one BLAS thread (the NumPy scripts' setting in ``first_minute``; the
interpreter runs BLAS at the engine's width, one thread by default).

Target: interpreted step within 1.2x of the NumPy step. The AD program does more work than
a hand-written gradient (the max in a softmax has a gradient, a scan keeps residuals), so
part of the gap is the program's, not the interpreter's.

    python perf/interpreter_bench.py [--quick] [--rounds N] [--json PATH]
"""
import os
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "first_minute")
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, HERE)
import _bench  # noqa: E402
from _first_step import step_and_args  # noqa: E402
WORKLOADS = ("linreg", "mlp", "rnn", "gp")
TARGET = 1.2


def _never_compile():
    """Hold every plan on the interpreter: an empty disk cache, and compile jobs taken and
    never answered (so no worker starts)."""
    os.environ["TF_NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="tf_numba_interpreted_")
    from tf_numba.lowering import compile_service
    compile_service.SERVICE.submit = lambda request, block=False: compile_service.Job(request)


def main():
    _never_compile()
    import numpy as np
    from tf_numba.lowering.plan import Plan
    bench = _bench.Bench("interpreter_bench", __doc__, reference="numpy")
    bench.jax = None
    cases = []
    for name in WORKLOADS:
        tf_step, tf_args = step_and_args(os.path.join(HERE, f"{name}_tf_numba.py"))
        np_step, np_args = step_and_args(os.path.join(HERE, f"{name}_numpy.py"))
        got, want = tf_step(*tf_args), np_step(*np_args)
        plan = tf_step.jitted.lower(*tf_args).plan
        assert isinstance(plan, Plan) and not plan.ready, "the step is not interpreted"
        _bench.assert_close("tf_numba", float(got[1]), float(np.asarray(want[1])), 1e-9)
        case = bench.case(name)
        case.add(_bench.TF, lambda f=tf_step, a=tf_args: f(*a))
        case.add("numpy", lambda f=np_step, a=np_args: f(*a))
        cases.append(case)

    def check(case):
        ratio = case.ratio(_bench.TF, "numpy")
        return [(f"interpreted / NumPy = {_bench.fmt_ratio(ratio)} (<= {TARGET:.2f}x)",
                 None if ratio is None else ratio <= TARGET)]
    bench.run(cases, "jitted steps on the interpreted tier against NumPy by hand", check)


if __name__ == "__main__":
    main()
