"""Time to compiled code as programs grow, beside JAX: the baseline region kernels must beat.

Workloads, each the same function written once over a namespace of tf_numba's or JAX's names:

- ``mlp<L>``: ``jit(value_and_grad(loss))`` of an L-layer tanh MLP, width 64, batch 32,
  float64, mean squared error;
- ``vae``: a step of JAX's ``examples/mnist_vae.py`` shape (784-512-20 encoder and decoder
  with ReLU, a softplus variance, images binarized by ``random.bernoulli`` inside the step,
  ``z`` drawn by ``random.normal``, keys from ``fold_in`` and ``split``), batch 128, adam;
- ``gamma``: ``jit(random.gamma)`` of 1000 shapes in [0.5, 5];
- ``beta``: ``jit(random.beta)`` of 1000 shape pairs, ``a`` in [0.5, 5] and ``b`` reversed;
- ``transformer``: an Adam step of a two-block pre-norm transformer (d=128, 4 heads,
  sequence 64, batch 16, vocabulary 16): ``examples/transformer.py``'s layers (embedding,
  positions, layer norm, residuals, GELU MLP) around a causal softmax attention written
  out in float64 (JAX's ``nn.dot_product_attention`` takes its softmax in float32);
- ``cnn``: ``examples/cnn_digits.py``'s step (conv, batch norm, max pool, dropout, Adam),
  batch 64;
- ``hmc``: 50 HMC transitions (``fori_loop`` inside ``jit``, 10 leapfrog steps each by
  an inner ``fori_loop``) on a 50-d Bayesian logistic regression's posterior, 200 points;
- ``mlp<L>e<k>``: ``mlp<L>`` with layer k's tanh changed to sin (an edited program);
- ``classifier``: a newcomer's ``jit(value_and_grad(loss))``: 600 two-feature points, one
  hidden layer of 32 tanh units, 3 classes, mean negative log-likelihood by
  ``nn.log_softmax``, float64 (a small program whose step is a few short rows a point).

Parameters of the example models are drawn by NumPy into the shapes the library's own
initializers give (``eval_shape``), the same for both tools.

Every workload runs in fresh processes: tf_numba with an empty kernel cache
(``TF_NUMBA_CACHE_DIR`` a new temporary directory) and ``jit(..., tiered=False)``, so its
first call compiles in the caller's thread and returns compiled results; JAX (async
dispatch, its default) in another. "first" is the first call to its compiled result
(tracing, preparing, compiling, running); "cpu" the process's CPU seconds in it; "interp"
the first call of the default tiered ``jit`` in a third fresh process (tracing, preparing
and answering by the interpreter while the kernels go to compile workers); "kernels" and
"largest" the kernels numba compiled in the first call and the slowest of them (tf_numba's
compile log), "llvm" LLVM's share of the first call's compiling thread's CPU (numba's
``llvm_lock`` events; below each row, numba's slowest passes in it, LLVM's inside
lowering), "helpers" the helpers numba compiled for it (count/seconds); "other" the cores
other processes took meanwhile. The steady step is timed in the tf_numba process after its
compile, interleaved in rounds with JAX's with synchronous dispatch (JAX at its best), and as a
paired ratio; the JAX process's own steady step (async dispatch) is shown beside it.

    python perf/region_compile.py [--workloads mlp1,mlp4,...,vae,gamma] [--repeats N]
                                  [--json PATH]

Run it alone, under the machine's CPU lock: ``flock /tmp/tf_numba_cpu.lock python ...``.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WORKLOADS = "mlp1,mlp4,mlp8,mlp16,mlp32,vae,gamma"

# The child's program: ``lib`` names the tool's jit, value_and_grad, numpy, random, nn and
# optimizers; ``workload(lib, name)`` returns (the jitted function, its arguments).
_WORKLOADS = f"REPO = {REPO!r}\n" + r'''
import numpy as np


def mlp(lib, layers, edited=None):
    rng = np.random.default_rng(0)
    params = [(rng.standard_normal((64, 64)) / 8, np.zeros(64)) for _ in range(layers)]
    x, y = rng.standard_normal((32, 64)), rng.standard_normal((32, 64))
    xnp = lib.np

    def loss(params, x, y):
        h = x
        for k, (w, b) in enumerate(params):
            h = (xnp.sin if k == edited else xnp.tanh)(h @ w + b)
        return xnp.mean((h - y) ** 2)
    return lib.jit(lib.value_and_grad(loss)), (params, x, y)


def drawn_like(lib, init, *args):
    """``init(*args)``'s pytree of parameters with NumPy's draws in its leaves' shapes
    (``eval_shape``: the library's own initializers do not run)."""
    rng = np.random.default_rng(0)

    def draw(leaf):
        shape = tuple(leaf.shape)
        if len(shape) < 2:
            return 1.0 + 0.1 * rng.standard_normal(shape)
        return rng.standard_normal(shape) / np.sqrt(np.prod(shape[:-1]))
    return lib.tree_map(draw, lib.eval_shape(init, *args))


def example(lib, name):
    import os, sys
    sys.path.insert(0, os.path.join(REPO, "examples"))
    from in_jax import load_example
    return load_example(name, lib.library)


def transformer(lib, width=128, heads=4, length=64, batch=16, vocab=16, blocks=2):
    ex = example(lib, "transformer")
    xnp, nn, stax = lib.np, lib.nn, ex.stax

    def CausalSoftmaxAttention(heads):
        def init_fun(rng, input_shape):
            return input_shape, tuple(xnp.zeros((width, width)) for _ in range(4))

        def apply_fun(params, x, **kwargs):
            wq, wk, wv, wo = params
            b, t, d = x.shape

            def split_heads(w):
                return xnp.reshape(x @ w, (b, t, heads, d // heads))
            q, k, v = split_heads(wq), split_heads(wk), split_heads(wv)
            scores = xnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d // heads)
            causal = np.tril(np.ones((t, t), dtype=bool))
            weights = nn.softmax(xnp.where(causal, scores, -1e30), axis=-1)
            out = xnp.einsum("bhqk,bkhd->bqhd", weights, v)
            return xnp.reshape(out, (b, t, d)) @ wo
        return init_fun, apply_fun

    def block():
        return stax.serial(
            ex.Residual(ex.LayerNorm(), CausalSoftmaxAttention(heads)),
            ex.Residual(ex.LayerNorm(), stax.Dense(4 * width), stax.Gelu, stax.Dense(width)))
    init_fun, predict = stax.serial(
        ex.Embed(vocab, width), ex.AddPositions(), *[block() for _ in range(blocks)],
        ex.LayerNorm(), stax.Dense(vocab), stax.LogSoftmax)
    params = drawn_like(lib, lambda key: init_fun(key, (-1, length))[1],
                        lib.random.PRNGKey(0))
    opt_init, opt_update, get_params = lib.optimizers.adam(1e-3)

    def loss(params, tokens):
        log_probs = predict(params, tokens[:, :-1])
        return -xnp.mean(xnp.sum(log_probs * nn.one_hot(tokens[:, 1:], vocab), axis=-1))

    def step(i, opt_state, tokens):
        value, grads = lib.value_and_grad(loss)(get_params(opt_state), tokens)
        return value, opt_update(i, grads, opt_state)
    tokens = np.random.default_rng(1).integers(0, vocab, (batch, length + 1))
    return lib.jit(step), (0, opt_init(params), tokens)


def cnn(lib, batch=64):
    ex = example(lib, "cnn_digits")
    params = drawn_like(lib, ex.init_params, lib.random.PRNGKey(0))
    images, labels = next(ex.train_batches(batch))
    return (lib.jit(ex.update.__wrapped__),
            (0, ex.opt_init(params), images, labels, lib.random.PRNGKey(0)))


def hmc(lib, dim=50, points=200, transitions=50, leapfrogs=10, eps=0.05):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((points, dim)) / np.sqrt(dim)
    y = (rng.uniform(size=points) < 1 / (1 + np.exp(-x @ rng.standard_normal(dim)))) * 1.0
    xnp, lax, random = lib.np, lib.lax, lib.random

    def log_density(q):
        z = x @ q
        return xnp.sum(y * z - xnp.logaddexp(0.0, z)) - 0.5 * xnp.sum(q * q)
    grad = lib.grad(log_density)

    def leapfrog(q, p):
        p = p + 0.5 * eps * grad(q)

        def step(_, qp):
            q = qp[0] + eps * qp[1]
            return q, qp[1] + eps * grad(q)
        q, p = lax.fori_loop(0, leapfrogs - 1, step, (q, p))
        q = q + eps * p
        return q, p + 0.5 * eps * grad(q)

    def sample(key, q0):
        def transition(i, state):
            q, total, accepted = state
            momentum_key, accept_key = random.split(random.fold_in(key, i))
            p = random.normal(momentum_key, q.shape)
            q_new, p_new = leapfrog(q, p)
            log_ratio = (log_density(q_new) - 0.5 * xnp.sum(p_new * p_new)
                         - log_density(q) + 0.5 * xnp.sum(p * p))
            accept = xnp.log(random.uniform(accept_key)) < log_ratio
            q = xnp.where(accept, q_new, q)
            return q, total + q, accepted + xnp.where(accept, 1.0, 0.0)
        return lax.fori_loop(0, transitions, transition, (q0, xnp.zeros(dim), 0.0))
    return lib.jit(sample), (random.PRNGKey(0), np.zeros(dim))


def vae(lib):
    pixels, hidden, latent, batch = 784, 512, 20, 128
    rng = np.random.default_rng(0)
    xnp, random, nn = lib.np, lib.random, lib.nn

    def dense(n_in, n_out):
        return (rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / (n_in + n_out)),
                np.zeros(n_out))
    params = ([dense(pixels, hidden), dense(hidden, 2 * latent)],
              [dense(latent, hidden), dense(hidden, pixels)])
    opt_init, opt_update, get_params = lib.optimizers.adam(1e-3)

    def mlp2(layers, x):
        (w1, b1), (w2, b2) = layers
        return nn.relu(x @ w1 + b1) @ w2 + b2

    def elbo(key, params, images):
        stats = mlp2(params[0], images)
        mu, sigmasq = stats[:, :latent], nn.softplus(stats[:, latent:])
        z = mu + xnp.sqrt(sigmasq) * random.normal(key, mu.shape)
        logits = mlp2(params[1], z)
        logpdf = -xnp.sum(xnp.logaddexp(0.0, xnp.where(images, -1.0, 1.0) * logits))
        kl = -0.5 * xnp.sum(1.0 + xnp.log(sigmasq) - mu ** 2 - sigmasq)
        return logpdf - kl

    def step(i, state, images, key):
        elbo_key, data_key = random.split(random.fold_in(key, i))
        binary = random.bernoulli(data_key, images)
        loss, grads = lib.value_and_grad(
            lambda p: -elbo(elbo_key, p, binary) / batch)(get_params(state))
        return loss, opt_update(i, grads, state)
    images = rng.uniform(size=(batch, pixels))
    return lib.jit(step), (0, opt_init(params), images, lib.random.PRNGKey(0))


def gamma(lib):
    return lib.jit(lib.random.gamma), (lib.random.PRNGKey(0), np.linspace(0.5, 5.0, 1000))


def beta(lib):
    a = np.linspace(0.5, 5.0, 1000)
    return lib.jit(lib.random.beta), (lib.random.PRNGKey(0), a, a[::-1].copy())


def classifier(lib, points=600, hidden=32, classes=3):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((points, 2))
    labels = (np.arctan2(x[:, 1], x[:, 0]) // (2 * np.pi / classes)).astype(int) % classes
    onehot = np.eye(classes)[labels]
    params = (rng.standard_normal((2, hidden)) / np.sqrt(2), np.zeros(hidden),
              rng.standard_normal((hidden, classes)) / np.sqrt(hidden), np.zeros(classes))
    xnp, nn = lib.np, lib.nn

    def loss(params, x, onehot):
        w1, b1, w2, b2 = params
        logits = xnp.tanh(x @ w1 + b1) @ w2 + b2
        return -xnp.mean(xnp.sum(nn.log_softmax(logits) * onehot, axis=-1))
    return lib.jit(lib.value_and_grad(loss)), (params, x, onehot)


def workload(lib, name):
    if name.startswith("mlp"):
        layers, _, edited = name[3:].partition("e")
        return mlp(lib, int(layers), int(edited) if edited else None)
    return {"vae": vae, "gamma": gamma, "beta": beta, "transformer": transformer, "cnn": cnn,
            "hmc": hmc, "classifier": classifier}[name](lib)
'''

_TF_LIB = r'''
import types, functools
import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import nn, random
from tf_numba.example_libraries import optimizers
tf_lib = types.SimpleNamespace(library="tf_numba", jit=functools.partial(tf.jit, tiered=False),
                               value_and_grad=tf.value_and_grad, grad=tf.grad, np=tnp,
                               random=random, nn=nn, lax=tf.lax, optimizers=optimizers,
                               eval_shape=tf.eval_shape, tree_map=tf.tree_util.tree_map)
'''

_JAX_LIB = r'''
import types
import jax
import jax.numpy as jnp
from jax.example_libraries import optimizers as jax_optimizers
jax_lib = types.SimpleNamespace(library="jax", jit=jax.jit, value_and_grad=jax.value_and_grad,
                                grad=jax.grad, np=jnp, random=jax.random, nn=jax.nn,
                                lax=jax.lax, optimizers=jax_optimizers,
                                eval_shape=jax.eval_shape, tree_map=jax.tree_util.tree_map)
'''

# The child's ``compiles``: (kind, key, seconds) of every numba compile tf_numba logs.
COMPILE_LOG = r'''
import logging, re
compiles = []


class _Compiles(logging.Handler):
    """Collect (kind, key, seconds) of every numba compile tf_numba logs, in this process
    or by a compile worker."""
    PATTERN = re.compile(r"(kernel|helper) (\S+) compiled in ([\d.]+) s")

    def emit(self, record):
        found = self.PATTERN.match(record.getMessage())
        if found:
            compiles.append((found[1], found[2], float(found[3])))


logger = logging.getLogger("tf_numba")
logger.addHandler(_Compiles())
logger.setLevel(logging.DEBUG)
logger.propagate = False
'''

TF_CHILD = r'''
import json, sys, time
perf, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, perf)
import _bench
''' + _WORKLOADS + _TF_LIB + COMPILE_LOG + r'''
from region_call_cost import CompileSplit
fn, args = workload(tf_lib, name)
wall, cpu = time.perf_counter(), time.process_time()
with CompileSplit() as split:
    out = fn(*args)
first, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
kernels = [s for kind, _, s in compiles if kind == "kernel"]
helpers = [s for kind, _, s in compiles if kind == "helper"]
jax = _bench.setup_jax(sync=True)
''' + _JAX_LIB + r'''
jfn, jargs = workload(jax_lib, name)
jax.block_until_ready(jfn(*jargs))
tools = {"tf": lambda: fn(*args), "jax": lambda: jax.block_until_ready(jfn(*jargs))}
stats = _bench.measure(tools, rounds, batch_seconds=0.05)
print(json.dumps(dict(first=first, first_cpu=first_cpu, kernels=len(kernels),
                      kernel_seconds=sum(kernels), largest=max(kernels, default=0.0),
                      helpers=len(helpers), helper_seconds=sum(helpers),
                      split=split.summary(), passes=sorted(split.passes.items(),
                                                           key=lambda kv: -kv[1])[:5],
                      step=stats["tf"]["median"], jax_sync_step=stats["jax"]["median"],
                      step_ratio=_bench.paired_ratio(stats["tf"], stats["jax"]))))
'''

TIERED_CHILD = r'''
import json, sys, time
perf, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
''' + _WORKLOADS + _TF_LIB + r'''
tf_lib.jit = tf.jit
fn, args = workload(tf_lib, name)
wall = time.perf_counter()
fn(*args)
first = time.perf_counter() - wall
print(json.dumps(dict(first=first)))
'''

JAX_CHILD = r'''
import json, sys, time
perf, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, perf)
import _bench
''' + _WORKLOADS + r'''
jax = _bench.setup_jax(sync=False)
''' + _JAX_LIB + r'''
fn, args = workload(jax_lib, name)
wall, cpu = time.perf_counter(), time.process_time()
jax.block_until_ready(fn(*args))
first, first_cpu = time.perf_counter() - wall, time.process_time() - cpu
stats = _bench.measure({"jax": lambda: jax.block_until_ready(fn(*args))}, rounds,
                       batch_seconds=0.05)
print(json.dumps(dict(first=first, first_cpu=first_cpu, step=stats["jax"]["median"])))
'''


def run_child(code, argv, **env):
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = REPO + os.pathsep + full_env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          env=full_env)
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_with_empty_cache(code, argv, **env):
    """``run_child`` with a kernel cache directory of its own, removed after."""
    cache = tempfile.mkdtemp(prefix="tf_numba_cache_")
    try:
        return run_child(code, argv, TF_NUMBA_CACHE_DIR=cache, **env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def measure(name, rounds):
    """({key: value} of the tf_numba process, of the JAX process) for one workload."""
    argv = (os.path.dirname(os.path.abspath(__file__)), name, str(rounds))
    tf = run_with_empty_cache(TF_CHILD, argv, TF_NUMBA_TIERED="0")
    tf["interpreted_first"] = run_with_empty_cache(TIERED_CHILD, argv,
                                                   TF_NUMBA_TIERED="1")["first"]
    return tf, run_child(JAX_CHILD, argv)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    parser.add_argument("--repeats", type=int, default=1,
                        help="fresh-process pairs per workload (medians)")
    parser.add_argument("--rounds", type=int, default=15, help="steady-step rounds")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    names = args.workloads.split(",")
    print("== region_compile: first call to compiled result, fresh processes, empty kernel "
          f"cache; medians of {args.repeats}")
    print(f"   {_bench.load_average()}")
    head = (f"   {'workload':9}{'tf first':>9}{'cpu':>8}{'interp':>8}{'kernels':>8}"
            f"{'largest':>8}{'llvm':>6}{'helpers':>9}{'jax first':>10}{'tf/jax':>7}"
            f"{'tf step':>10}{'jax sync':>10}{'tf/jax':>7}{'jax async':>10}{'other':>7}")
    print(head)
    results = {}
    for name in names:
        with _bench.ForeignLoad() as foreign:
            runs = [measure(name, args.rounds) for _ in range(args.repeats)]
        tf = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]
              if k not in ("split", "passes")}
        tf["passes"] = runs[0][0]["passes"]
        tf["split"] = {k: statistics.median(r[0]["split"][k] for r in runs)
                       for k in runs[0][0]["split"]}
        jax = {k: statistics.median(r[1][k] for r in runs) for k in runs[0][1]}
        results[name] = dict(tf=tf, jax=jax, runs=runs, foreign_cores=foreign.cores)
        other = "" if foreign.cores is None else f"{foreign.cores:.2f}"
        llvm = tf["split"]["llvm"] / tf["split"]["cpu"]
        print(f"   {name:9}{tf['first']:8.2f}s{tf['first_cpu']:7.2f}s"
              f"{tf['interpreted_first']:7.2f}s{tf['kernels']:8.0f}{tf['largest']:7.2f}s"
              f"{llvm * 100:5.0f}%{tf['helpers']:4.0f}/{tf['helper_seconds']:3.1f}s"
              f"{jax['first']:9.2f}s{tf['first'] / jax['first']:6.1f}x"
              f"{_bench.fmt_time(tf['step']):>10}{_bench.fmt_time(tf['jax_sync_step']):>10}"
              f"{tf['step_ratio']:6.2f}x{_bench.fmt_time(jax['step']):>10}{other:>7}")
        print("   " + " " * 9 + "numba's slowest passes: " + ", ".join(
            f"{name} {seconds:.2f}s" for name, seconds in tf["passes"][:4]), flush=True)
    print(f"   {_bench.load_average()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(results=results, machine=_bench.machine_info()), f, indent=1)


if __name__ == "__main__":
    main()
