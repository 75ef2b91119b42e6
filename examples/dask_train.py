"""Fit a logistic regression to a Dask array too big to load at once, on a Dask cluster.

The data is generated lazily, block by block, from a seeded ``dask.array.random``
generator, so no process ever holds all of it: ``--rows 100_000_000`` is 12.8 GB of
float64 features at the default 16 features, and each step regenerates the blocks where
they are needed. Every step is one ``tf.dask.value_and_grad``: the parameters travel
inside the tasks (scattered to the workers once a step when they pass 16 KB), each block
of rows computes its share of the mean loss and its gradient with a compiled tf_numba
program, a tree reduction adds them up, and ``tf.optimizers.adam`` updates the
parameters.

    python examples/dask_train.py                     # 200k rows, a 2-process LocalCluster
    python examples/dask_train.py --rows 100_000_000  # the same, bigger than memory
    python examples/dask_train.py --address tcp://127.0.0.1:8786   # a running scheduler

Any ``distributed.Client`` works: ``fit(x, y, client)`` takes one. On a batch system or
Kubernetes, make the client from that deployment's cluster object::

    cluster = dask_jobqueue.SLURMCluster(cores=8, memory="16GB"); cluster.scale(jobs=4)
    cluster = dask_kubernetes.operator.KubeCluster(name="fit", n_workers=8)
    params = fit(x, y, distributed.Client(cluster))

The workers need tf_numba installed (``pip install 'tf_numba[dask]'``), not this script:
tasks carry the traced program, not ``loss``.
"""
import argparse
import time

import numpy as np

import tf_numba as tf
import tf_numba.dask  # noqa: F401  (makes tf.dask)
import tf_numba.numpy as tnp


def loss(params, x, y):
    """Mean logistic loss of labels y in {0, 1}: log(1 + e^z) - y z, z = x @ w + b."""
    z = x @ params["w"] + params["b"]
    return tnp.mean(tnp.logaddexp(0.0, z) - y * z)


def make_data(rows, features, chunk_rows, seed=0):
    """Lazy features and labels from a known linear model (nothing is computed here)."""
    import dask.array as da
    rng = da.random.default_rng(seed)
    w_true = np.linspace(-2.0, 2.0, features)
    x = rng.standard_normal((rows, features), chunks=(chunk_rows, features))
    noise = rng.standard_normal(rows, chunks=chunk_rows)
    y = ((x @ w_true + 0.5 * noise) > 0).astype(np.float64)
    return x, y, w_true


def fit(x, y, client, steps=30, step_size=0.3, log_every=5):
    """Adam on ``loss`` over the rows of ``x``, ``y``, computed on ``client``'s cluster
    (the optimizer's update is small and runs here, in this process)."""
    import dask
    features = x.shape[1]
    opt_init, opt_update, get_params = tf.optimizers.adam(step_size)
    state = opt_init({"w": np.zeros(features), "b": np.array(0.0)})
    value_and_grad = tf.dask.value_and_grad(loss, data_argnums=(1, 2))
    with dask.config.set(scheduler=client.get):
        for step in range(steps):
            start = time.perf_counter()
            value, grads = value_and_grad(get_params(state), x, y)
            state = opt_update(step, grads, state)
            if (step + 1) % log_every == 0 or step == 0:
                print(f"step {step + 1:3d}  loss {float(value):.5f}  "
                      f"{time.perf_counter() - start:.2f} s")
    return get_params(state)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=lambda s: int(s.replace("_", "")), default=200_000)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2,
                        help="worker processes of the LocalCluster (without --address)")
    parser.add_argument("--address", help="connect to this scheduler instead")
    args = parser.parse_args()

    from distributed import Client, LocalCluster
    cluster = None
    if args.address:
        client = Client(args.address)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               processes=True, dashboard_address=":0")
        client = Client(cluster)
    try:
        x, y, w_true = make_data(args.rows, args.features, args.chunk_rows)
        print(f"{args.rows:,} rows x {args.features} features "
              f"({x.nbytes / 1e9:.2f} GB, {x.numblocks[0]} blocks), "
              f"{len(client.scheduler_info()['workers'])} workers")
        params = fit(x, y, client, steps=args.steps)
        w = params["w"]
        cosine = w @ w_true / (np.linalg.norm(w) * np.linalg.norm(w_true))
        print(f"cosine(w, w_true) = {cosine:.4f}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
