"""What compiling a region needs from its fake tensors, read before the regions compile in parallel.

A region's shapes, dtypes, devices and output layouts come from the fake tensors aot_autograd left in
its nodes' `meta["val"]`. Those tensors share one FakeTensorMode, and an op on any of them (the
`permute` of `written_in_order`, the `deepcopy` of `flatten_region`) marks that mode as inside a
kernel for its duration. Done in one region's compile thread, that makes another thread's
`val.device` read `meta` ("inputs on meta: fusec runs on cpu and cuda") or its own op fail
("fake_mode.in_kernel_invocation must be False"): the mistral training step lost a different region
to PyTorch on different runs. So `prepare_region` runs in the backend's thread, one region after
another, and the compile threads read only what it returns.
"""

from __future__ import annotations

import dataclasses

import torch

from ..diagnostics import FusecError
from ..options import gpu_options
from .flatten_rows import FlatRegion, flatten_region
from .layout import output_layouts, written_in_order
from .support import op_name

__all__ = ["PreparedRegion", "input_signature", "prepare_region", "region_ops"]


@dataclasses.dataclass
class PreparedRegion:
    ops: list  # the region's ATen ops, for the report
    sig: list = dataclasses.field(default_factory=list)  # [(shape, dtype, device)] of its inputs
    layouts: list = dataclasses.field(default_factory=list)  # its outputs' traced layouts
    target: str | None = None
    device: torch.device | None = None
    options: dict = dataclasses.field(default_factory=dict)  # the compile options for that target
    # What to compile, in order of preference: (graph, its input signature, its output layouts).
    # The second is the fallback where fusec cannot compile the first (the outputs written in order).
    candidates: list = dataclasses.field(default_factory=list)
    flat: FlatRegion | None = None  # the region flattened into rows (a symbolic batch x sequence)
    error: Exception | None = None  # why it cannot be compiled, raised when the compile starts


def region_ops(gm: torch.fx.GraphModule) -> list[str]:
    return [op_name(n) for n in gm.graph.nodes if n.op == "call_function" and op_name(n) != "getitem"]


def prepare_region(gm: torch.fx.GraphModule, options: dict, per_shape: bool = False) -> PreparedRegion:
    """Region `gm`'s inputs, outputs, target and graphs to compile (`per_shape`: none, it is compiled
    per shape at its calls). Never raises: an error is kept for the compile to report."""
    prep = PreparedRegion(region_ops(gm))
    try:
        prep.sig = input_signature(gm)
        prep.layouts = output_layouts(gm)
        prep.target, prep.device = _target(prep.sig)
        prep.options = {**options, "target": prep.target}
        if prep.target == "cuda":
            prep.options = _cuda_options(prep.device, prep.options)
        if per_shape:
            return prep
        prep.flat = flatten_region(gm)
        if prep.flat:
            prep.candidates = [(prep.flat.gm, _flat_signature(prep.sig, prep.flat), prep.layouts)]
        else:
            ordered, ordered_layouts = written_in_order(gm, prep.layouts)
            prep.candidates = [(gm, prep.sig, prep.layouts)]
            if ordered is not gm:
                prep.candidates.insert(0, (ordered, prep.sig, ordered_layouts))
    except Exception as err:  # noqa: BLE001 (compile_region reports it as it reports a compile's)
        prep.error = err
    return prep


def input_signature(gm) -> list:
    """[(shape, dtype, device)] of the region's inputs, each symbolic dim as its name (rows0, rows1,
    ... by first appearance), or a FusecError saying why it has none."""
    sig, symbols = [], {}
    for node in gm.graph.find_nodes(op="placeholder"):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise FusecError(f"input {node.name} is {type(val).__name__}, not a tensor")
        shape = [d if isinstance(d, int) else symbols.setdefault(str(d), f"rows{len(symbols)}") for d in val.shape]
        sig.append((shape, str(val.dtype).removeprefix("torch."), val.device))
    return sig


def _flat_signature(sig, flat: FlatRegion) -> list:
    """The signature of the flattened region: a prefixed input's leading dims are one, `rows0`."""
    k = len(flat.prefix)
    return [((["rows0", *shape[k:]] if prefixed else shape), dtype, device)
            for (shape, dtype, device), prefixed in zip(sig, flat.inputs)]


def _target(sig) -> tuple[str, torch.device]:
    """The region's target and device. A 0-dim CPU tensor beside CUDA tensors (a Python float that
    dynamo passes as a tensor, as PyTorch allows one in any CUDA op) counts as a scalar: the call
    moves it to the GPU (kernel.py's `_cpu_scalars`)."""
    if not sig:
        raise FusecError("the region has no tensor inputs")
    devices = {d for shape, _, d in sig if shape or d.type != "cpu"} or {d for _, _, d in sig}
    if len(devices) != 1:
        raise FusecError(f"inputs on several devices ({', '.join(sorted(map(str, devices)))})")
    device = devices.pop()
    if device.type not in ("cpu", "cuda"):
        raise FusecError(f"inputs on {device}: fusec runs on cpu and cuda")
    return device.type, device


def _cuda_options(device, options: dict) -> dict:
    """The GPU's architecture (unless `arch` is given) and the PTX version that architecture needs."""
    return gpu_options(device, options)
