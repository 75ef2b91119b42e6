"""What a region kernel costs numba to compile, and what calling many of them costs: the
figures a design of shared region kernels (issue 38) chooses from.

Three parts, each in fresh child processes (``--part fixed|calls|nests|all``), every
compile after numba's one-time start, each kernel's source in a real module file (so
``cache=True`` works), CPU seconds of the compiling thread, medians:

- ``fixed``: the fixed cost of one small region kernel (one 2-D nest,
  ``o = vmath.tanh(x + b)``) as an ``@njit`` dispatcher compiled for one signature, as a
  ``@cfunc``, without its loop (the wrappers alone), with ``parallel=True`` (without and
  with a ``prange``), ``fastmath``, ``math.tanh``, ``cache=True`` (compile and write, then
  load by a new dispatcher); split by numba's event API (``numba.core.event``) into its
  passes before typing, typing, parfor passes, lowering, LLVM (``numba:llvm_lock``) and
  the rest.
- ``calls``: per-call cost from Python into an ``@njit`` kernel by number of array
  arguments (beside a Python function); inside an ``@njit`` driver, a ``@cfunc`` called
  through its address (a global of numba's first-class ``FunctionType``), an ``@njit``
  kernel passed as a ``FunctionType`` argument, and a direct ``@njit`` call (which numba
  links into the driver and LLVM optimizes again there); what a table driver does in
  Python per call (the inputs' data pointers into its table); a small product by BLAS from
  Python and from compiled code. Then an L-layer MLP step's chain of 4 L + 1 region calls
  over four distinct region kernels (a product, an activation, a loss and an activation's
  derivative with column sums) on 32x64 float64 buffers, L = 1, 4, 8, 16, 32, run as one
  kernel with every region inline (today's segment kernel), a Python driver over the
  ``@njit`` regions (products by ``np.matmul``) and over their compiled entry points, an
  ``@njit`` driver over ``@cfunc`` regions by address, an ``@njit`` driver calling the
  ``@njit`` regions directly, and a generic driver compiled once for every program that
  calls ``(ptrs, dims)`` cfunc regions from a table: compile CPU and step.
- ``nests``: compile CPU of one kernel of n distinct 2-D nests (``compile_constructs``'s
  nests, n = 1, 8, 32, 160) beside n one-nest kernels, at ``NUMBA_OPT`` 3 (numba's
  default) and 0, and with ``parallel=True`` (outer ``prange``) and ``fastmath`` at
  n <= 32.

    python perf/region_call_cost.py [--part all] [--repeats N] [--chain 1,4,8,16,32]
                                    [--json PATH]

Run it alone, under the machine's CPU lock: ``flock /tmp/tf_numba_cpu.lock python ...``.
"""
import argparse
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402
from compile_constructs import _loops  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = ("import math\nimport numpy as np\nimport numba\n"
          "from tf_numba.lowering import loops, vmath\n\n")
_counter = itertools.count()


# --- kernels, as source text -------------------------------------------------------------

def region_source(kind, name="kernel", tanh="vmath.tanh", prange=False):
    """One region's kernel ``(x, w, b, o)`` over (32, 64) float64 buffers ``x`` and ``o``,
    a (64, 64) weight ``w`` and a bias ``b``, as the generator writes them: ``matmul``
    o = x @ w by BLAS (``loops.gemm_into``); ``forward`` o = tanh(x + b); ``backward``
    o = t * (1 - t * t) / 2 for t = x, its column means in o's first row; ``loss``
    o = (x - b) ** 2 / 2. Every output element is written, and values stay bounded
    however long a chain runs."""
    if kind == "matmul":
        return f"def {name}(x, w, b, o):\n    loops.gemm_into(x, w, o)\n"
    outer = "numba.prange" if prange else "range"
    body = {
        "forward": [f"o[i0, i1] = {tanh}(x[i0, i1] + b[i1])"],
        "backward": ["t = x[i0, i1]", "s = t * (1.0 - t * t) * 0.5", "o[i0, i1] = s",
                     "acc[i1] += s"],
        "loss": ["d = x[i0, i1] - b[i1]", "o[i0, i1] = d * d * 0.5"],
    }[kind]
    lines = [f"def {name}(x, w, b, o):"]
    if kind == "backward":
        lines.append("    acc = np.zeros(x.shape[1])")
    lines += [f"    for i0 in {outer}(x.shape[0]):",
              "        for i1 in range(x.shape[1]):"]
    lines += ["            " + line for line in body]
    if kind == "backward":
        lines += ["    for i1 in range(x.shape[1]):",
                  "        o[0, i1] = acc[i1] / x.shape[0]"]
    return "\n".join(lines) + "\n"


