"""Split an ATen graph into fusec regions and the ops PyTorch keeps.

torch.fx's CapabilityBasedPartitioner groups the ops the support table accepts into the largest
connected regions that do not make a cycle (a region cannot both feed and consume the same matmul).
Two clean-ups follow, both so that a region is a kernel worth launching:

- views at a region's edges are given back to PyTorch (`remove_bookend_non_compute_ops`): a reshape
  of a matmul's result is free in PyTorch, while inside the region it would make fusec write a copy;
- a view inside a region whose result is also read outside it (BERT's expanded token types, saved
  for the backward) is taken again outside (`_views_outside`): the region writes the tensor the view
  is of, PyTorch makes the view (an expand as a region output would be a write of overlapping
  elements, which fusec refuses);
- a region with no arithmetic left (only views) is dropped: a kernel that only copies is slower
  than PyTorch's view.

Each region becomes a submodule `fusec_region_N` of the returned GraphModule, called like a
function of tensors; the caller swaps it for a compiled kernel.
"""

from __future__ import annotations

import collections
import dataclasses

import torch
from torch.fx.node import _get_qualified_name
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from .support import (ALIASING_VIEWS, SPLITS, VIEWS, VIEWS_IN_PYTORCH, FusecOperatorSupport, graph_rows,
                      has_inner_symbols, is_compute, op_name, why_pytorch)


__all__ = ["PER_SHAPE_PREFIX", "REGION_PREFIX", "SIZE_ARITHMETIC", "Partition", "partition_graph", "replace_region"]

REGION_PREFIX = "fusec_region_"
PER_SHAPE_PREFIX = "fusec_shape_region_"
# Supported ops outside every region are views (a region of views only is dropped; edge views too).
_VIEW_LEFT_OUT = "a view with no arithmetic beside it: stays a free PyTorch view"
SIZE_ARITHMETIC = "size arithmetic: a symbolic shape's sizes, computed on the host"


@dataclasses.dataclass
class Partition:
    """The split graph, the ATen ops of each region (by submodule name), and the ops left to
    PyTorch, counted by (op, reason)."""

    graph_module: torch.fx.GraphModule
    regions: dict[str, list[str]]
    pytorch_ops: collections.Counter
    n_ops: int
    per_shape: set = dataclasses.field(default_factory=set)  # the regions compiled per input shape


def _view_qualified_names() -> list[str]:
    """Every overload of the VIEWS ops, named as the partitioner compares them."""
    names = []
    for base in VIEWS:
        packet = getattr(torch.ops.aten, base, None)
        for overload in (packet.overloads() if packet is not None else []):
            names.append(_get_qualified_name(getattr(packet, overload)))
    return names


def _why_left_out(node, rows: tuple) -> str:
    name = op_name(node)
    if getattr(node.target, "__module__", None) in ("_operator", "operator") or \
            name in ("aten.sym_size", "aten.sym_stride", "aten.sym_numel", "aten.sym_storage_offset"):
        return SIZE_ARITHMETIC
    if name.startswith("aten.") and name[len("aten."):] in VIEWS_IN_PYTORCH:
        return _VIEW_LEFT_OUT  # a view is free in PyTorch, symbolic sizes or not
    return why_pytorch(node, rows) or _VIEW_LEFT_OUT


def _ops(nodes) -> list[str]:
    return [op_name(n) for n in nodes if n.op == "call_function" and op_name(n) != "getitem"]


def _take(gm: torch.fx.GraphModule, support, prefix: str) -> tuple:
    """Partition `gm` by `support` and fuse the partitions worth a kernel into submodules `prefix`N:
    (the graph, {submodule: its ATen ops}, the names of the nodes taken: fusing may make the graph's
    nodes anew, names stay)."""
    partitioner = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True,
                                             non_compute_ops=_view_qualified_names())
    parts = partitioner.propose_partitions()
    partitioner.remove_bookend_non_compute_ops(parts)
    _strided_inputs_inside(gm, parts, support)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    kept = sorted((p for p in parts if any(is_compute(n) for n in p.nodes)),
                  key=lambda p: min(order[n] for n in p.nodes))
    regions = {f"{prefix}{i}": _ops(sorted(p.nodes, key=order.get)) for i, p in enumerate(kept)}
    taken = {n.name for p in kept for n in p.nodes}
    for p in kept:
        _views_outside(gm, p.nodes)
    return (partitioner.fuse_partitions(kept, prefix=prefix) if kept else gm), regions, taken


