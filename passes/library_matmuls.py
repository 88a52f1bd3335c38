"""--fusec-library-matmuls: a matmul no fusec kernel builds becomes a call the runtime makes to a
matmul library (PyTorch's `torch.mm` / `torch.bmm`: cuBLAS on the GPU, the CPU's BLAS on the cpu target).

fusec's kernels are for memory-bound work; a matmul is compute-bound, and only the tensor cores'
kernel (`wgmma`, sm_90a, 16-bit operands) builds one well. Every other contraction group (fp32, an
architecture without wgmma, wgmma off) used to fall to the generic loop lowering: one thread an
element of C, looping over K, hundreds of times slower than cuBLAS. On bufferized IR, before the
groups are lowered, this pass replaces such a group, a `linalg.matmul` or `linalg.batch_matmul` and
the fill of zeros it accumulates into, with a `func.call` to a declaration marked `fusec.library`;
the launch manifest turns that call into a `matmul` step (`fusec.manifest`), performed between the
kernels on the same stream (`fusec.runtime.executable`). The operands are read where they lie: a
transposed operand (nn.Linear's [N, K] weight, `fusec-contraction-operands`) is a flag, not a copy.

A group it cannot express is left to the loop lowering, and FUSEC_DEBUG=1 says why: other members
than the fill and the matmul, an accumulator that is not zeros, maps other than (transposed)
row-major matrices, element types other than floats.

Before:
    linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%c : memref<32x96xf32>)
    linalg.matmul indexing_maps = [(m, n, k) -> (m, k), (m, n, k) -> (n, k), (m, n, k) -> (m, n)]
        {fusec.group = 0 : i64, ...} ins(%x, %w : memref<32x64xf32>, memref<96x64xf32>) outs(%c : memref<32x96xf32>)
After:
    call @fusec_matmul_0(%x, %w, %c) {fusec.library = {op = "matmul", transpose_a = false, transpose_b = true}}
        : (memref<32x64xf32>, memref<96x64xf32>, memref<32x96xf32>) -> ()
    func.func private @fusec_matmul_0(memref<32x64xf32>, memref<96x64xf32>, memref<32x96xf32>) attributes {fusec.library}
"""

from __future__ import annotations

import os
import sys

from fusec.codegen.wgmma_plan import TENSOR_CORES
from fusec.mlir import ir
from torch_mlir.dialects import func

from .dissolve_groups import tagged_groups

FLAG = "fusec-library-matmuls"
SUMMARY = "Replace a matmul no fusec kernel builds by a call the runtime makes to a matmul library (cuBLAS)"

LIBRARY = "fusec.library"  # on the call (what to do) and on the declaration it calls
ACCUMULATE_F32 = "fusec.accumulate_f32"  # a 16-bit matmul --fusec-narrow-library-matmuls made for the library
_FLOATS = ("f16", "bf16", "f32", "f64")
# (A's map, B's map, C's map) of each op, as dim positions; a transposed operand swaps its last two.
_LAYOUTS = {"linalg.matmul": ((0, 2), (2, 1), (0, 1)),
            "linalg.batch_matmul": ((0, 1, 3), (0, 3, 2), (0, 1, 2))}


def run(module_op, pass_) -> None:
    groups = tagged_groups(module_op)
    declared: dict = {}  # the declaration's function type -> its name
    for gid, ops in groups.items():
        if ir.StringAttr(ops[0].attributes["fusec.group_kind"]).value != "contraction":
            continue
        if any(TENSOR_CORES in op.attributes for op in ops):
            continue  # the tensor cores' kernel builds it
        found = _library_call(ops)
        if isinstance(found, str) and any(ACCUMULATE_F32 in op.attributes for op in ops):
            # (--fusec-narrow-library-matmuls gave it a 16-bit result for the library: loops would
            # accumulate in 16 bits)
            ops[0].location.emit_error(f"{FLAG}: a 16-bit matmul narrowed for the library cannot be called: {found}")
            pass_.signal_pass_failure()
            return
        if isinstance(found, str):
            if os.environ.get("FUSEC_DEBUG"):
                print(f"{FLAG}: group {gid} left to the loop lowering: {found}", file=sys.stderr)
            continue
        matmul, fill, call = found
        _replace(module_op, matmul, fill, call, declared)