CHAIN_KINDS = ("matmul", "forward", "loss", "backward")


def chain_order(layers):
    """The regions an L-layer MLP step's value and gradient call, in order: per layer a
    product and an activation, the loss, then per layer the activation's derivative and a
    product (4 L + 1 calls)."""
    return ["matmul", "forward"] * layers + ["loss"] + ["backward", "matmul"] * layers


def inline_chain_source(layers):
    """Today's segment kernel: every region's code inline in one kernel, on ``bufs[k]``
    (the k-th call's output), ``weight`` and ``bias``."""
    lines = ["def kernel(bufs, weight, bias):"]
    for k, kind in enumerate(chain_order(layers)):
        lines.append(f"    x, w, b, o = bufs[{k}], weight, bias, bufs[{k + 1}]")
        lines += region_source(kind, "unused").splitlines()[1:]
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def driver_source(layers, callee):
    """An @njit driver running the chain: ``callee`` formats a region's name."""
    lines = ["def driver(bufs, weight, bias):"]
    for k, kind in enumerate(chain_order(layers)):
        lines.append(f"    {callee(kind)}(bufs[{k}], weight, bias, bufs[{k + 1}])")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def pointer_region_source(kind):
    """``region_source(kind)`` behind a uniform C signature, ``(ptrs, dims)``: its operands'
    data pointers and shapes, as a driver that calls every region alike passes them."""
    lines = ["def kernel(ptrs, dims):"]
    for k, (name, rank) in enumerate(zip("xwbo", REGION_RANKS)):
        shape = ", ".join(f"dims[{2 * k + d}]" for d in range(rank))
        lines.append(f"    {name} = numba.carray(ptrs[{k}], ({shape},), np.float64)")
    lines += region_source(kind).splitlines()[1:]
    return "\n".join(lines) + "\n"


def generic_driver():
    """A driver compiled once for every program: it calls ``fns[k]`` (the address of a
    ``(ptrs, dims)`` region) on the k-th record of the pointer and dims tables. Returns
    (driver, its compile CPU)."""
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def call_region(typingctx, address, ptrs, dims):
        def codegen(context, builder, signature, args):
            byte_ptr = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [byte_ptr, byte_ptr])
            fn = builder.inttoptr(args[0], fnty.as_pointer())
            builder.call(fn, [builder.inttoptr(args[1], byte_ptr),
                              builder.inttoptr(args[2], byte_ptr)])
            return context.get_dummy_value()
        return types.void(types.int64, types.int64, types.int64), codegen

    def drive(fns, ptrs, ptr_at, dims, dim_at):
        ptr_base, dim_base = ptrs.ctypes.data, dims.ctypes.data
        for k in range(fns.shape[0]):
            call_region(fns[k], ptr_base + 8 * ptr_at[k], dim_base + 8 * dim_at[k])
        return 0
    table = types.Array(types.int64, 1, "C")
    with CompileSplit() as split:
        driver = numba.njit(types.int64(*(table,) * 5), error_model="numpy",
                            nogil=True)(drive)
    return driver, split.cpu


