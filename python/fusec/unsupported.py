"""Naming the op fusec cannot compile: its ATen op and its line in the user's model.

After the linalg stage every op must be in a dialect fusec lowers, and no tensor may have a dynamic
dim past dim 0 (`check_supported`, a hook of that stage); torch-mlir's own refusals are renamed
after the ATen op(s) of the failing line
(`name_unlowered_op`). Both find the ATen ops by location, recorded at the torch stage
(`aten_ops_by_location`).
"""

from __future__ import annotations

import re

from .diagnostics import FusecError, aten_name_of_location, location_to_text
from .mlir import ir
from fusec.passes.bound_gather_indices import is_index_bound_assert

__all__ = ["aten_ops_by_location", "unsupported_ops", "inner_dynamic_ops", "check_supported", "name_unlowered_op",
           "model_line"]

# Dialects the linalg stage may hold; anything else is an op fusec has no lowering for.
_LINALG_DIALECTS = {"builtin", "func", "linalg", "tensor", "arith", "math", "affine", "bufferization"}


def aten_ops_by_location(module, source_name) -> dict:
    """{"file:line:col": [ATen op names]} of a torch-stage module."""
    found = {}

    def visit(op):
        if op.name.startswith("torch.aten."):
            where = location_to_text(op.location, source_name)
            if where:
                found.setdefault(where, []).append(op.name[len("torch.aten."):])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def unsupported_ops(module) -> list:
    """The outermost ops outside the linalg stage's dialects (not the ops nested in their regions)."""
    def supported(op) -> bool:
        # A gather's index checks become clamps (--fusec-bound-gather-indices).
        return op.name.split(".", 1)[0] in _LINALG_DIALECTS or is_index_bound_assert(op)

    bad = []
    module.operation.walk(lambda op: (bad.append(op) if not supported(op) and supported(op.parent) else None)
                          or ir.WalkResult.ADVANCE)
    return bad


def inner_dynamic_ops(module) -> list:
    """linalg ops with a tensor result whose dynamic dim is not the outermost (a transpose of the
    rows): fusec's kernels take a dynamic row count as dim 0 only. (torch-mlir's slices of a roll
    have dynamic sizes even in a static model, until they fold: only linalg ops compute.)"""
    bad = []

    def visit(op):
        for r in (op.results if op.name.startswith("linalg.") else []):
            if isinstance(r.type, ir.RankedTensorType) and \
                    any(r.type.is_dynamic_dim(i) for i in range(1, r.type.rank)):
                bad.append(op)
                return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return bad


def check_supported(comp) -> None:
    """After the linalg stage: name the first op fusec cannot compile, its source line and the
    ATen op(s) it came from (from the torch stage, matched by location)."""
    bad = unsupported_ops(comp.module)
    if bad:
        source, where = _origin(comp, bad[0])
        raise FusecError(f"fusec cannot compile {source}: it lowers to '{bad[0].name}', which fusec has no "
                         "GPU lowering for", location=where)
    inner = inner_dynamic_ops(comp.module)
    if inner:
        source, where = _origin(comp, inner[0])
        shape = next(r.type for r in inner[0].results if isinstance(r.type, ir.RankedTensorType))
        raise FusecError(f"fusec cannot compile {source} here: its result {shape} has a dynamic dim past "
                         "dim 0, and fusec's kernels take a dynamic row count as dim 0 only", location=where)


def _origin(comp, op) -> tuple:
    """("aten.<op>", "file:line:col") of an op of the linalg stage: the ATen op(s) it came from
    (from the torch stage, matched by location)."""
    where = location_to_text(op.location, comp.source_name)
    named = aten_name_of_location(op.location)  # the one ATen op it was lowered from (op_locations)
    origin = [named] if named else list(dict.fromkeys(comp.aten_ops_at.get(where, [])))
    related = [name for name in origin if name.split(".")[0] in op.name]  # tm_tensor.sort <- aten.sort
    origin = related or origin
    source = f"aten.{', aten.'.join(origin)}" if origin else "a torch op"
    return source, where or model_line(comp.source_name)


def model_line(source_name: str | None) -> str | None:
    """Where MODEL.py binds `model`: the place of an op no line of MODEL.py ran (one of a library
    module's own ops, `model = nn.Embedding(...)`), else None."""
    from .frontend.model_file import defined_at  # noqa: PLC0415 (torch only for a model)
    return defined_at(source_name, "model") if source_name else None


_NOT_LEGALIZED = re.compile(r"stage 'linalg' failed: (?P<loc>\S+:\d+:\d+): error: failed to legalize operation "
                            r"'(?P<op>[\w.]+)'")


def name_unlowered_op(comp, err: FusecError) -> FusecError:
    """torch-mlir reports an op it cannot lower by whatever piece failed first, often a constant
    operand (`torch.constant.int`). Name the ATen op(s) of that model line instead."""
    match = _NOT_LEGALIZED.match(err.message)
    origin = list(dict.fromkeys(comp.aten_ops_at.get(match["loc"], []))) if match else []
    if not origin:
        return err
    ops = f"aten.{origin[0]}" if len(origin) == 1 else "one of aten." + ", aten.".join(origin)
    return FusecError(f"fusec cannot compile this line: {ops} has no linalg lowering in torch-mlir "
                      f"(it stopped at '{match['op']}')", location=match["loc"], notes=err.notes)
