"""One fusec region: compile it (or load it from the cache) and call it in place of its FX graph.

A region is a GraphModule of ATen ops whose inputs are tensors. Its shapes and dtypes come from
the fake tensors aot_autograd left in each placeholder's `meta["val"]`; fusec compiles for those
shapes. Dim 0 may be symbolic (dynamo makes a batch that changes between calls symbolic): the
region is then compiled once with dynamic rows (`dynamic_shapes`, one `Dim` per symbol, named rows0,
rows1, ... by first appearance) and its kernels take the row count at each call. Symbolic leading
dims (batch x sequence, `dynamic=True`) are flattened into one row count (`flatten_rows.py`); a
region of other symbolic dims is compiled per input shape at its calls (`per_shape_region`). The
compile itself is `fusec.compile` on the region, with zeros of those shapes (a symbol at its traced size) on the
CPU as example inputs: the kernels depend on shapes and dtypes, not on values or on where the
example tensors live, so a CUDA region is traced without touching the GPU.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import time
import warnings

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily

from .. import api
from ..cache import cache_key
from ..diagnostics import FusecError
from ..options import CompileOptions
from .layout import restrided
from .per_shape import PerShapeRegion
from .prepared_region import PreparedRegion, prepare_region
from .support import op_name

__all__ = ["NO_KERNEL", "RegionCrashed", "RegionResult", "WorkerError", "compile_graph", "compile_region", "graph_text",
           "per_shape_region", "prepare_region", "try_run"]


class RegionCrashed(FusecError):
    """The process compiling a region (a compile worker) died before it answered."""


class WorkerError(Exception):
    """An exception other than a FusecError that a compile worker raised, by its type's name (`kind`)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# A region that compiles to no kernel launch (`where(c, x, x)`, `x.t().contiguous()`: its outputs are
# its inputs, or copies of them) stays in PyTorch: fusec would only add its per-call checks, and the
# report counts a fusec region only where fusec launches a kernel.
NO_KERNEL = "fusec compiles it to no kernel (its outputs are its inputs or copies of them): PyTorch runs it"


@dataclasses.dataclass
class RegionResult:
    """What became of one region: `status` is compiled | cache | memory | pytorch (with `reason`)."""

    name: str
    ops: list
    target: str | None = None
    status: str = "pytorch"
    kernels: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    reason: str = ""
    compiled: object = None  # the CompiledModel
    call: object = None  # what the graph calls: the CompiledModel, its outputs in the traced layouts
    inputs: tuple = ()  # (input signature, device), for try_run


def graph_text(gm: torch.fx.GraphModule) -> str:
    """The region as canonical text for the cache key: ops, constants and wiring, by position, so
    that node names (which depend on what was traced before) do not change the key."""
    index, lines = {}, []
    for i, node in enumerate(gm.graph.nodes):
        index[node] = f"%{i}"
        args = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: index[n])
        target = op_name(node) if node.op == "call_function" else ""
        lines.append(f"{index[node]} = {node.op} {target} {args!r}")
    return "\n".join(lines)


# The size a symbolic dim 0 gets in the example inputs (compile and first run). Dynamo makes a dim
# symbolic only from 2 on (0 and 1 are specialized), so any size from 2 stands for all of them.
EXAMPLE_ROWS = 8


def _sizes(shape) -> list[int]:
    return [EXAMPLE_ROWS if isinstance(d, str) else d for d in shape]


def _dynamic_shapes(sig):
    """`dynamic_shapes` for the region's export: one `torch.export.Dim` per symbol, None for a
    static input; None when every input is static."""
    dims = {d: torch.export.Dim(d) for shape, _, _ in sig for d in shape[:1] if isinstance(d, str)}
    if not dims:
        return None
    if any(isinstance(d, str) for shape, _, _ in sig for d in shape[1:]):
        raise FusecError("an input has a symbolic dim past dim 0 that is not the region's leading dims")
    return tuple({0: dims[shape[0]]} if shape and isinstance(shape[0], str) else None for shape, _, _ in sig)