def _positions(map_attr) -> tuple:
    results = ir.AffineMapAttr(map_attr).value.results
    if not all(isinstance(e, ir.AffineDimExpr) for e in results):  # (results come downcast)
        return ()
    return tuple(e.position for e in results)


def library_layout(op):
    """(transpose_a, transpose_b) of a linalg.matmul or batch_matmul (on tensors or buffers) whose
    operands are (transposed) row-major matrices of floats, or why the library cannot take it."""
    types = [ir.ShapedType(v.type) for v in op.operands[:3]]
    if any(str(t.element_type) not in _FLOATS for t in types):
        return f"element types {' x '.join(str(t.element_type) for t in types)} (floats are called)"
    return transposes(op)


def transposes(op):
    """(transpose_a, transpose_b) of a linalg.matmul or batch_matmul whose operands are (transposed)
    row-major matrices, whatever their element types, or why they are not."""
    a_map, b_map, c_map = _LAYOUTS[op.name]
    maps = [_positions(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])] \
        if "indexing_maps" in op.attributes else [a_map, b_map, c_map]
    swapped = lambda p: p[:-2] + (p[-1], p[-2])  # noqa: E731
    if maps[2] != c_map or maps[0] not in (a_map, swapped(a_map)) or maps[1] not in (b_map, swapped(b_map)):
        return f"indexing maps {maps} are not (transposed) row-major matrices"
    return maps[0] != a_map, maps[1] != b_map


def is_zero_fill(op) -> bool:
    """Whether `op` is a linalg.fill of the float constant 0."""
    if op is None or op.name != "linalg.fill":
        return False
    zero = op.operands[0].owner
    return (zero.name == "arith.constant" and isinstance(zero.attributes["value"], ir.FloatAttr)
            and float(ir.FloatAttr(zero.attributes["value"]).value) == 0.0)


def _library_call(ops):
    """(the matmul, the fill of its accumulator, the call's attributes) of a contraction group the
    library can compute, or why not."""
    matmuls = [op for op in ops if op.name in _LAYOUTS]
    if len(matmuls) != 1:
        return "not one linalg.matmul or linalg.batch_matmul"
    matmul = matmuls[0]
    fills = [op for op in ops if op is not matmul]
    if len(fills) != 1 or fills[0].name != "linalg.fill" or fills[0].operands[1] != matmul.operands[2]:
        return "its members are not a matmul and the fill of its accumulator"
    if not is_zero_fill(fills[0]):
        return "its accumulator starts from something other than zeros"
    types = [ir.MemRefType(v.type) for v in matmul.operands[:3]]
    if any(not (isinstance(t.layout, ir.AffineMapAttr)
                and t.layout.value == ir.AffineMap.get_identity(t.rank)) for t in types):
        return "an operand with a strided layout"
    layout = library_layout(matmul)
    if isinstance(layout, str):
        return layout
    call = {"op": matmul.name.removeprefix("linalg."), "transpose_a": layout[0], "transpose_b": layout[1]}
    return matmul, fills[0], call


def _replace(module_op, matmul, fill, call: dict, declared: dict) -> None:
    operands = list(matmul.operands[:3])
    function_type = ir.FunctionType.get([v.type for v in operands], [])
    key = str(function_type)
    if key not in declared:
        declared[key] = f"fusec_{call['op']}_{len(declared)}"
        with ir.InsertionPoint(module_op.regions[0].blocks[0]), ir.Location.unknown():
            decl = func.FuncOp(declared[key], function_type, visibility="private")
            decl.attributes[LIBRARY] = ir.UnitAttr.get()
    with ir.InsertionPoint(matmul), matmul.location:
        op = func.CallOp([], ir.FlatSymbolRefAttr.get(declared[key]), operands)
        op.attributes[LIBRARY] = ir.DictAttr.get({
            "op": ir.StringAttr.get(call["op"]),
            "transpose_a": ir.BoolAttr.get(call["transpose_a"]),
            "transpose_b": ir.BoolAttr.get(call["transpose_b"])})
    matmul.erase()
    fill.erase()
