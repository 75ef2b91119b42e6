"""The examples written the JAX way, each beside the same program on JAX: a training step's
losses, its time to the first step, and its steady step time.

The programs are ``examples/cnn_digits.py`` (stax convolutions, BatchNorm and Dropout on
scikit-learn's digits), ``examples/vae.py`` (a stax VAE) and ``examples/transformer.py`` (a
transformer block around ``nn.dot_product_attention``). The JAX program is the example's
own text with its ``tf_numba`` imports pointed at ``jax`` (``examples/in_jax.py``), in
float64. For each example:

- **agreement**: 20 steps of each from tf_numba's initial parameters, on the same batches
  and keys; the largest relative difference of the losses (to be at most 1e-8).
- **first step**: each program in fresh processes, a few rounds, the tools alternating who
  goes first: seconds from the process's spawn to the end of its first training step
  (imports, data, initialization and the step; tf_numba's first steps run on its
  interpreter while the kernel compiles), and, for tf_numba, to the end of its first step
  run compiled (``update.lower(...).compile(...)`` waited for). tf_numba runs on an empty
  kernel cache (cold) and again on that cache (warm); JAX keeps no cache between
  processes. The first call of ``update`` alone is shown too. Ratios are tf_numba / JAX, of
  the medians.
- **steady step**: ``update`` on fixed arguments, timed interleaved by ``_bench`` (medians
  over rounds; ratios tf_numba / JAX, the median of each round's ratio), with JAX in both
  dispatch configurations.

    python perf/examples_bench.py [--quick] [--only cnn_digits,vae] [--first-rounds N]
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from in_jax import load_example, train_losses  # noqa: E402

EXAMPLES = {"cnn_digits": 64, "vae": 64, "transformer": 32}     # name: batch
AGREEMENT_STEPS, AGREEMENT_RTOL = 20, 1e-8


def first_step_child(name, library, batch):
    """Run in a fresh process: the first training step of ``name`` on ``library``, as its
    ``main`` starts; prints JSON of seconds since the spawn (``SPAWNED_AT``)."""
    spawned = float(os.environ["SPAWNED_AT"])
    example = load_example(name, library)
    imported = time.time()
    random = example.random
    key, init_key = random.split(random.PRNGKey(0))
    opt_state = example.opt_init(example.init_params(init_key))
    data = next(example.train_batches(batch))
    _, step_key = random.split(key)
    initialized = time.time()
    value, new_state = example.update(0, opt_state, *data, step_key)
    float(value)
    first = time.time()
    if library == "tf_numba":
        example.update.lower(1, new_state, *data, step_key).compile(1, new_state, *data,
                                                                     step_key)
    value, _ = example.update(1, new_state, *data, step_key)
    float(value)
    compiled = time.time() if library == "tf_numba" else first
    print(json.dumps({k: v - spawned for k, v in dict(
        imported=imported, initialized=initialized, first=first, compiled=compiled).items()}
        | {"first_call": first - initialized}))


def spawn_first_step(name, library, batch, cache_dir):
    env = dict(os.environ, SPAWNED_AT=repr(time.time()), TF_NUMBA_CACHE_DIR=cache_dir)
    done = subprocess.run([sys.executable, __file__, "--first-step-child", name, library,
                           str(batch)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{name} on {library} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def first_steps(name, batch, rounds):
    """{phase: [child timings per round]} for tf_numba cold and warm and JAX."""
    runs = {"tf_numba cold": [], "tf_numba warm": [], "jax": []}
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as cache:
            order = ["tf", "jax"] if r % 2 == 0 else ["jax", "tf"]
            for tool in order:
                if tool == "jax":
                    runs["jax"].append(spawn_first_step(name, "jax", batch, cache))
                else:
                    runs["tf_numba cold"].append(spawn_first_step(name, "tf_numba", batch,
                                                                  cache))
                    runs["tf_numba warm"].append(spawn_first_step(name, "tf_numba", batch,
                                                                  cache))
    return runs


def print_first_steps(runs):
    def med(phase, key):
        return statistics.median(run[key] for run in runs[phase])
    print(f"   first step, {len(runs['jax'])} rounds of fresh processes (medians, seconds "
          "from spawn):")
    print(f"   {'':<16}{'imported':>10}{'initialized':>13}{'1st step':>10}"
          f"{'1st compiled':>14}{'1st call':>10}")
    for phase in runs:
        print(f"   {phase:<16}" + "".join(
            f"{_bench.fmt_time(med(phase, key)):>{width}}" for key, width in (
                ("imported", 10), ("initialized", 13), ("first", 10), ("compiled", 14),
                ("first_call", 10))))
    for phase in ("tf_numba cold", "tf_numba warm"):
        print(f"   {phase} / jax: 1st step {med(phase, 'first') / med('jax', 'first'):.2f}x, "
              f"1st compiled {med(phase, 'compiled') / med('jax', 'compiled'):.2f}x, "
              f"1st call {med(phase, 'first_call') / med('jax', 'first_call'):.2f}x")


def agreement(name, batch):
    """The two programs' losses over ``AGREEMENT_STEPS`` steps from the same parameters."""
    ours, theirs = load_example(name), load_example(name, "jax")
    params = ours.init_params(ours.random.split(ours.random.PRNGKey(0))[1])
    got = train_losses(ours, params, AGREEMENT_STEPS, batch)
    want = train_losses(theirs, params, AGREEMENT_STEPS, batch)
    worst = max(abs(g - w) / abs(w) for g, w in zip(got, want))
    return got, want, worst


