"""--fusec-fold-splat-constants: read a constant tensor of one value as that value.

`torch.full_like(x, -inf)`, `torch.ones(8, 64)` and `zeros_like` arrive from torch-mlir as
`arith.constant dense<v> : tensor<8x64xf32>` read by a linalg.generic. Left so, bufferization makes
the constant a global buffer the host would have to provide (`memref.get_global`), which the launch
manifest cannot express: `torch.where(mask, torch.full_like(x, float("-inf")), x)`, an attention
mask as models write it, was refused. Every element is the same value, so the generic reads the
scalar instead: the operand, its indexing map and its block argument go, and the body uses an
`arith.constant` of the value. A constant that is the only operand giving a loop its extent (the sum
of a tensor of ones) is left alone.

Before:
    %ninf = arith.constant dense<0xFF800000> : tensor<8x64xf32>
    %r = linalg.generic {indexing_maps = [#id, #id, #id, #id]} ins(%mask, %ninf, %x : ...) outs(%o) {
    ^bb0(%m: i1, %a: f32, %b: f32, %out: f32):
      %s = arith.select %m, %a, %b : f32
After:
    %r = linalg.generic {indexing_maps = [#id, #id, #id]} ins(%mask, %x : ...) outs(%o) {
    ^bb0(%m: i1, %b: f32, %out: f32):
      %a = arith.constant 0xFF800000 : f32
      %s = arith.select %m, %a, %b : f32
"""

from __future__ import annotations

from fusec.codegen.kernel import attributes
from fusec.mlir import ir
from torch_mlir.dialects import arith

from .classify_ops import indexing_maps

FLAG = "fusec-fold-splat-constants"
SUMMARY = "Replace splat constant tensors read by linalg.generic ops with their scalar value"


def _splat_value(value):
    """The scalar attribute of a splat `arith.constant` tensor, else None."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    op = getattr(owner, "operation", None)
    if op is None or op.name != "arith.constant":
        return None
    attr = op.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attr).is_splat:
        return None
    return ir.DenseElementsAttr(attr).get_splat_value()


def _loop_dims(maps) -> set:
    return {ir.AffineDimExpr(e).position for m in maps for e in m.results
            if isinstance(e.maybe_downcast(), ir.AffineDimExpr)}


def _fold(op) -> None:
    view = op.opview
    n_inputs = len(view.inputs)
    maps = indexing_maps(op)
    splats = {i: _splat_value(v) for i, v in enumerate(view.inputs)}
    splats = {i: s for i, s in splats.items() if s is not None}
    kept = [i for i in range(len(op.operands)) if i not in splats]
    if not splats or _loop_dims([maps[i] for i in kept]) != set(range(maps[0].n_dims)):
        return
    source = op.regions[0].blocks[0]
    attrs = attributes(op)
    attrs["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(maps[i]) for i in kept])
    attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([n_inputs - len(splats), len(op.operands) - n_inputs])
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in op.results],
                                  operands=[op.operands[i] for i in kept], attributes=attrs, regions=1)
        target = new.regions[0].blocks.append(*[source.arguments[i].type for i in kept])
        with ir.InsertionPoint(target):
            for i, scalar in splats.items():
                source.arguments[i].replace_all_uses_with(arith.ConstantOp(scalar.type, scalar).result)
    for j, i in enumerate(kept):
        source.arguments[i].replace_all_uses_with(target.arguments[j])
    for inner in list(source.operations):
        target.append(inner)
    for old, result in zip(op.results, new.results):
        old.replace_all_uses_with(result)
    op.erase()


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        _fold(op)
