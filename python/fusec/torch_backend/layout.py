"""Region outputs with the strides the graph was traced with.

fusec's runtime returns every output as a fresh contiguous tensor, while the ATen graph after a
region was traced with eager's strides: `exp(x.t())` is, in eager, a tensor of x.t()'s layout
(strides (1, 3) for a 3x3 x), and a later `as_strided`, or a `view` that is only valid for that
layout (`q.transpose(1, 2).view(b, t, h * d)` after rotary embeddings), reads it as such. Given a
contiguous tensor instead, a view raises "view size is not compatible with input tensor's size and
stride" and an `as_strided` silently reads the wrong elements.

So each output keeps the layout of its FX node's `meta["val"]`:

- contiguous (most outputs): returned as the runtime made it;
- a permutation of a contiguous layout (a transposed or permuted result, the common case): the
  region is compiled to return `out.permute(order)` (`written_in_order`), so its kernel writes the
  output in that memory order (a transpose is an index map of the kernel's store: no kernel more),
  and the call permutes the result back, a view (`OutputLayout.written`). Llama's q after rotary
  embeddings is such an output (eager's ops keep the layout of q's transposed view); it was written
  contiguous, then copied into the traced layout: a second pass over it. Where that compile fails,
  or the region's rows are flattened (flatten_rows.py), the output is copied once into a tensor of
  that layout (`torch.empty` of the permuted shape, permuted back), which works for any row count;
- any other layout of distinct elements (padded strides, static shapes only): copied once into
  `torch.empty_strided` of the traced strides;
- overlapping strides (an output that is an `expand`), or a non-dense layout with symbolic sizes:
  the region stays in PyTorch (`LayoutError`).

Sizes of 1 and 0 make strides irrelevant; a symbolic size (dynamic rows) is read at its hint.

Dtypes too: a region is traced on the CPU (fusec.compile of CPU examples), whose eager kernels do not
always give an output the dtype the graph was traced with on its device, nor does PyTorch's eager
always match its own fake tensors. CUDA's native_layer_norm of bf16 keeps its mean and rstd in
float32, which the backward's kernel requires ("expected scalar type Float but found BFloat16": every
bf16 training step of a model with LayerNorm on the GPU); CPU eager's batch norm of bf16 returns its
saved mean as bf16 where the fake tensor says float32. So an input whose dtype is not the one
compiled for is cast to it, and an output is cast to its traced dtype (`OutputLayout.dtype`).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import torch
from torch._prims_common import make_contiguous_strides_for

try:  # torch 2.13 and later
    from torch.fx.experimental.symbolic_shapes import optimization_hint as _size_hint
except ImportError:  # torch 2.11-2.12 (the GPU machine's): the same as size_hint (hint_int warns there)
    from torch.fx.experimental.symbolic_shapes import size_hint as _size_hint

from ..diagnostics import FusecError

__all__ = ["LayoutError", "OutputLayout", "layout_of", "output_layouts", "restrided", "written_in_order"]


class LayoutError(FusecError):
    """A region output whose traced layout fusec cannot give back."""


@dataclasses.dataclass(frozen=True)
class OutputLayout:
    """How to give one output its traced layout: `order` (the dims from outermost to innermost in
    memory) when the layout is a permuted contiguous one, `strides` when it must be copied, neither
    when the output is contiguous."""

    order: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    dtype: torch.dtype | None = None  # the traced dtype (None: whatever fusec's output has)
    written: bool = False  # the region returns it permuted to `order` (written_in_order): view it back

    @property
    def inverse(self) -> tuple[int, ...]:
        return tuple(sorted(range(len(self.order)), key=self.order.__getitem__))


def _hint(d) -> int:
    return d if isinstance(d, int) else _size_hint(d)


def _contiguous_strides(shape) -> list[int]:
    return list(make_contiguous_strides_for(shape))


def layout_of(name: str, val: torch.Tensor) -> OutputLayout:
    """The OutputLayout of a traced tensor (`name` for the error)."""
    shape, strides = [_hint(d) for d in val.shape], [_hint(s) for s in val.stride()]
    if 0 in shape:
        return OutputLayout()
    free = [d for d, n in enumerate(shape) if n != 1]  # size-1 dims keep their place: any stride fits
    order = list(range(len(shape)))
    for slot, d in zip(free, sorted(free, key=lambda d: -strides[d])):
        order[slot] = d
    dense = _contiguous_strides([shape[d] for d in order])
    if all(strides[d] == s for d, s in zip(order, dense) if shape[d] != 1):
        return OutputLayout() if order == sorted(order) else OutputLayout(order=tuple(order))
    if len({strides[d] for d in free}) < len(free) or 0 in (strides[d] for d in free) or \
            math.prod(shape) > 1 + sum((n - 1) * abs(s) for n, s in zip(shape, strides)):
        raise LayoutError(f"output {name} has overlapping strides {tuple(strides)} (an expand): fusec's "
                          "outputs are distinct elements")
    if not all(isinstance(d, int) for d in (*val.shape, *val.stride())):
        raise LayoutError(f"output {name} has strides {tuple(val.stride())}, not a permutation of a contiguous "
                          "layout, and a symbolic size")
    return OutputLayout(strides=tuple(strides))


def _outputs(gm: torch.fx.GraphModule) -> tuple[list, bool]:
    """(the region's output nodes, whether it returns a tuple)."""
    out = gm.graph.output_node().args[0]
    return (list(out), True) if isinstance(out, (tuple, list)) else ([out], False)


def output_layouts(gm: torch.fx.GraphModule) -> list[OutputLayout]:
    """The layout each output of the region was traced with (a node without a traced tensor, or a
    non-tensor output, counts as contiguous)."""
    layouts = []
    for node in _outputs(gm)[0]:
        val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        layouts.append(dataclasses.replace(layout_of(node.name, val), dtype=val.dtype)
                       if isinstance(val, torch.Tensor) else OutputLayout())
    return layouts


def written_in_order(gm: torch.fx.GraphModule, layouts: list[OutputLayout]):
    """(a copy of region `gm` that returns each output of a permuted layout as `permute(out, order)`,
    the layouts with those marked `written`), or (gm, layouts) when no output is permuted. An output
    whose dim 0 is symbolic keeps its place unless the permutation keeps dim 0 first."""
    outputs, as_tuple = _outputs(gm)

    def eligible(node, layout):
        if not layout.order or not isinstance(node, torch.fx.Node) or node.op == "placeholder":
            return False
        val = node.meta.get("val")
        return isinstance(val, torch.Tensor) and (isinstance(val.shape[0], int) or layout.order[0] == 0)

    chosen = [i for i, (node, layout) in enumerate(zip(outputs, layouts)) if eligible(node, layout)]
    if not chosen:
        return gm, layouts
    gm = copy.deepcopy(gm)
    outputs = _outputs(gm)[0]
    output_node = gm.graph.output_node()
    for i in chosen:
        with gm.graph.inserting_before(output_node):
            permuted = gm.graph.call_function(torch.ops.aten.permute.default, (outputs[i], list(layouts[i].order)))
        permuted.meta["val"] = outputs[i].meta["val"].permute(layouts[i].order)
        outputs[i] = permuted
    output_node.args = (tuple(outputs) if as_tuple else outputs[0],)
    gm.recompile()
    layouts = [dataclasses.replace(layout, written=True) if i in chosen else layout for i, layout in enumerate(layouts)]
    return gm, layouts


def restrided(fn, gm: torch.fx.GraphModule, layouts: list[OutputLayout], input_dtypes=None):
    """`fn` (the compiled region) taking its inputs in `input_dtypes` (the compiled ones: others are
    cast) and returning its outputs in the traced layouts and dtypes, and always a tuple when the
    region returns one (the runtime gives a single output bare)."""
    as_tuple = _outputs(gm)[1]
    wanted = list(input_dtypes or [])

    def fix(t, layout):
        if layout.dtype is not None and t.dtype != layout.dtype:
            t = t.to(layout.dtype)
        if layout.written:
            return t.permute(layout.inverse)
        if layout.order:
            shape = [t.shape[d] for d in layout.order]
            return torch.empty(shape, dtype=t.dtype, device=t.device).permute(layout.inverse).copy_(t)
        if layout.strides:
            return torch.empty_strided(t.shape, layout.strides, dtype=t.dtype, device=t.device).copy_(t)
        return t

    fixes = None  # the outputs that need `fix`, as (index, layout): learned at the first call

    def call(*args):
        nonlocal fixes
        if any(isinstance(a, torch.Tensor) and a.dtype != d for a, d in zip(args, wanted)):
            args = tuple(a.to(d) if isinstance(a, torch.Tensor) and a.dtype != d else a for a, d in zip(args, wanted))
        outs = fn(*args)
        if not isinstance(outs, tuple):
            outs = (outs,)
        if fixes is None:  # the runtime's output dtypes and layouts are the same at every call
            fixes = [(i, layout) for i, (t, layout) in enumerate(zip(outs, layouts))
                     if layout.written or layout.order or layout.strides
                     or (layout.dtype is not None and t.dtype != layout.dtype)]
        if fixes:
            outs = list(outs)
            for i, layout in fixes:
                outs[i] = fix(outs[i], layout)
            outs = tuple(outs)
        return outs if as_tuple else outs[0]

    return call