def load(source, namespace=None, tag="k"):
    """The module of ``source`` written to a real file (numba caches only those)."""
    path = os.path.join(tempfile.gettempdir(),
                        f"tf_numba_region_{os.getpid()}_{tag}_{next(_counter)}.py")
    with open(path, "w") as f:
        f.write(HEADER + source)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace or {})
    spec.loader.exec_module(module)
    return module


# --- where a compile's time goes ------------------------------------------------------

class CompileSplit:
    """CPU seconds of the compiles inside the ``with``, and numba's split of them: its
    outermost compiler passes by name (``numba:run_pass`` events) and LLVM (outermost
    ``numba:llvm_lock`` events, every call into LLVM's library), and the LLVM that ran inside
    lowering. All are the compiling thread's CPU time (``time.thread_time``): wall time
    counts what other processes on a shared machine take."""
    KINDS = ("numba:run_pass", "numba:llvm_lock")

    def __enter__(self):
        from numba.core import event
        self._event = event
        self.passes, self.llvm, self.llvm_in_lowering, self._open = {}, 0.0, 0.0, []
        self._listeners = [(kind, _listener(self, kind)) for kind in self.KINDS]
        for kind, listener in self._listeners:
            event.register(kind, listener)
        self.cpu = time.thread_time()
        return self

    def __exit__(self, *exc):
        self.cpu = time.thread_time() - self.cpu
        for kind, listener in self._listeners:
            self._event.unregister(kind, listener)

    def start(self, kind, data):
        name = data["name"].split(" [")[0] if kind == "numba:run_pass" else kind
        self._open.append((kind, name, time.thread_time()))

    def end(self, kind, data):
        kind, name, started = self._open.pop()
        seconds = time.thread_time() - started
        outer = [n for k, n, _ in self._open if k == kind]
        if outer:
            return
        if kind == "numba:llvm_lock":
            self.llvm += seconds
            passes = [n for k, n, _ in self._open if k == "numba:run_pass"]
            if passes and passes[0].endswith("lowering"):
                self.llvm_in_lowering += seconds
        else:
            self.passes[name] = self.passes.get(name, 0.0) + seconds

    def summary(self):
        """{part: seconds}: front (numba's passes other than these), typing, parfor passes,
        lower (numba's lowering less the LLVM inside it), llvm (all of it), other (the
        CPU outside passes and LLVM: dispatchers, wrappers, Python)."""
        passes = dict(self.passes)
        typing = passes.pop("nopython_type_inference", 0.0)
        lowering = sum(passes.pop(n) for n in list(passes) if n.endswith("lowering"))
        parfor = sum(passes.pop(n) for n in list(passes) if "parfor" in n)
        front = sum(passes.values())
        outside = self.cpu - (front + typing + parfor + lowering) - (
            self.llvm - self.llvm_in_lowering)
        return dict(cpu=self.cpu, front=front, typing=typing, parfor=parfor,
                    lower=lowering - self.llvm_in_lowering, llvm=self.llvm,
                    other=max(0.0, outside))


def _listener(split, kind):
    """A numba event listener that tells ``split`` when an event of ``kind`` starts and
    ends."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, e):
            split.start(kind, e.data)

        def on_end(self, e):
            split.end(kind, e.data)
    return Listener()


def numba_start():
    """Pay numba's one-time start (and the SciPy imports its first compile makes)."""
    import numba
    wall = time.perf_counter()
    numba.njit(lambda v: v + 1)(1)
    return time.perf_counter() - wall


def signature(ranks):
    from numba import types
    return types.void(*(types.Array(types.float64, r, "C") for r in ranks))


REGION_RANKS = (2, 2, 1, 2)


