"""Memory traffic at the ATen level, as the handbook's `fx_fusion.py` counts it.

Eager PyTorch runs one kernel per ATen op, and each reads all its input tensors and writes its
output: that is the baseline fusion is measured against. Views (reshape, expand, ...) move no data
and launch nothing, so they are listed apart and not counted.
"""

from __future__ import annotations

import dataclasses
import re

import torch

from ..frontend import user_frames

__all__ = ["EagerOp", "eager_ops", "VIEW_OPS"]

VIEW_OPS = {"view", "_unsafe_view", "reshape", "expand", "unsqueeze", "squeeze", "permute", "t", "transpose",
            "slice", "select", "alias", "detach", "as_strided", "contiguous", "clone_view", "lift_fresh_copy",
            "_to_copy_view", "flatten", "unflatten"}


@dataclasses.dataclass
class EagerOp:
    name: str  # aten.pow.Tensor_Scalar
    bytes_read: int
    bytes_written: int
    location: str | None  # file:line of the model line that called it


def _nbytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 0


def _location(node) -> str | None:
    """The innermost frame of the op's recorded stack in the user's code, or None (a library module)."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', "".join(user_frames(node.meta.get("stack_trace") or "")))
    return f"{frames[-1][0]}:{frames[-1][1]}" if frames else None


def op_name(node) -> str:
    target = node.target
    name = getattr(target, "name", None)
    text = name() if callable(name) else str(target)
    return "aten." + text.split("::", 1)[-1] if text.startswith("aten::") else text


def eager_ops(program) -> tuple[list[EagerOp], list[str]]:
    """(the ops that run a kernel, the view ops) of an ExportedProgram, in graph order."""
    ops, views = [], []
    for node in program.graph.nodes:
        if node.op != "call_function" or node.target.__name__ == "getitem":
            continue
        name = op_name(node)
        base = name.split(".")[1] if name.startswith("aten.") else name
        if base in VIEW_OPS:
            views.append(name)
            continue
        read = sum(_nbytes(a.meta.get("val")) for a in dict.fromkeys(node.all_input_nodes))
        ops.append(EagerOp(name, read, _nbytes(node.meta.get("val")), _location(node)))
    return ops, views
