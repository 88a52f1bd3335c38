"""--fusec-transpose-tensor-core-operands: a 16-bit matmul whose B is read along N (`x @ w`, w [K, N],
as GPT-2's Conv1D and a plain `@` keep it) reads a copy of B transposed to [N, K] instead, so that
the tensor cores' kernel (the `wgmma` schedule, which reads both operands along K) builds it.

Without it such a matmul goes to the generic loop lowering: one thread an element of C, each
reading a row of A and a column of B from global memory, far slower than the copy (a memory-bound
transpose of B, K x N elements read and written once) and the tensor cores' kernel after it.
The copy is a `linalg.generic` of its own (a kernel: a contraction ends a group, so it does not fuse
into the matmul); its transposed read is an index map, as any transpose in a fused kernel.

Run only where the tensor cores' kernel will take the matmul (the cuda target, sm_90a, the `wgmma`
knob on): a matmul C[M, N] (f32) of bf16 or fp16 A[M, K] and B[K, N] with static shapes, K a
multiple of 8 and N even (`codegen.wgmma_plan.tensor_core_problem`'s other conditions).

Before (after --fusec-contraction-operands):
    %y = linalg.matmul ins(%x, %w : tensor<512x768xbf16>, tensor<768x3072xbf16>) outs(%acc : tensor<512x3072xf32>)
After:
    %wt = linalg.generic {maps = [(n, k) -> (k, n), (n, k) -> (n, k)]} ins(%w : tensor<768x3072xbf16>)
                                                                       outs(%e : tensor<3072x768xbf16>)
    %y = linalg.matmul indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), (m, n, k) -> (m, n)]
           ins(%x, %wt : tensor<512x768xbf16>, tensor<3072x768xbf16>) outs(%acc : tensor<512x3072xf32>)
"""

from __future__ import annotations

from fusec.codegen.wgmma_plan import DEFAULT_MATMUL_MAPS, matmul_maps, tensor_core_problem
from fusec.mlir import ir
from torch_mlir.dialects import linalg, tensor

FLAG = "fusec-transpose-tensor-core-operands"
SUMMARY = "Copy a 16-bit matmul's B read along N ([K, N]) to [N, K], for the tensor cores' kernel"

def _transposed(value):
    """A linalg.generic copying the 2-d tensor `value` [K, N] to [N, K], at the insertion point."""
    source = ir.RankedTensorType(value.type)
    k, n = source.shape
    empty = tensor.EmptyOp([n, k], source.element_type).result
    swap = ir.AffineMap.get(2, 0, [ir.AffineDimExpr.get(1), ir.AffineDimExpr.get(0)])
    maps = ir.ArrayAttr.get([ir.AffineMapAttr.get(swap), ir.AffineMapAttr.get(ir.AffineMap.get_identity(2))])
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    generic = linalg.GenericOp([empty.type], [value], [empty], maps, ir.ArrayAttr.get([parallel] * 2))
    body = generic.regions[0].blocks.append(source.element_type, source.element_type)
    with ir.InsertionPoint(body):
        linalg.YieldOp([body.arguments[0]])
    return generic.results[0]


def _rewrite(op) -> bool:
    if matmul_maps(op) != list(DEFAULT_MATMUL_MAPS):  # B [K, N]
        return False
    view = op.opview
    a, b = view.inputs
    b_type = ir.RankedTensorType(b.type)
    if not b_type.has_static_shape:
        return False
    with ir.InsertionPoint(op), op.location:
        bt = _transposed(b)
        maps = [ir.AffineMap.get(3, 0, [ir.AffineDimExpr.get(i), ir.AffineDimExpr.get(j)])
                for i, j in ((0, 2), (1, 2), (0, 1))]
        result = linalg.matmul(a, bt, outs=[view.outputs[0]], indexing_maps=maps)
    if tensor_core_problem(result.owner):  # not one the kernel builds after all: leave the matmul be
        empty = bt.owner.opview.outputs[0].owner
        for built in (result.owner, bt.owner, empty):
            built.erase()
        return False
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.matmul" else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        _rewrite(op)
