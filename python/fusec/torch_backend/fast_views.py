"""The views PyTorch runs between regions, made at the cost of an alias.

After partitioning, the graph's code calls each view left to PyTorch (the reshapes around every
matmul, GPT-2's split into heads and its permutes) as an ATen op: dispatch costs ~3.5 µs of host
time per view, and a 4-layer GPT-2 forward makes ~60 of them. A view's result is known from the
trace: its sizes, its strides, and its offset from its base's (`meta["val"]`, static shapes).
`_reinterpret_tensor(base, sizes, strides, offset)`, the alias Inductor's generated code makes its
views with, costs ~1 µs. So each such view becomes a small function of its base (`fast_view`).

When is the trace right? A view's result depends only on its base's sizes and strides (and the
view's constant arguments); sizes are static here (dynamo guards them), and strides are those the
base had at tracing unless an op chose another layout at run time (a meta function that disagrees
with its kernel). So each fast view first compares its base's strides with the traced ones (the
dims of size 1 excepted: their strides address nothing) and, where they differ, calls the ATen op.

Splits (`split`, `split_with_sizes`, `chunk`, `unbind`) are read through `getitem`: each getitem
becomes a fast view of the split's input, and the split, then unread, goes. A chain of views (GPT-2's
`attn.view(b, t, h, d).transpose(1, 2)`, or the four views between its attention and the next
matmul) becomes one alias of the chain's first base.

Left as they are:
- a view with a symbolic size, stride or offset, or an argument computed in the graph;
- a view that is one of the graph's outputs: aot_autograd regenerates an output that aliases an
  input or an intermediate from the output it is given, and keeps the ATen view's `_base` for that;
- `reshape` (a copy where its input is not viewable) and `view` to another dtype.
"""

from __future__ import annotations

import operator

import torch
from torch._C._dynamo.guards import _reinterpret_tensor

__all__ = ["FAST_VIEW_OPS", "SPLIT_OPS", "fast_view", "make_views_fast"]

aten = torch.ops.aten
FAST_VIEW_OPS = frozenset([
    aten.view.default, aten._unsafe_view.default, aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims,
    aten.squeeze.default, aten.expand.default, aten.permute.default, aten.transpose.int, aten.t.default,
    aten.slice.Tensor, aten.select.int, aten.narrow.default, aten.alias.default,
])
SPLIT_OPS = frozenset([aten.split.Tensor, aten.split_with_sizes.default, aten.chunk.default, aten.unbind.int])


def _static(t) -> bool:
    return isinstance(t, torch.Tensor) and all(
        isinstance(d, int) for d in (*t.shape, *t.stride(), t.storage_offset()))


def fast_view(base_val: torch.Tensor, out_val: torch.Tensor, fallback):
    """The function `view(base)` that returns `out_val`'s layout over `base` (traced as `base_val`),
    or `fallback(base)` where the base's strides are not the traced ones."""
    size, stride = tuple(out_val.shape), tuple(out_val.stride())
    offset = out_val.storage_offset() - base_val.storage_offset()
    dims = [d for d, n in enumerate(base_val.shape) if n != 1]
    traced = tuple(base_val.stride()[d] for d in dims)
    if base_val.numel() == 0 or not dims:  # no stride addresses anything
        def view(base):
            return _reinterpret_tensor(base, size, stride, offset)
    elif len(dims) == base_val.dim():
        def view(base):
            if base.stride() == traced:
                return _reinterpret_tensor(base, size, stride, offset)
            return fallback(base)
    else:
        pick = operator.itemgetter(*dims) if len(dims) > 1 else (lambda s, d=dims[0]: (s[d],))

        def view(base):
            if pick(base.stride()) == traced:
                return _reinterpret_tensor(base, size, stride, offset)
            return fallback(base)
    return view


def _constant_args(node) -> bool:
    leaves = []
    torch.fx.node.map_aggregate((node.args[1:], node.kwargs), leaves.append)
    return not any(isinstance(a, torch.fx.Node) for a in leaves)


def _call(op, args, kwargs, item=None, before=None):
    """The ATen op(s) a fast view stands for, as a function of the base it is given (`before`: the
    fallback of the view it is taken of, when views are chained)."""
    if before is None:
        before = _identity
    if item is None:
        return lambda base: op(before(base), *args, **kwargs)
    return lambda base: op(before(base), *args, **kwargs)[item]


def _identity(x):
    return x


def make_views_fast(gm: torch.fx.GraphModule) -> int:
    """Rewrite `gm`'s top-level views (and the pieces of its splits) as fast views, in place;
    return how many ATen views are gone. A view of a view is made from the first one's base in one
    call (`q.view(b, t, h, d).transpose(1, 2)`: one alias), and the intermediate view goes where
    nothing else reads it."""
    outputs = {a for n in gm.graph.find_nodes(op="output") for a in n.all_input_nodes}
    chains = {}  # a fast view -> (the base it is made from, its fallback from that base)
    rewritten = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node in outputs or not node.args or not _constant_args(node):
            continue
        base = node.args[0]
        if not isinstance(base, torch.fx.Node) or not _static(base.meta.get("val")):
            continue
        root, before = chains.get(base, (base, None))
        if node.target in FAST_VIEW_OPS and _static(node.meta.get("val")):
            fallback = _call(node.target, node.args[1:], node.kwargs, before=before)
            chains[_replace(gm, node, root, fallback)] = (root, fallback)
            rewritten += 1
        elif node.target in SPLIT_OPS:
            pieces = list(node.users)
            if not all(p.target is operator.getitem and p not in outputs and _static(p.meta.get("val"))
                       for p in pieces):
                continue
            for piece in pieces:
                fallback = _call(node.target, node.args[1:], node.kwargs, piece.args[1], before=before)
                chains[_replace(gm, piece, root, fallback)] = (root, fallback)
            gm.graph.erase_node(node)
            rewritten += 1
    for fast in reversed(list(chains)):  # the links of chains nothing else reads
        if not fast.users:
            gm.graph.erase_node(fast)
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return rewritten


def _replace(gm, node, root, fallback) -> torch.fx.Node:
    view = fast_view(root.meta["val"], node.meta["val"], fallback)
    view.__name__ = f"fast_{node.name}"
    with gm.graph.inserting_before(node):
        fast = gm.graph.call_function(view, (root,))
    fast.meta = dict(node.meta)
    node.replace_all_uses_with(fast)
    gm.graph.erase_node(node)
    return fast