def compile_region(variant, module=None):
    """Compile one fresh forward region kernel as ``variant`` (``+``-joined words: njit or
    cfunc, cache, parallel, prange, fastmath, libm for ``math.tanh`` in place of the
    generator's inlined ``vmath.tanh``, and empty for a kernel without a loop); (its
    callable, split)."""
    import numba
    options = dict(error_model="numpy", nogil=True)
    tanh, prange, decorator = "vmath.tanh", False, numba.njit
    for word in variant.split("+"):
        if word == "cfunc":
            decorator = numba.cfunc
        elif word == "cache":
            options["cache"] = True
        elif word == "parallel":
            options["parallel"] = True
        elif word == "prange":
            options["parallel"], prange = True, True
        elif word == "fastmath":
            options["fastmath"] = True
        elif word == "libm":
            tanh = "math.tanh"
    if module is None and variant.endswith("+empty"):
        module = load("def kernel(x, w, b, o):\n    o[0, 0] = x[0, 0]\n")
    elif module is None:
        module = load(region_source("forward", tanh=tanh, prange=prange))
    with CompileSplit() as split:
        if decorator is numba.cfunc:
            kernel = numba.cfunc(signature(REGION_RANKS), **options)(module.kernel)
        else:
            kernel = numba.njit(signature(REGION_RANKS), **options)(module.kernel)
    return kernel, split.summary()


FIXED_VARIANTS = ["njit+empty", "cfunc+empty", "njit", "cfunc", "njit+parallel", "njit+prange",
                  "njit+fastmath",
                  "njit+libm", "njit+cache", "cfunc+cache"]


def part_fixed(repeats):
    """{variant: {part: median seconds}}, and the load of a cached kernel from disk."""
    start = numba_start()
    out = {"numba start (first compile in a process), wall": start}
    samples = {v: [] for v in FIXED_VARIANTS}
    for _ in range(repeats):
        for variant in FIXED_VARIANTS:
            samples[variant].append(compile_region(variant)[1])
    for variant, runs in samples.items():
        out[variant] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    # a kernel numba wrote to its disk cache, loaded by a new dispatcher of a new module
    # object made from the same file
    path = load(region_source("forward"), tag="cached").__file__
    compile_region("njit+cache", load_module_at(path))
    loads = [compile_region("njit+cache", load_module_at(path))[1] for _ in range(repeats)]
    out["njit+cache, loaded from disk"] = {k: statistics.median(r[k] for r in loads)
                                           for k in loads[0]}
    return out