def _cpu_scalars(fn, sig, device):
    """`fn` with its 0-dim CPU inputs moved to `device` first (a region on the CPU: `fn` itself)."""
    moved = [i for i, (shape, _, d) in enumerate(sig) if d != device]
    if not moved:
        return fn

    def call(*args):
        args = list(args)
        for i in moved:
            args[i] = args[i].to(device, non_blocking=True)
        return fn(*args)

    return call


def _on_cpu(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy of the region whose `device=` arguments say cpu, so it traces with CPU example inputs."""
    gm = copy.deepcopy(gm)
    for node in gm.graph.nodes:
        if isinstance(node.kwargs.get("device"), torch.device):
            node.kwargs = {**node.kwargs, "device": torch.device("cpu")}
    gm.recompile()
    return gm


def compile_graph(gm, sig, options: dict, ops=(), *, trial_run: bool = False):
    """fusec.compile of region `gm` for inputs `sig`; `trial_run`: a cpu-target model is also loaded
    (JIT-compiled) and run once on zeros here (a compile worker does so: a JIT crash is then its)."""
    compiled = _compile(gm, sig, options)
    if trial_run and compiled.target == "cpu":
        with unset_fake_temporarily():
            compiled(*(torch.zeros(_sizes(shape), dtype=getattr(torch, dtype)) for shape, dtype, _ in sig))
    return compiled


def _compile(gm, sig, options: dict):
    # Outside aot_autograd's fake mode and dynamo's tracing context: the export of a region with
    # dynamic rows would otherwise add its own guards to the frame dynamo is compiling.
    with unset_fake_temporarily(), torch._guards.tracing(None):
        examples = tuple(torch.zeros(_sizes(shape), dtype=getattr(torch, dtype)) for shape, dtype, _ in sig)
        # with a non-strict export: the region is an ATen graph dynamo already traced
        return api.compile(_on_cpu(gm), examples, dynamic_shapes=_dynamic_shapes(sig), strict_export=False, **options)


def compile_region(name: str, gm: torch.fx.GraphModule, options: dict, cache, memory: dict,
                   compiler=compile_graph, run: bool = True, prepared: PreparedRegion | None = None) -> RegionResult:
    """Compile region `name` for its inputs' device, through the in-process and disk caches, with
    `compiler` (compile_graph, or a compile worker's), and run it once (`run`; else call try_run).
    `prepared`: what prepare_region read from its fake tensors (in the caller's thread). Never raises
    for the model's sake: a region fusec cannot take comes back with status 'pytorch' and the reason."""
    prep = prepared or prepare_region(gm, options)
    result = RegionResult(name, prep.ops, target=prep.target)
    start, layouts = time.perf_counter(), prep.layouts
    try:
        if prep.error is not None:
            raise prep.error
        for i, (graph, sig, layouts) in enumerate(prep.candidates):
            try:
                result.compiled, result.status = _lookup_or_compile(graph, sig, prep.options, prep.ops, cache, memory,
                                                                    prep.device, compiler)
                break
            except FusecError:  # the outputs written in order: fall back to the region as traced
                if i == len(prep.candidates) - 1:
                    raise
        result.kernels = list(result.compiled.manifest["kernels"])
        if not _launches(result.compiled):
            result.status, result.compiled, result.kernels, result.reason = "pytorch", None, [], NO_KERNEL
    except RegionCrashed as err:
        result.status, result.compiled = "pytorch", None
        result.reason = f"fusec crashed compiling it: {err.message}"
        warnings.warn(f"fusec: {name} ({', '.join(prep.ops)}) runs in PyTorch: {err.message}", stacklevel=2)
    except FusecError as err:
        result.status, result.compiled = "pytorch", None
        where = f"{err.location}: " if err.location else ""
        result.reason = f"fusec could not compile it: {where}{_first_line(err.message)}"
    except Exception as err:  # noqa: BLE001 (a bug in fusec must not break the user's model)
        result.status, result.compiled = "pytorch", None
        kind = getattr(err, "kind", type(err).__name__)
        result.reason = f"fusec failed on it (a fusec bug): {kind}: {_first_line(str(err))}"
    if result.compiled is not None:
        fn = prep.flat.call(result.compiled.__call__) if prep.flat else result.compiled.__call__
        fn = restrided(fn, gm, layouts, [getattr(torch, dtype) for _, dtype, _ in prep.sig])
        result.call = _cpu_scalars(fn, prep.sig, prep.device)
        result.inputs = (prep.sig, prep.device)
        if run:
            try_run(result)
    result.seconds = time.perf_counter() - start
    return result


def per_shape_region(name: str, gm: torch.fx.GraphModule, options: dict, cache, memory: dict,
                     compiler=compile_graph, prepared: PreparedRegion | None = None) -> RegionResult:
    """Region `name` compiled per input shape at its calls (per_shape.py): nothing is compiled now."""
    prep = prepared or prepare_region(gm, options, per_shape=True)
    result = RegionResult(name, prep.ops, target=prep.target, status="per-shape")
    if isinstance(prep.error, FusecError):
        result.status, result.reason = "pytorch", f"fusec could not compile it: {_first_line(prep.error.message)}"
        return result
    if prep.error is not None:
        raise prep.error
    layouts, device = prep.layouts, prep.device

    def compile_shape(args):
        sig = [(list(a.shape), str(a.dtype).removeprefix("torch."), a.device) for a in args]
        compiled, _ = _lookup_or_compile(gm, sig, prep.options, prep.ops, cache, memory, device, compiler)
        if not _launches(compiled):
            raise FusecError(NO_KERNEL)
        if not result.kernels:  # the report, read after the calls, names the first shape's kernels
            result.kernels = list(compiled.manifest["kernels"])
        return _cpu_scalars(restrided(compiled.__call__, gm, layouts, [a.dtype for a in args]), sig, device)

    region = PerShapeRegion(name, gm, compile_shape)

    def call(*args):  # a plain function: the graph's code calls it by its name
        return region(*args)

    call.region = region
    result.call = call
    return result


def _launches(compiled) -> bool:
    return any(step["op"] == "launch" for step in compiled.manifest["steps"])


def _lookup_or_compile(gm, sig, opts, ops, cache, memory, device, compiler):
    """(CompiledModel, how it was found): this process's models (per device: a loaded model is bound
    to its GPU), else the disk cache, else a compile, stored in both."""
    # Every option, defaults included: a default that changes between versions changes the key.
    ingredients = {"graph": graph_text(gm), "inputs": [s[:2] for s in sig],
                   "options": dataclasses.asdict(CompileOptions(**opts))}
    key = cache_key(ingredients)
    if (key, str(device)) in memory:
        return memory[key, str(device)], "memory"
    compiled, status = (cache.load(key) if cache is not None else None), "cache"
    if compiled is None:
        compiled, status = compiler(gm, sig, opts, ops), "compiled"
        if cache is not None:
            inputs = ", ".join(f"{dtype}{shape}" for shape, dtype, _ in sig)
            cache.store(key, compiled, {"ops": ", ".join(ops), "inputs": inputs}, ingredients)
    memory[key, str(device)] = compiled
    return compiled, status


def try_run(result: RegionResult) -> None:
    """Run the compiled region once, on zeros on its device. This loads its module now (the PTX into
    the driver, or the cpu target's JIT) and binds it to that device, so the forward calls the kernels
    with nothing to check first; and a runtime that refuses the region sends it back to PyTorch here,
    at compile time, instead of failing in the user's forward."""
    if result.compiled is None:
        return
    start, (sig, device) = time.perf_counter(), result.inputs
    try:
        with unset_fake_temporarily(), torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext():
            result.call(*(torch.zeros(_sizes(shape), dtype=getattr(torch, dtype), device=where)
                              for shape, dtype, where in sig))
    except FusecError as err:
        result.status, result.compiled, result.call = "pytorch", None, None
        result.reason = f"fusec's runtime refused it: {_first_line(err.message)}"
    except Exception as err:  # noqa: BLE001 (as above)
        result.status, result.compiled, result.call = "pytorch", None, None
        result.reason = f"fusec's runtime failed on it (a fusec bug): {type(err).__name__}: {_first_line(str(err))}"
    result.seconds += time.perf_counter() - start


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]
