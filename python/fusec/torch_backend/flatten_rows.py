"""Regions over a symbolic batch x sequence, compiled as one dynamic row count.

fusec compiles static shapes and a dynamic dim 0 (the rows). Under `torch.compile(dynamic=True)` a
language model's activations are `[batch, seq, hidden]` with both leading dims symbolic, and every
op over them stayed in PyTorch (Llama: 281 of 283 ops). Most of those regions are row-wise: each of
their tensors either has the same symbolic leading dims (the prefix) followed by static ones, or is
static and broadcast along the trailing dims (a norm's weight), and no op works across the prefix
(a reduction over the last dim, an elementwise op, a cast, a gather whose indices carry the prefix).
Such a region computes the same on `[batch * seq, hidden]`: it is compiled once with dynamic rows,
and each call views its prefixed inputs as rows and its outputs back (`FlatRegion.call`).

The region's graph is rewritten for the flat tensors: a dim argument past the prefix moves down by
its length less one; a dim inside the prefix (a sum over the batch, a transpose of batch and
sequence) or an op whose arguments name a shape (a view to new sizes) makes the region stay in
PyTorch, with the reason. A region whose only symbolic dim is dim 0 needs none of this.
"""

from __future__ import annotations

import copy
import dataclasses

import torch

from ..diagnostics import FusecError
from .support import DIM_ARGS, op_name, prefix_of, tensors_of

__all__ = ["FlatRegion", "flatten_region"]

# Ops with no dim argument that work element by element (or gather along a static table's rows), so
# flat rows compute the same; anything not here and not in DIM_ARGS keeps the region in PyTorch.
_ROWWISE = {"abs", "add", "clamp", "clamp_min", "clamp_max", "div", "eq", "erf", "exp", "ge", "gelu", "gt", "le",
            "log", "lt", "maximum", "minimum", "mul", "ne", "neg", "pow", "reciprocal", "relu", "rsqrt", "sigmoid",
            "silu", "sqrt", "sub", "tanh", "true_divide", "where", "masked_fill", "bitwise_and", "bitwise_or", "bitwise_xor",
            "bitwise_not",
            "floor_divide", "remainder", "cos", "sin", "_to_copy", "clone", "convert_element_type", "embedding",
            "native_layer_norm", "layer_norm", "rms_norm", "_fused_rms_norm", "getitem",
            "full_like", "zeros_like", "ones_like"}


@dataclasses.dataclass
class FlatRegion:
    """A region rewritten for flat rows: `gm` takes and returns `[rows, *trailing]` where the
    original took `[*prefix, *trailing]`; `inputs`/`outputs` say which of them carry the prefix."""

    gm: torch.fx.GraphModule
    prefix: tuple
    inputs: list
    outputs: list

    def call(self, fn):
        """`fn` (the compiled flat region) called with the original tensors."""
        k, flat_in, flat_out = len(self.prefix), self.inputs, self.outputs

        def call(*args):
            lead = next(a.shape[:k] for a, f in zip(args, flat_in) if f)
            outs = fn(*(a.reshape(-1, *a.shape[k:]) if f else a for a, f in zip(args, flat_in)))
            single = not isinstance(outs, tuple)
            outs = tuple(o.view(*lead, *o.shape[1:]) if f else o
                         for o, f in zip((outs,) if single else outs, flat_out))
            return outs[0] if single else outs

        return call


def _check_values(node, prefix) -> None:
    """Each tensor the node reads or makes has the region's prefix, or is static and no wider than
    what follows the prefix in the node's prefixed tensors (so it broadcasts along those)."""
    vals = [t for v in [node.meta.get("val")] + [a.meta.get("val") for a in node.all_input_nodes]
            for t in tensors_of(v)]
    prefixed = [t for t in vals if prefix_of(t)]
    for t in prefixed:
        if prefix_of(t) != prefix:
            raise FusecError(f"{op_name(node)} has a tensor of shape {tuple(t.shape)}: its symbolic dims are not "
                             f"the region's leading ({', '.join(prefix)})")
    width = min((t.dim() - len(prefix) for t in prefixed), default=None)
    if op_name(node) == "aten.embedding":  # the table is static, its rows are gathered by the indices
        return
    for t in vals:
        if not prefix_of(t) and width is not None and t.dim() > width:
            raise FusecError(f"{op_name(node)} broadcasts a static {tuple(t.shape)} over the symbolic dims")


def _moved(dim, rank: int, k: int, node) -> int:
    d = dim + rank if dim < 0 else dim
    if d < k:
        raise FusecError(f"{op_name(node)} works along symbolic dim {d} (the batch or the sequence)")
    return d - k + 1


def _rewrite_dims(node, k: int) -> None:
    base = op_name(node).rpartition(".")[2]
    ins = tensors_of(node.args[0].meta.get("val")) if node.args and isinstance(node.args[0], torch.fx.Node) else []
    if base == "cat" and isinstance(node.args[0], (list, tuple)):
        ins = tensors_of(node.args[0][0].meta.get("val"))
    outs = tensors_of(node.meta.get("val"))
    rank = {"in": ins[0].dim() if ins else None, "out": outs[0].dim() if outs else None}
    if base == "permute":
        order = list(node.args[1])
        r = len(order)
        order = [o + r if o < 0 else o for o in order]
        if order[:k] != list(range(k)):
            raise FusecError(f"{op_name(node)} moves a symbolic dim")
        node.args = (node.args[0], [0] + [o - k + 1 for o in order[k:]], *node.args[2:])
        return
    for position, keyword, whose in DIM_ARGS.get(base, []):
        args, kwargs = list(node.args), dict(node.kwargs)
        value = args[position] if len(args) > position else kwargs.get(keyword)
        if value is None:
            raise FusecError(f"{op_name(node)} works over every dim (no `{keyword}`), the symbolic ones too")
        moved = [_moved(d, rank[whose], k, node) for d in value] if isinstance(value, (list, tuple)) \
            else _moved(value, rank[whose], k, node)
        if len(args) > position:
            args[position] = moved
        else:
            kwargs[keyword] = moved
        node.args, node.kwargs = tuple(args), kwargs


def flatten_region(gm: torch.fx.GraphModule) -> FlatRegion | None:
    """The region rewritten for flat rows, or None when it has no symbolic dim past dim 0 (it needs no
    rewrite); a FusecError says why a region with one cannot be flattened."""
    prefixes = {p for n in gm.graph.nodes for t in tensors_of(n.meta.get("val")) if (p := prefix_of(t))}
    if not prefixes or max(map(len, prefixes)) < 2:
        return None
    prefix = max(prefixes, key=len)
    gm = copy.deepcopy(gm)
    k = len(prefix)
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        base = op_name(node).rpartition(".")[2]
        _check_values(node, prefix)
        if not any(prefix_of(t) for t in tensors_of(node.meta.get("val"))) and \
                not any(prefix_of(a.meta.get("val")) for a in node.all_input_nodes):
            continue  # static work (on a weight): unchanged
        if base in DIM_ARGS or base == "permute":
            _rewrite_dims(node, k)
        elif base not in _ROWWISE:
            raise FusecError(f"{op_name(node)} over symbolic dims ({', '.join(prefix)}) cannot be flattened "
                             "into rows")
    gm.recompile()
    placeholders = gm.graph.find_nodes(op="placeholder")
    outputs = gm.graph.output_node().args[0]
    outputs = list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    flags = lambda nodes: [isinstance(n, torch.fx.Node) and bool(prefix_of(n.meta.get("val"))) for n in nodes]
    return FlatRegion(gm, prefix, flags(placeholders), flags(outputs))