def load_module_at(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- calling ----------------------------------------------------------------------------

def timed(fn, number, rounds):
    """Median over ``rounds`` of the seconds per call of ``fn`` run ``number`` times."""
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def interleaved(tools, number, rounds):
    """{name: median seconds per call}: each round times every tool once, in turn."""
    samples = {name: [] for name in tools}
    for _ in range(rounds):
        for name, fn in tools.items():
            samples[name].append(timed(fn, number, 1))
    return {name: statistics.median(s) for name, s in samples.items()}


def part_calls(repeats, chain_layers):
    import numba
    import numpy as np
    from numba import types
    numba_start()
    out = {}
    rounds = max(repeats, 5) * 3

    # Python -> @njit kernel, by number of array arguments
    tools = {}
    for n in (1, 2, 4, 8, 16):
        names = ", ".join(f"a{i}" for i in range(n))
        module = load(f"def kernel({names}):\n    a0[0] = 1.0\n", tag="args")
        kernel = numba.njit(signature((1,) * n), error_model="numpy",
                            nogil=True)(module.kernel)
        arrays = [np.zeros(4) for _ in range(n)]
        tools[f"python -> njit, {n} array args"] = (
            lambda kernel=kernel, arrays=arrays: kernel(*arrays))
        def python_fn(*a):
            return None
        tools[f"python -> python function, {n} args"] = (
            lambda python_fn=python_fn, arrays=arrays: python_fn(*arrays))
    out["per call from python"] = interleaved(tools, 2000, rounds)

    # inside an @njit driver: 1000 calls of a region on 1x1 buffers
    one = load(region_source("loss"), tag="one").kernel
    sig = signature(REGION_RANKS)
    as_cfunc = numba.cfunc(sig, error_model="numpy", nogil=True)(one)
    as_njit = numba.njit(sig, error_model="numpy", nogil=True)(one)
    x, w, b, o = np.zeros((1, 1)), np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1))
    loop = ("def driver(x, w, b, o):\n    for _ in range(1000):\n"
            "        {call}(x, w, b, o)\n    return 0\n")
    drivers = {
        "njit driver -> cfunc by address (FunctionType global)":
            load(loop.format(call="region"), {"region": as_cfunc}).driver,
        "njit driver -> njit direct (linked in, inlined)":
            load(loop.format(call="region"), {"region": as_njit}).driver,
        "njit driver -> njit passed as FunctionType argument":
            load(loop.replace("(x, w, b, o):\n    for", "(region, x, w, b, o):\n    for")
                 .format(call="region"), {}).driver,
    }
    arr = types.Array(types.float64, 2, "C")
    tools = {}
    for name, fn in drivers.items():
        if "argument" in name:
            jitted = numba.njit(types.int64(types.FunctionType(sig), arr, arr,
                                            types.Array(types.float64, 1, "C"), arr),
                                error_model="numpy")(fn)
            tools[name] = lambda jitted=jitted: jitted(as_njit, x, w, b, o)
        else:
            jitted = numba.njit(error_model="numpy")(fn)
            jitted(x, w, b, o)
            tools[name] = lambda jitted=jitted: jitted(x, w, b, o)
    per_1000 = interleaved(tools, 20, rounds)
    out["per call inside an njit driver (1x1 region, 1000 calls)"] = {
        name: seconds / 1000 for name, seconds in per_1000.items()}

    # BLAS from Python, beside the same product from compiled code
    from tf_numba.lowering import loops
    rng = np.random.default_rng(0)
    a, w, c = rng.standard_normal((32, 64)), rng.standard_normal((64, 64)), np.empty((32, 64))
    gemm_once = numba.njit(lambda a, w, c: loops.gemm_into(a, w, c))
    gemm_100 = numba.njit(lambda a, w, c: [loops.gemm_into(a, w, c) for _ in range(100)])
    gemm_once(a, w, c)
    gemm_100(a, w, c)
    products = interleaved({"np.matmul(a, w, out=c) from python": lambda: np.matmul(a, w, out=c),
                            "njit kernel calling loops.gemm_into, from python":
                                lambda: gemm_once(a, w, c),
                            "loops.gemm_into inside an njit loop (per product)":
                                lambda: gemm_100(a, w, c)}, 200, rounds)
    products["loops.gemm_into inside an njit loop (per product)"] /= 100
    out["a 32x64 @ 64x64 float64 product"] = products

    # a table driver's per-call work in Python's thread: the inputs' data pointers into its
    # table, by a function compiled once per (dtype, rank, layout, count) of a tuple
    def pack(ptrs, slots, arrays):
        for i in range(len(arrays)):
            ptrs[slots[i]] = arrays[i].ctypes.data
        return 0
    pack = numba.njit(error_model="numpy", nogil=True)(pack)
    tools = {}
    for n in (1, 8, 64):
        arrays = tuple(np.zeros((32, 64)) for _ in range(n))
        ptrs, slots = np.zeros(n, np.int64), np.arange(n)
        pack(ptrs, slots, arrays)
        assert ptrs[-1] == arrays[-1].ctypes.data
        tools[f"pack {n} input pointers (one call, a tuple)"] = (
            lambda ptrs=ptrs, slots=slots, arrays=arrays: pack(ptrs, slots, arrays))
    tools["a.ctypes.data from python, one array"] = lambda: a.ctypes.data
    tools["np.empty((32, 64)) from python"] = lambda: np.empty((32, 64))
    out["per call of a table driver, from python"] = interleaved(tools, 2000, rounds)

    # an MLP step's chain of region calls over four distinct region kernels
    out["chain"] = {}
    for layers in chain_layers:
        out["chain"][layers] = chain(layers, repeats)
    return out


