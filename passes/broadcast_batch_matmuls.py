"""--fusec-broadcast-batch-matmuls: a batched matmul whose B is one matrix broadcast over the batch
becomes one matmul over the batch's rows.

torch-mlir lowers nn.Linear on a 3-d input that is not contiguous (an attention block's output
projection reads `a.transpose(1, 2).reshape(b, t, d)`) to `matmul(x, w.T)` of [b, t, k] by [k, n]:
the weight is broadcast to [b, k, n], a copy of it for every batch, and a `linalg.batch_matmul`
reads the copies. The same product is `x` viewed as [b * t, k] times the one [k, n] matrix: no
copy of the weight, one matmul the library (or the tensor cores) computes at a better shape. After
this pass `--fusec-contraction-operands` reads the weight's transpose and casts through, as for any
matmul.

Static shapes only (the reshapes' sizes are constants); B's broadcast is a `linalg.generic` whose one
input is read at (d1, d2) of (d0, d1, d2) and yielded as it is, or a `linalg.broadcast` along dim 0.

Before:
    %wb = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d1, d2), (d0, d1, d2) -> (d0, d1, d2)]}
          ins(%wt : tensor<64x96xf32>) outs(%e : tensor<2x64x96xf32>) { linalg.yield %in }
    %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x96xf32>) -> tensor<2x16x96xf32>
    %y = linalg.batch_matmul ins(%x, %wb : tensor<2x16x64xf32>, tensor<2x64x96xf32>) outs(%acc : ...)
After:
    %x2 = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
    %acc2 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<32x96xf32>) -> tensor<32x96xf32>
    %y2 = linalg.matmul ins(%x2, %wt : tensor<32x64xf32>, tensor<64x96xf32>) outs(%acc2 : tensor<32x96xf32>)
    %y = tensor.expand_shape %y2 [[0, 1], [2]] output_shape [2, 16, 96] : tensor<32x96xf32> into tensor<2x16x96xf32>
"""

from __future__ import annotations

from fusec.codegen.matmul_layouts import transposes
from fusec.codegen.members import is_identity
from fusec.mlir import ir
from torch_mlir.dialects import linalg, tensor

from .reshape_pointwise_loops import reassociation

FLAG = "fusec-broadcast-batch-matmuls"
SUMMARY = "Rewrite a batch_matmul of one matrix broadcast over the batch as a matmul over the batch's rows"


def run(module_op, pass_) -> None:
    found = []
    module_op.walk(lambda op: (found.append(op) if op.name == "linalg.batch_matmul" else None) or ir.WalkResult.ADVANCE)
    for op in found:
        _rewrite(op)


def _broadcast_source(value):
    """The [k, n] matrix a [b, k, n] tensor broadcasts along dim 0, else None."""
    op = None if isinstance(value.owner, ir.Block) else value.owner
    if op is None:
        return None
    if op.name == "linalg.broadcast":
        dims = list(ir.DenseI64ArrayAttr(op.attributes["dimensions"]))
        return op.operands[0] if dims == [0] else None
    if op.name != "linalg.generic" or len(op.opview.inputs) != 1 or len(op.results) != 1:
        return None
    in_map, out_map = (ir.AffineMapAttr(m).value for m in op.opview.indexing_maps)
    if str(in_map) != "(d0, d1, d2) -> (d1, d2)" or not is_identity(out_map):
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 1 or body[0].operands[0] != op.regions[0].blocks[0].arguments[0]:
        return None
    return op.opview.inputs[0]


def _rewrite(op) -> None:
    view = op.opview
    a, b = view.inputs
    out = view.outputs[0]
    source = _broadcast_source(b)
    types = [ir.RankedTensorType(v.type) for v in (a, b, out)]
    if source is None or transposes(op) != (False, False) or not all(t.has_static_shape for t in types):
        return
    (batch, m, k), (_, _, n) = types[0].shape, types[2].shape
    with ir.InsertionPoint(op), op.location:
        rows = reassociation([[0, 1], [2]])  # [batch, rows, cols] <-> [batch * rows, cols]
        flat_a = tensor.CollapseShapeOp(ir.RankedTensorType.get([batch * m, k], types[0].element_type), a,
                                        rows).result
        flat_type = ir.RankedTensorType.get([batch * m, n], types[2].element_type)
        init = None if isinstance(out.owner, ir.Block) else out.owner
        if init is not None and init.name == "linalg.fill":  # the fill of the accumulator, at the new shape
            empty = tensor.EmptyOp([batch * m, n], types[2].element_type).result
            acc = linalg.fill(init.operands[0], outs=[empty])
        else:
            acc = tensor.CollapseShapeOp(flat_type, out, rows).result
        maps = [ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(i), ir.AffineDimExpr.get(j)])
                for i, j in ((0, 2), (2, 1), (0, 1))]  # linalg.matmul's own, written out
        product = linalg.matmul(flat_a, source, outs=[acc], indexing_maps=maps)
        result = tensor.ExpandShapeOp(types[2], product, rows, [], [batch, m, n]).result
    op.results[0].replace_all_uses_with(result)
    broadcast = b.owner
    op.erase()
    if not list(broadcast.results[0].uses):
        broadcast.erase()