def steady_case(bench, name, batch):
    """A case timing one ``update`` of each program on the arguments of its second step."""
    ours = load_example(name)
    params = ours.init_params(ours.random.split(ours.random.PRNGKey(0))[1])
    data = next(ours.train_batches(batch))
    key = ours.random.PRNGKey(1)
    _, state = ours.update(0, ours.opt_init(params), *data, key)
    args = (1, state, *data, key)
    case = bench.case(f"{name}, batch {batch}, float64", example=name, batch=batch)
    _bench.add_tf(case, ours.update.__wrapped__, args)
    if case.wants(_bench.JAX):
        jax = bench.jax
        theirs = load_example(name, "jax")
        their_key = theirs.random.PRNGKey(1)
        _, their_state = theirs.update(0, theirs.opt_init(params), *data, their_key)
        jargs = (1, their_state, *data, their_key)
        case.add(_bench.JAX, lambda: jax.block_until_ready(theirs.update(*jargs)))
    return case


def targets(bench, extra):
    def check(case):
        name = case.params["example"]
        out = [(line, _bench.INFO) for line in extra.get(name, ())]
        judged = _bench.tf_judged(case)
        ratio = bench.jax_best_vs(case, judged)
        out.append((f"steady step {judged} / best JAX = "
                    f"{_bench.fmt_ratio(None if ratio is None else 1 / ratio)}", _bench.INFO))
        return out
    return check


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--first-step-child":
        return first_step_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    bench = _bench.Bench("examples_bench", __doc__, reference=_bench.JAX_ASYNC,
                         default_rounds=15, quick_rounds=5, batch_seconds=0.05, extra_args=[
                             (("--only",), dict(default=",".join(EXAMPLES))),
                             (("--first-rounds",), dict(type=int, default=None))])
    names = bench.args.only.split(",")
    extra = {}
    if not bench.sync_child:
        rounds = bench.args.first_rounds or (1 if bench.quick else 3)
        for name in names:
            batch = EXAMPLES[name]
            print(f"== {name} (batch {batch})   {_bench.load_average()}")
            got, want, worst = agreement(name, batch)
            status = "MET" if worst <= AGREEMENT_RTOL else "NOT MET"
            line = (f"losses of {AGREEMENT_STEPS} steps: tf_numba {got[0]:.6f} .. "
                    f"{got[-1]:.6f}, JAX {want[0]:.6f} .. {want[-1]:.6f}, largest relative "
                    f"difference {worst:.2e} (<= {AGREEMENT_RTOL:g}: {status})")
            print("   " + line)
            extra[name] = [line]
            print_first_steps(first_steps(name, batch, rounds))
            print(f"   {_bench.load_average()}")
    cases = [steady_case(bench, name, EXAMPLES[name]) for name in names]
    bench.run(cases, "steady training steps of the examples, float64", targets(bench, extra))


if __name__ == "__main__":
    main()
