"""--fusec-materialize-returned-constants: write a constant the function returns with a kernel.

A graph that returns a constant tensor (`torch.zeros(4, 8)` beside a computed output, T5's decoder
position bias when the layer has none: `torch.zeros(...)`; Mixtral's expert mask before it is summed)
arrives as `return %cst` of an `arith.constant dense<...>`. Bufferized, the constant is a global
the host copies into the output (`memref.get_global`), which the launch manifest cannot express:
the region was refused ("host op 'memref.get_global'"). The returned value is now a linalg.generic
that writes the constant into a new tensor, an elementwise op like any other: a constant of one value
is copied, and that copy is then read as its scalar (--fusec-fold-splat-constants), so the kernel
writes it; a constant of several values is read element by element in the body (`tensor.extract` at
the loop's indices, as a gather reads its table), inside the kernel (--fusec-sink-constant-globals).
(Not an identity copy: canonicalization would fold it back into the constant.)

Before:
    %cst = arith.constant dense<0.0> : tensor<4x8xf32>
    return %1, %cst : tensor<4x8xf32>, tensor<4x8xf32>
After:
    %cst = arith.constant dense<0.0> : tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
           ins(%cst : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<4x8xf32>
    return %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
(a constant of several values: `outs(%e)` only, the body `tensor.extract %cst[linalg.index 0, ...]`)
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import linalg, tensor

FLAG = "fusec-materialize-returned-constants"
SUMMARY = "Return a constant tensor through an elementwise copy (a kernel), not a host global"


def _splat(value) -> bool:
    attr = value.owner.attributes["value"]
    return isinstance(attr, ir.DenseElementsAttr) and ir.DenseElementsAttr(attr).is_splat


def _copy(value) -> ir.Value:
    """A linalg.generic, just before the return, that writes `value` (a static constant tensor) into a
    new one: an identity copy for a splat, else an element read at the loop's indices."""
    type_ = ir.RankedTensorType(value.type)
    rank = type_.rank
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    splat = _splat(value)
    empty = tensor.EmptyOp(type_.shape, type_.element_type)
    op = ir.Operation.create(
        "linalg.generic", results=[type_], operands=[value, empty.result] if splat else [empty.result],
        attributes={"indexing_maps": ir.ArrayAttr.get([identity] * (2 if splat else 1)),
                    "iterator_types": ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1] if splat else [0, 1])},
        regions=1)
    block = op.regions[0].blocks.append(*[type_.element_type] * (2 if splat else 1))
    with ir.InsertionPoint(block):
        if splat:
            linalg.YieldOp([block.arguments[0]])
        else:
            indices = [linalg.IndexOp(i).result for i in range(rank)]
            linalg.YieldOp([tensor.ExtractOp(value, indices).result])
    return op.result


def _returned_constants(func):
    for block in func.regions[0].blocks:
        ret = block.operations[len(block.operations) - 1]
        if ret.name != "func.return":
            continue
        for i, operand in enumerate(ret.operands):
            owner = operand.owner
            if isinstance(owner, ir.OpView) and owner.name == "arith.constant" \
                    and isinstance(operand.type, ir.RankedTensorType) \
                    and ir.RankedTensorType(operand.type).has_static_shape:
                yield ret, i


def run(module_op, pass_) -> None:
    funcs = []
    module_op.walk(lambda op: (funcs.append(op) if op.name == "func.func" else None) or ir.WalkResult.ADVANCE)
    for func in funcs:
        if not func.regions[0].blocks:
            continue
        for ret, i in list(_returned_constants(func)):
            with ir.InsertionPoint(ret), ret.location:
                ret.operands[i] = _copy(ret.operands[i])
