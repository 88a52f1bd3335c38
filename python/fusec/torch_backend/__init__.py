"""fusec inside PyTorch: `torch.compile(model, backend="fusec")`.

    import torch
    compiled = torch.compile(model, backend="fusec")                 # registered by `pip install`
    compiled = torch.compile(model, backend=fusec.torch_backend.fusec_backend,
                             options={"explain": True, "cuda_graphs": True})

What happens to each graph dynamo captures:
1. aot_autograd turns it into an ATen graph (parameters become inputs; inference, or the forward
   of training with the backward left to PyTorch), decomposing the few ops `decompositions.py` names;
2. `graph_cleanup.py` drops what adds nothing (a `cat`'s empty pieces); `hoist_constants.py` computes
   what depends on no input once (position ids, T5's relative-position buckets); `pad_matmuls.py` pads the
   operands of a matmul cuBLAS would run on a slow fallback (odd sizes); `partition.py` splits it
   by `support.py`'s op table: pointwise ops, reductions, norms and softmax form fusec regions;
   matmuls, attention and anything unlisted run in PyTorch; the views between them are made as
   aliases of their traced layout (`fast_views.py`: ~1 µs of host time each instead of ~3.5), and its
   matmuls and attention are called through PyTorch's Python bindings (`fast_calls.py`);
3. each region is compiled by `fusec.compile` for its tensors' device (`target="cpu"` for CPU
   tensors, the GPU's architecture for CUDA tensors), through the compile cache (`fusec.cache`),
   and its submodule is replaced by the compiled kernels; a region fusec fails on stays in PyTorch,
   and the report says why (the model never fails because of fusec); a region whose inputs have a
   symbolic dim 0 (a batch that changes between calls) is compiled once with dynamic rows, one over a
   symbolic batch x sequence as rows too (`flatten_rows.py`), and what cannot be flattened is
   compiled per input shape at its calls (`per_shape.py`); its
   outputs keep the strides the graph was traced with (`layout.py`); the compiles run in worker
   processes (`workers.py`: a crash in MLIR or LLVM costs its region, not the program), the regions
   of a graph in parallel;
4. optionally (`cuda_graphs`) the whole forward is replayed as one CUDA graph (one per input shape).

Options (`torch.compile(..., options={...})`): `explain` (print the partition report; also
FUSEC_EXPLAIN=1), `cuda_graphs` (False), `cache` (True: use the disk cache), `cache_dir`, `pad_matmuls`
(True: matmuls whose sizes make cuBLAS fall back are padded where that is faster, `pad_matmuls.py`),
`check_regions` (False: each region's outputs checked at its calls against its FX graph in float64,
and against eager's, `region_check.py`), `fast_views` (True: the views left to PyTorch are made as
aliases of their traced layout, `fast_views.py`), `fast_calls` (True: the matmuls, `cat` and attention
left to PyTorch are called through their Python bindings, `fast_calls.py`), and the
fields of `fusec.CompileOptions` except `target` (arch, fusion, threads_per_block, ...).
Environment: FUSEC_COMPILE_IN_PROCESS=1 (compile in this process, unisolated: for debugging),
FUSEC_COMPILE_WORKERS=N (the worker pool's size).
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import itertools
import warnings

import torch
from functorch.compile import make_boxed_func
from torch._functorch.aot_autograd import aot_module_simplified

from ..cache import CompileCache
from ..diagnostics import FusecError
from ..options import CompileOptions
from .cudagraph import CudaGraphRunner, static_input_indices
from . import fast_calls, fast_views, graph_cleanup, hoist_constants, kernel, pad_matmuls, region_check, workers
from .decompositions import decompositions
from . import partition  # (its functions called through the module: tests replace them)
from .report import Report, explain_enabled
from .support import op_name

__all__ = ["BACKEND_OPTIONS", "fusec_backend", "reports", "stats"]

BACKEND_OPTIONS = {"explain": None, "cuda_graphs": False, "cache": True, "cache_dir": None, "pad_matmuls": True,
                   "check_regions": False, "fast_views": True,
                   "fast_calls": True}
reports: list = []  # one Report per graph compiled in this process, in order
stats: collections.Counter = collections.Counter()  # regions by status: compiled, cache, memory, pytorch
_memory: dict = {}  # cache key -> CompiledModel, for graphs compiled again in this process
_graph_ids = itertools.count()


def _split_options(options: dict) -> tuple[dict, dict]:
    """(backend options, fusec.compile options); an unknown or misplaced name is a FusecError."""
    compile_fields = {f.name for f in dataclasses.fields(CompileOptions)} - {"target"}
    unknown = sorted(set(options) - compile_fields - set(BACKEND_OPTIONS))
    if "target" in options:
        raise FusecError("the fusec backend picks the target from the tensors' device: drop the `target` option")
    if unknown:
        raise FusecError(f"unknown fusec backend option(s) {', '.join(unknown)}; known: "
                         f"{', '.join(sorted(set(BACKEND_OPTIONS) | compile_fields))}")
    backend = {k: options[k] for k in BACKEND_OPTIONS if k in options}
    compile_options = {k: v for k, v in options.items() if k in compile_fields}
    CompileOptions(**compile_options)  # a bad value is an error now, not a fallback in every region
    return backend, compile_options


def fusec_backend(gm, example_inputs, options: dict | None = None, **kwargs):
    """The torch.compile backend (dynamo calls it with each captured graph and its example inputs)."""
    backend_options, compile_options = _split_options({**(options or {}), **kwargs})
    graph_id = next(_graph_ids)
    workers.warm_up()  # the compile workers start while aot_autograd traces

    def forward_compiler(fw_gm, fw_inputs):
        return make_boxed_func(_compile_forward(fw_gm, graph_id, backend_options, compile_options))

    def backward_compiler(bw_gm, bw_inputs):  # training: the backward runs in PyTorch
        return make_boxed_func(bw_gm.forward)

    return aot_module_simplified(gm, example_inputs, fw_compiler=forward_compiler,
                                 bw_compiler=backward_compiler, inference_compiler=forward_compiler,
                                 decompositions=decompositions())


def _compile_forward(fw_gm, graph_id: int, backend_options: dict, compile_options: dict):
    """Partition one ATen graph and compile its regions; any failure leaves the graph to PyTorch."""
    explain = explain_enabled(backend_options)
    try:
        fn, report = _partition_and_compile(fw_gm, graph_id, backend_options, compile_options)
    except Exception as err:  # noqa: BLE001 (fusec's own bug must not break the user's model)
        warnings.warn(f"fusec: graph {graph_id} runs in PyTorch: the fusec backend failed on it: "
                      f"{type(err).__name__}: {err}", stacklevel=2)
        n_ops = sum(1 for n in fw_gm.graph.nodes if n.op == "call_function" and op_name(n) != "getitem")
        report = Report(graph_id, n_ops, [], collections.Counter(
            {("(every op)", f"the fusec backend failed on this graph: {type(err).__name__}: {err}"): n_ops}))
        fn = fw_gm.forward
    reports.append(report)
    if explain:
        report.print()
    return fn


def _partition_and_compile(fw_gm, graph_id, backend_options, compile_options):
    n_inputs = len(fw_gm.graph.find_nodes(op="placeholder"))
    graph_cleanup.cleanup_graph(fw_gm)
    constants = hoist_constants.hoist_constants(fw_gm)
    padded = pad_matmuls.pad_matmuls(fw_gm) if backend_options.get("pad_matmuls", True) else []
    part = partition.partition_graph(fw_gm)
    part.n_ops += sum(constants.values())
    cache = CompileCache(backend_options.get("cache_dir")) if backend_options.get("cache", True) else None
    results = _compile_regions(part, compile_options, cache)
    checks = []  # region_check's records, when `check_regions`
    for name, result in zip(part.regions, results):
        kernel.try_run(result)  # here, in order: loading a module is not done in parallel
        stats[result.status] += 1
        if result.call is not None:
            call = result.call
            if backend_options.get("check_regions"):
                call = region_check.checked(name, getattr(part.graph_module, name), call, checks)
            partition.replace_region(part.graph_module, name, call)
    if backend_options.get("fast_views", True):
        fast_views.make_views_fast(part.graph_module)
    if backend_options.get("fast_calls", True):
        fast_calls.make_calls_fast(part.graph_module)
    report = Report(graph_id, part.n_ops, results, part.pytorch_ops, padded_matmuls=padded, region_checks=checks,
                    constants=constants)
    fn = part.graph_module.forward
    if backend_options.get("cuda_graphs") and _all_cuda(fw_gm):
        fn = CudaGraphRunner(fn, static_input_indices(n_inputs))
        report.cuda_graphs = True
    return fn, report


def _compile_regions(part, compile_options: dict, cache) -> list:
    """Each region's RegionResult, compiled by the compile workers in parallel (FUSEC_COMPILE_IN_PROCESS=1:
    one after another in this process). What each needs from its fake tensors is read here first, one
    region after another (prepared_region.py says why)."""
    preps = {name: kernel.prepare_region(getattr(part.graph_module, name), compile_options,
                                         per_shape=name in part.per_shape) for name in part.regions}

    def one(name, compiler):
        make = kernel.per_shape_region if name in part.per_shape else \
            lambda *args, **kw: kernel.compile_region(*args, **kw, run=False)
        return make(name, getattr(part.graph_module, name), compile_options, cache, _memory, compiler=compiler,
                    prepared=preps[name])

    if workers.in_process() or not part.regions:
        return [one(name, kernel.compile_graph) for name in part.regions]
    with concurrent.futures.ThreadPoolExecutor(min(len(part.regions), workers.pool_size())) as threads:
        return list(threads.map(lambda name: one(name, workers.compile_in_worker), part.regions))


def _all_cuda(gm) -> bool:
    """Every tensor input of the graph is on a CUDA device (a CUDA graph cannot hold CPU work)."""
    vals = [n.meta.get("val") for n in gm.graph.find_nodes(op="placeholder")]
    tensors = [v for v in vals if isinstance(v, torch.Tensor)]
    return bool(tensors) and all(t.device.type == "cuda" for t in tensors)
