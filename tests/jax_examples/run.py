"""Run one of JAX's example programs, unchanged, on JAX or on tf_numba, and save what it
computed.

    python tests/jax_examples/run.py {jax,tf_numba} PROGRAM OUT.npz [program arguments]

On tf_numba, ``import jax`` (and every ``jax.<module>``) is pointed at ``tf_numba``
(``tf_numba.<module>``) by a name map, and nothing else: the program's text is JAX's. For
both, MNIST (which the programs download) is replaced by a small synthetic data set of the
same shapes (``examples.datasets.mnist``), matplotlib by a stand-in that draws nothing,
NumPy's global generator is seeded, and JAX computes in float64 (``JAX_ENABLE_X64``), as
tf_numba does. What the program leaves (its final parameters, predictions, the values
its functions give on fixed inputs) is saved to ``OUT.npz`` with its printed output, for
``tests/test_jax_programs.py`` to compare.
"""
import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import os
import pathlib
import sys
import types

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
N_TRAIN, N_TEST = 256, 64


class JaxNamesToTfNumba(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``jax`` and ``jax.<path>`` import as ``tf_numba`` and ``tf_numba.<path>``."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module("tf_numba" + spec.name[len("jax"):])

    def exec_module(self, module):
        pass


def synthetic_mnist(permute_train=False):
    """MNIST's shapes (images in [0, 1) as rows of 784, one-hot labels) with labels a
    linear function of the images, so a classifier can learn; in float64 (JAX's loader
    gives float32, which the convolutional programs cannot mix with float64 parameters)."""
    rng = np.random.RandomState(0)
    images = rng.rand(N_TRAIN + N_TEST, 784)
    labels = np.argmax(images @ rng.randn(784, 10), axis=1)
    one_hot = np.array(labels[:, None] == np.arange(10), np.float64)
    train_images, test_images = images[:N_TRAIN], images[N_TRAIN:]
    train_labels, test_labels = one_hot[:N_TRAIN], one_hot[N_TRAIN:]
    if permute_train:
        perm = np.random.RandomState(0).permutation(N_TRAIN)
        train_images, train_labels = train_images[perm], train_labels[perm]
    return train_images, train_labels, test_images, test_labels


# the arrays given to pyplot's functions (plot, fill_between, ...), in order: what a
# program that only draws its results leaves to compare
PLOTTED = []


class _DrawsNothing:
    """matplotlib's figures, axes and functions, drawing nothing."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self


class _Records(_DrawsNothing):
    """A pyplot function: it keeps the arrays it is given (``PLOTTED``)."""

    def __call__(self, *args, **kwargs):
        PLOTTED.extend(np.asarray(a) for a in args if hasattr(a, "shape"))
        return _DrawsNothing()


def install_stand_ins():
    datasets = types.ModuleType("datasets")
    datasets.mnist = synthetic_mnist
    examples = types.ModuleType("examples")
    examples.__path__ = []
    examples.datasets = datasets
    pyplot = types.ModuleType("matplotlib.pyplot")
    pyplot.__getattr__ = lambda name: _Records()
    matplotlib = types.ModuleType("matplotlib")
    matplotlib.pyplot = pyplot
    sys.modules.update({"datasets": datasets, "examples": examples,
                        "examples.datasets": datasets, "matplotlib": matplotlib,
                        "matplotlib.pyplot": pyplot})


def leaves_of(tree):
    import jax
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


# program: (its arguments, what to save from the globals it leaves)
def _classifier(g):
    return leaves_of(g["get_params"](g["opt_state"]))


def _spmd(g):
    return leaves_of(g["replicated_params"])


def _kernel_lsq(g):
    return [np.asarray(g["predict"](g["xs"]))]


def _dpsgd(g):
    # main() keeps its state to itself: evaluate the program's functions on fixed inputs
    import jax
    _, params = g["init_random_params"](jax.random.key(0), (-1, 28, 28, 1))
    images, labels, _, _ = synthetic_mnist()
    batch = g["shape_as_image"](images[:4], labels[:4], dummy_dim=True)
    grads = g["private_grad"](params, batch, jax.random.key(1), 1.0, 1.1, 4)
    plain = g["shape_as_image"](images[:8], labels[:8])
    return leaves_of(params) + leaves_of(grads) + [np.asarray(g["loss"](params, plain))]


def _plotted(g):
    return list(PLOTTED)


def _fromscratch(g):
    return leaves_of(g["params"])


PROGRAMS = {
    "advi": _classifier,
    "mnist_classifier": _classifier,
    "mnist_vae": _classifier,
    "mnist_classifier_fromscratch": _fromscratch,
    "spmd_mnist_classifier_fromscratch": _spmd,
    "kernel_lsq": _kernel_lsq,
    "gaussian_process_regression": _plotted,
    "differentially_private_sgd": _dpsgd,
}


def main(argv):
    framework, program, out, *args = argv
    if framework == "tf_numba":
        sys.meta_path.insert(0, JaxNamesToTfNumba())
    else:
        os.environ["JAX_ENABLE_X64"] = "1"
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    install_stand_ins()
    importlib.import_module("jax.numpy")   # JAX's import draws from NumPy's generator
    np.random.seed(0)
    sys.argv = [program + ".py"] + args
    path = HERE / (program + ".py")
    g = {"__name__": "__main__", "__file__": str(path), "__builtins__": __builtins__}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(path.read_text(), str(path), "exec"), g)
        except SystemExit as done:      # absl's app.run exits when main returns
            if done.code not in (None, 0):
                raise
    sys.stdout.write(printed.getvalue())
    values = PROGRAMS[program](g)
    np.savez(out, printed=np.array(printed.getvalue()),
             **{f"v{i}": v for i, v in enumerate(values)})


if __name__ == "__main__":
    main(sys.argv[1:])
