"""The ATen ops PyTorch runs between regions, called through PyTorch's generated Python bindings.

The partitioned graph's code calls each op it leaves to PyTorch as an `OpOverload`
(`torch.ops.aten.addmm.default(...)`): a Python `__call__` into a boxed call that parses the
arguments against the op's schema. The same op through its generated binding (`torch.addmm`, what
Inductor's wrapper code calls for its matmuls) parses them in C++: on the CPU, with 1x1 tensors,
addmm took ~10 µs the first way and ~4-7 the second, add ~6.5 against ~3 (2026-12-06).

Only ops whose binding has the schema's argument names and resolves, for the graph's arguments, to
the same overload are swapped (`BINDINGS`): the matmuls, `cat`, and the fused attention ops; a graph
that calls anything else keeps its OpOverload.
"""

from __future__ import annotations

import torch

__all__ = ["BINDINGS", "make_calls_fast"]

aten = torch.ops.aten
_NAMES = ["mm", "addmm", "bmm", "baddbmm", "cat", "_scaled_dot_product_flash_attention",
          "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
          "_scaled_dot_product_flash_attention_for_cpu"]
BINDINGS = {getattr(aten, name).default: getattr(torch._C._VariableFunctions, name)
            for name in _NAMES if hasattr(aten, name) and hasattr(torch._C._VariableFunctions, name)}


def make_calls_fast(gm: torch.fx.GraphModule) -> int:
    """Call `gm`'s top-level ops of `BINDINGS` through their bindings, in place; return how many."""
    swapped = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in BINDINGS:
            node.target = BINDINGS[node.target]
            swapped += 1
    if swapped:
        gm.recompile()
    return swapped