def chain(layers, repeats):
    """{mechanism: dict(compile=CPU s, step=s)} for an L-layer MLP's chain of regions."""
    import numba
    import numpy as np
    from numba import types
    rng = np.random.default_rng(0)
    calls = len(chain_order(layers))
    bufs = rng.standard_normal((calls + 1, 32, 64)) * 0.1
    weight = rng.standard_normal((64, 64)) / 8
    bias = rng.standard_normal(64) * 0.1
    sig = signature(REGION_RANKS)
    options = dict(error_model="numpy", nogil=True)
    arg_types = tuple(numba.typeof(v) for v in (bufs, weight, bias))
    result = {}

    with CompileSplit() as split:
        inline = numba.njit(**options)(load(inline_chain_source(layers), tag="inline").kernel)
        inline.compile(arg_types)
    result["one kernel, every region inline"] = dict(compile=split.cpu)

    with CompileSplit() as split:
        njits = {kind: numba.njit(sig, **options)(load(region_source(kind)).kernel)
                 for kind in CHAIN_KINDS if kind != "matmul"}
    result["python driver over njit regions, np.matmul"] = dict(compile=split.cpu)
    regions_cpu = split.cpu
    with CompileSplit() as split:
        njits["matmul"] = numba.njit(sig, **options)(load(region_source("matmul")).kernel)
    matmul_cpu = split.cpu
    views = [bufs[k] for k in range(calls + 1)]
    plan = [(kind, njits[kind], views[k], views[k + 1])
            for k, kind in enumerate(chain_order(layers))]

    def python_driver():
        for kind, kernel, x, o in plan:
            if kind == "matmul":
                np.matmul(x, weight, out=o)
            else:
                kernel(x, weight, bias, o)

    # the compiled functions' own entry points, past the dispatchers' type checks, and the
    # product by a compiled region too
    entries = [(njits[kind].overloads[sig.args].entry_point, x, o) for kind, _, x, o in plan]

    def python_entry_points():
        for entry, x, o in entries:
            entry(x, weight, bias, o)
    result["python driver over njit entry points"] = dict(compile=regions_cpu + matmul_cpu)

    with CompileSplit() as split:
        cfuncs = {kind: numba.cfunc(sig, **options)(load(region_source(kind)).kernel)
                  for kind in CHAIN_KINDS}
    cfuncs_cpu = split.cpu
    names = {f"region_{kind}": cfuncs[kind] for kind in CHAIN_KINDS}
    with CompileSplit() as split:
        by_address = numba.njit(**options)(load(
            driver_source(layers, lambda kind: f"region_{kind}"), names, tag="drv").driver)
        by_address.compile(arg_types)
    result["njit driver over cfunc regions by address"] = dict(compile=cfuncs_cpu + split.cpu)
    result["(that driver alone)"] = dict(compile=split.cpu)

    driver, driver_cpu = generic_driver()
    result["(the generic table driver, compiled once)"] = dict(compile=driver_cpu)
    pointer_sig = types.void(types.CPointer(types.voidptr), types.CPointer(types.int64))
    with CompileSplit() as split:
        pointer_regions = {
            kind: numba.cfunc(pointer_sig, **options)(load(pointer_region_source(kind)).kernel)
            for kind in CHAIN_KINDS}
    result["generic table driver over (ptrs, dims) cfunc regions"] = dict(compile=split.cpu)
    ptr_rows, dim_rows = [], []
    for k, _ in enumerate(chain_order(layers)):
        operands = (views[k], weight, bias, views[k + 1])
        ptr_rows.append([a.ctypes.data for a in operands])
        dim_rows.append([d for a in operands for d in (a.shape + (0,))[:2]])
    table = (np.array([pointer_regions[kind].address for kind in chain_order(layers)]),
             np.array(ptr_rows, np.int64).ravel(), np.arange(calls) * 4,
             np.array(dim_rows, np.int64).ravel(), np.arange(calls) * 8)

    with CompileSplit() as split:
        linked = numba.njit(**options)(load(
            driver_source(layers, lambda kind: f"region_{kind}"),
            {f"region_{kind}": njits[kind] for kind in CHAIN_KINDS}, tag="drv").driver)
        linked.compile(arg_types)
    result["njit driver calling njit regions (linked)"] = dict(
        compile=regions_cpu + matmul_cpu + split.cpu)

    want = bufs.copy()
    inline(want, weight, bias)
    for fn in (python_driver, python_entry_points, lambda: by_address(bufs, weight, bias),
               lambda: linked(bufs, weight, bias), lambda: driver(*table)):
        bufs[1:] = 0.0
        fn()
        np.testing.assert_allclose(bufs, want, rtol=1e-12, atol=1e-15)
    steps = interleaved({
        "one kernel, every region inline": lambda: inline(bufs, weight, bias),
        "python driver over njit regions, np.matmul": python_driver,
        "python driver over njit entry points": python_entry_points,
        "njit driver over cfunc regions by address": lambda: by_address(bufs, weight, bias),
        "njit driver calling njit regions (linked)": lambda: linked(bufs, weight, bias),
        "generic table driver over (ptrs, dims) cfunc regions": lambda: driver(*table),
    }, max(1, 400 // calls), max(repeats, 5) * 3)
    for name, seconds in steps.items():
        result[name]["step"] = seconds
    return result


# --- nests per kernel -------------------------------------------------------------------

def part_nests(repeats, variant):
    """{n: dict(one=CPU s of one kernel of n nests, separate=CPU s of n one-nest kernels)}
    for ``variant`` (``plain``, ``parallel``, ``fastmath``), at this process's NUMBA_OPT."""
    import numba
    import numpy as np
    numba_start()
    grid = (np.ones((128, 32)),) * 3
    types_ = tuple(numba.typeof(a) for a in grid)
    options = dict(error_model="numpy", nogil=True)
    if variant == "parallel":
        options["parallel"] = True
    elif variant == "fastmath":
        options["fastmath"] = True

    def compile_one(nests):
        source = _loops(nests, True)
        if variant == "parallel":
            source = source.replace("\n    for i0 in range(", "\n    for i0 in numba.prange(")
        kernel = numba.njit(**options)(load(source, tag="nest").kernel)
        with CompileSplit() as split:
            kernel.compile(types_)
        return split.summary()

    sizes = (1, 8, 32, 160) if variant == "plain" else (1, 8, 32)
    out = {}
    for n in sizes:
        runs = [compile_one(n) for _ in range(repeats if n <= 32 else 1)]
        one = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        separate = statistics.median(compile_one(1)["cpu"] for _ in range(max(3, repeats)))
        out[n] = dict(one=one, separate=separate * n)
    return out


# --- the parent: children, tables -------------------------------------------------------

def run_child(args, **env):
    full_env = dict(os.environ, **env)
    full_env["PYTHONPATH"] = REPO + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="numba_cache_")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *args],
                          capture_output=True, text=True, env=full_env)
    if proc.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ms(seconds):
    return f"{seconds * 1e3:7.0f} ms"


