"""--fusec-narrow-library-matmuls: a 16-bit matmul the matmul library will compute writes a 16-bit
result, as eager's does, instead of fp32.

`--fusec-contraction-operands` makes a bf16 matmul read bf16 and accumulate into fp32: right for a
kernel that keeps the accumulator in registers (the tensor cores' one fuses its epilogue on it). A
library call (`--fusec-library-matmuls`) instead writes its whole result to memory, and the next
kernel reads it back: in fp32 that is twice eager's bytes both ways (8192x3072 bf16: cuBLAS wrote
100 MB, not 50, and the epilogue kernel read them back; 0.78x eager on an H100). cuBLAS accumulates
a bf16 matmul in fp32 and rounds once at the end, so the result can be bf16 at no cost in accuracy
beyond that one rounding, which eager makes too. The matmul now yields bf16 (marked
`fusec.accumulate_f32`: the library keeps fp32 accumulation) and a widening cast gives its readers the
fp32 they read; a reader that only rounds back to bf16 (the model returns the product) reads the
bf16 result itself.

Only matmuls that will be library calls: floats of one 16-bit type into fp32, a zero fill for
accumulator, (transposed) row-major operands, no operand sliced (a slice is a strided buffer the
library call does not take), and, where `wgmma` is on, one the tensor cores' kernel cannot build.

Before:
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
    %y = linalg.matmul ins(%a, %b : tensor<16x32xbf16>, tensor<32x24xbf16>) outs(%acc : tensor<16x24xf32>)
    %r = linalg.generic {identity maps} ins(%y : tensor<16x24xf32>) ... { arith.truncf %in : f32 to bf16 }
After:
    %acc = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<16x24xbf16>) -> tensor<16x24xbf16>
    %y16 = linalg.matmul {fusec.accumulate_f32} ins(%a, %b : ...) outs(%acc : tensor<16x24xbf16>)
    (%r is %y16; other readers read linalg.generic {identity maps} ins(%y16) ... { arith.extf })
"""

from __future__ import annotations

from fusec.codegen.matmul_layouts import is_zero_fill, library_layout
from fusec.codegen.members import is_identity
from fusec.codegen.wgmma_plan import tensor_core_problem
from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg

from .fold_empty_tensors import empty_like
from .library_matmuls import ACCUMULATE_F32

FLAG = "fusec-narrow-library-matmuls"
SUMMARY = "Make a 16-bit matmul the library computes write a 16-bit result (cuBLAS accumulates in fp32)"
OPTIONS = {"wgmma": (False, "the tensor cores' kernel builds the matmuls it can: leave those")}

_NARROW = ("bf16", "f16")
_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def run(module_op, pass_, wgmma: bool) -> None:
    found = []
    module_op.walk(lambda op: (found.append(op) if op.name in ("linalg.matmul", "linalg.batch_matmul") else None)
                   or ir.WalkResult.ADVANCE)
    for op in found:
        if _narrowable(op, wgmma):
            _narrow(op)


def _owner(value):
    return None if isinstance(value.owner, ir.Block) else value.owner


def _sliced(value) -> bool:
    """Whether `value` is, through reshapes, a slice of another tensor."""
    op = _owner(value)
    while op is not None and op.name in _RESHAPES:
        op = _owner(op.operands[0])
    return op is not None and op.name == "tensor.extract_slice"


def _narrowable(op, wgmma: bool) -> bool:
    a, b, c = (ir.RankedTensorType(v.type) for v in op.operands[:3])
    if str(a.element_type) not in _NARROW or b.element_type != a.element_type or str(c.element_type) != "f32":
        return False
    if not is_zero_fill(_owner(op.operands[2])) or isinstance(library_layout(op), str):
        return False
    if any(_sliced(v) for v in op.operands[:2]):
        return False
    return not (wgmma and not tensor_core_problem(op))


def _truncation_to(op, element_type) -> bool:
    """Whether `op` is an identity-mapped linalg.generic whose body only rounds its input to `element_type`."""
    if op.name != "linalg.generic" or len(op.opview.inputs) != 1 or len(op.results) != 1:
        return False
    if not all(is_identity(ir.AffineMapAttr(m).value) for m in op.opview.indexing_maps):
        return False
    body = list(op.regions[0].blocks[0].operations)
    return (len(body) == 2 and body[0].name == "arith.truncf" and body[1].name == "linalg.yield"
            and body[0].operands[0] == op.regions[0].blocks[0].arguments[0]
            and body[0].results[0].type == element_type)


def _narrow(op) -> None:
    narrow = ir.RankedTensorType(op.operands[0].type).element_type
    maps = {"indexing_maps": [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]} \
        if "indexing_maps" in op.attributes else {}
    build = linalg.matmul if op.name == "linalg.matmul" else linalg.batch_matmul
    with ir.InsertionPoint(op), op.location:
        empty = empty_like(op.operands[2], narrow)  # (the accumulator: defined before the matmul)
        acc = linalg.fill(arith.ConstantOp(narrow, 0.0).result, outs=[empty])
        result = build(op.operands[0], op.operands[1], outs=[acc], **maps)
        result.owner.attributes[ACCUMULATE_F32] = ir.UnitAttr.get()
    for use in list(op.results[0].uses):
        reader = use.owner
        if _truncation_to(reader, narrow):  # rounds the product back: the product itself
            reader.results[0].replace_all_uses_with(result)
            reader.erase()
    if list(op.results[0].uses):
        with ir.InsertionPoint(op), op.location:
            op.results[0].replace_all_uses_with(_widened(result))
    fill = _owner(op.operands[2])
    op.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()


def _widened(value):
    """A linalg.generic widening `value` to f32, at the insertion point."""
    f32 = ir.F32Type.get()
    empty = empty_like(value, f32)
    rank = ir.RankedTensorType(value.type).rank
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))
    parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
    generic = linalg.GenericOp([empty.type], [value], [empty], ir.ArrayAttr.get([identity, identity]),
                               ir.ArrayAttr.get([parallel] * rank))
    body = generic.regions[0].blocks.append(ir.RankedTensorType(value.type).element_type, f32)
    with ir.InsertionPoint(body):
        linalg.YieldOp([arith.ExtFOp(f32, body.arguments[0]).result])
    return generic.results[0]