def partition_graph(gm: torch.fx.GraphModule) -> Partition:
    """Partition `gm` (mutated: regions become submodules) by the support table. In a graph with
    symbolic dims past dim 0 (`dynamic=True`), a second partition of what is left takes the ops whose
    symbolic dims cannot be flattened into rows (rotary embeddings' [batch, heads, seq, dim], images'
    [batch, channels, height, width]) into regions compiled per input shape (`PER_SHAPE_PREFIX`); the
    first partition's regions are call_module nodes by then, which it leaves be."""
    rows, inner = graph_rows(gm), has_inner_symbols(gm)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]  # before: copies of views are not counted
    fused, regions, taken = _take(gm, FusecOperatorSupport(rows), REGION_PREFIX)
    per_shape = {}
    if inner:
        fused, per_shape, more = _take(fused, FusecOperatorSupport(rows, per_shape=True), PER_SHAPE_PREFIX)
        taken |= more
    pytorch_ops = collections.Counter()
    for node in calls:
        if node.name in taken or op_name(node) == "getitem":
            continue
        pytorch_ops[(op_name(node), _why_left_out(node, rows))] += 1
    return Partition(fused, {**regions, **per_shape}, pytorch_ops, len(_ops(calls)), set(per_shape))


def _contiguous(node) -> bool:
    val = node.meta.get("val")
    return isinstance(val, torch.Tensor) and val.is_contiguous()


def _strided_inputs_inside(gm: torch.fx.GraphModule, parts, support) -> None:
    """Views that make a region's input strided (a transpose into heads, a slice, an expand) are taken
    back into the region, down to a contiguous tensor: inside they are index maps of the kernel's
    reads, outside the runtime copies the strided input to contiguous memory first (BERT's q, k and
    v split into heads: two copies a layer before the attention's region; a piece of a split counts,
    so the region reads GPT-2's packed qkv itself). A view also read outside is made again there
    (`_views_outside`)."""
    taken = {n for p in parts if any(is_compute(n) for n in p.nodes) for n in p.nodes}
    views_alone = {n: p for p in parts if not any(is_compute(n) for n in p.nodes) for n in p.nodes}  # dropped later
    modules = dict(gm.named_modules())
    for p in parts:
        if not any(is_compute(n) and op_name(n) != "aten.clone" for n in p.nodes):
            continue  # a copy alone (`x.t().contiguous()`) is PyTorch's: see kernel.py's zero-kernel regions
        for node in list(p.nodes):
            for arg in node.all_input_nodes:
                chain, cur = [], arg
                while cur not in taken and (_is_aliasing_view(cur) or _is_split_piece(cur)) \
                        and not _contiguous(cur) and support.is_node_supported(modules, cur):
                    chain.append(cur)
                    cur = cur.args[0]
                if chain and (_contiguous(cur) or cur in p.nodes):  # (in p: another read's chain took it)
                    for view in chain:
                        if view in views_alone:
                            views_alone.pop(view).remove_node(view)
                        p.add_node(view)
                        taken.add(view)


def _is_aliasing_view(node) -> bool:
    name = op_name(node)
    return node.op == "call_function" and name.startswith("aten.") and name[len("aten."):] in ALIASING_VIEWS


def _is_split_piece(node) -> bool:
    """A piece of a split (`getitem` of a split-like op), or that op: views of the split tensor."""
    if node.op != "call_function":
        return False
    if op_name(node) == "getitem":
        node = node.args[0]
        if not isinstance(node, torch.fx.Node) or node.op != "call_function":
            return False
    return op_name(node).removeprefix("aten.") in SPLITS


def _views_outside(gm: torch.fx.GraphModule, region) -> None:
    """Readers outside `region` of a view inside it read a copy of the view made outside (a chain of
    views is copied down to its first non-view, which the region then writes). A piece of a split
    counts as a view: GPT-2's q, a third of the fused qkv projection that only PyTorch's attention
    reads, was a region output, written by the kernel and then copied again into the strided layout
    it was traced with; made outside, it is a view of the region's input."""
    copies: dict = {}

    def outside(node):
        if node not in copies:
            with gm.graph.inserting_after(node):
                copies[node] = gm.graph.node_copy(
                    node, lambda a: outside(a) if a in region and (_is_aliasing_view(a) or _is_split_piece(a)) else a)
        return copies[node]

    for node in list(region):
        readers = [u for u in node.users if u not in region]
        if (_is_aliasing_view(node) or _is_split_piece(node)) and readers:
            for reader in readers:
                reader.replace_input_with(node, outside(node))


def replace_region(gm: torch.fx.GraphModule, name: str, fn) -> None:
    """Call `fn` (a compiled region) where the graph called submodule `name`: a plain function call,
    without nn.Module's call machinery (hooks, tracing checks), which costs microseconds per call."""
    for node in gm.graph.find_nodes(op="call_module", target=name):
        node.op, node.target = "call_function", fn
    gm.delete_submodule(name)
    gm.recompile()