def print_fixed(fixed):
    start = fixed.pop("numba start (first compile in a process), wall")
    print(f"== fixed cost of one small region kernel (one 2-D nest, o = tanh(x + b)), "
          f"CPU, medians; numba's one-time start {ms(start)}")
    parts = ("cpu", "front", "typing", "parfor", "lower", "llvm", "other")
    print(f"   {'variant':30}" + "".join(f"{p:>10}" for p in parts) + f"{'/ njit':>9}")
    base = fixed["njit"]["cpu"]
    for variant, split in fixed.items():
        print(f"   {variant:30}" + "".join(f"{split[p] * 1e3:8.0f}ms" for p in parts)
              + f"{split['cpu'] / base:8.2f}x")


def print_calls(calls):
    for title, key, digits in (
            ("per call from Python (median seconds per call)", "per call from python", 0),
            ("per call inside an njit driver",
             "per call inside an njit driver (1x1 region, 1000 calls)", 1),
            ("a table driver's work in Python per call (median seconds)",
             "per call of a table driver, from python", 0),
            ("a 32x64 @ 64x64 float64 product (median seconds per product)",
             "a 32x64 @ 64x64 float64 product", 0)):
        print(f"== {title}")
        for name, seconds in calls[key].items():
            print(f"   {name:60}{seconds * 1e9:8.{digits}f} ns")
    print("== an L-layer MLP step's chain of 4 L + 1 region calls (4 distinct regions, 32x64 "
          "float64): compile CPU, step, step / one kernel's")
    for layers, rows in calls["chain"].items():
        base = rows["one kernel, every region inline"]["step"]
        for name, row in rows.items():
            step = row.get("step")
            print(f"   L={layers:<3} {name:52}{row['compile']:7.2f} s" +
                  (f"{step * 1e6:9.1f} us{step / base:7.2f}x" if step else ""))


def print_nests(nests):
    print("== compile CPU of one kernel of n distinct 2-D nests vs n one-nest kernels")
    print(f"   {'config':22}{'n':>5}{'one kernel':>12}{'per nest':>10}{'llvm':>8}"
          f"{'n kernels':>11}{'one / n':>9}")
    for config, rows in nests.items():
        for n, row in rows.items():
            one = row["one"]
            print(f"   {config:22}{n:>5}{one['cpu']:11.2f}s{one['cpu'] / int(n) * 1e3:8.0f}ms"
                  f"{one['llvm'] / one['cpu'] * 100:7.0f}%{row['separate']:10.2f}s"
                  f"{one['cpu'] / row['separate']:8.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="all", choices=("all", "fixed", "calls", "nests"))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chain", default="1,4,8,16,32",
                        help="layers of the MLP-like chains of region calls timed")
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        part, *rest = args.child
        result = {"fixed": lambda: part_fixed(args.repeats),
                  "calls": lambda: part_calls(args.repeats, [int(r) for r in rest]),
                  "nests": lambda: part_nests(args.repeats, rest[0])}[part]()
        print(json.dumps(result))
        return
    parts = ("fixed", "calls", "nests") if args.part == "all" else (args.part,)
    results = {}
    print(f"   {_bench.load_average()}")
    with _bench.ForeignLoad() as foreign:
        for part in parts:
            r = ["--repeats", str(args.repeats)]
            if part == "fixed":
                results["fixed"] = run_child(["fixed"] + r)
                print_fixed(dict(results["fixed"]))
            elif part == "calls":
                results["calls"] = run_child(["calls"] + args.chain.split(",") + r)
                print_calls(results["calls"])
            else:
                results["nests"] = {}
                for config, variant, opt in (("plain, NUMBA_OPT=3", "plain", "3"),
                                             ("plain, NUMBA_OPT=0", "plain", "0"),
                                             ("parallel, NUMBA_OPT=3", "parallel", "3"),
                                             ("fastmath, NUMBA_OPT=3", "fastmath", "3"),
                                             ("plain, NUMBA_OPT=1", "plain", "1")):
                    results["nests"][config] = run_child(["nests", variant] + r,
                                                         NUMBA_OPT=opt)
                print_nests(results["nests"])
            print(f"   {_bench.load_average()}", flush=True)
    if foreign.cores is not None:
        print(f"   other processes used {foreign.cores:.2f} of {os.cpu_count()} cores meanwhile")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(results=results, machine=_bench.machine_info()), f, indent=1)


if __name__ == "__main__":
    main()
