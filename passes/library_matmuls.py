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
transposed operand (nn.Linear's [N, K] weight, `fusec-contraction-operands`) is a flag, not a copy,
and a slice (q, k and v split from one projection, left by `fusec-fold-layout-ops{library-slices=1}`)
is a strided view of its buffer (the manifest's `offset` and `strides`).

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

from fusec.codegen.matmul_layouts import LAYOUTS, is_zero_fill, library_layout
from fusec.codegen.wgmma_plan import TENSOR_CORES
from fusec.mlir import ir
from torch_mlir.dialects import func

from .dissolve_groups import tagged_groups

FLAG = "fusec-library-matmuls"
SUMMARY = "Replace a matmul no fusec kernel builds by a call the runtime makes to a matmul library (cuBLAS)"

LIBRARY = "fusec.library"  # on the call (what to do) and on the declaration it calls
ACCUMULATE_F32 = "fusec.accumulate_f32"  # a 16-bit matmul --fusec-narrow-library-matmuls made for the library


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


def _library_call(ops):
    """(the matmul, the fill of its accumulator, the call's attributes) of a contraction group the
    library can compute, or why not."""
    matmuls = [op for op in ops if op.name in LAYOUTS]
    if len(matmuls) != 1:
        return "not one linalg.matmul or linalg.batch_matmul"
    matmul = matmuls[0]
    fills = [op for op in ops if op is not matmul]
    if len(fills) != 1 or fills[0].name != "linalg.fill" or fills[0].operands[1] != matmul.operands[2]:
        return "its members are not a matmul and the fill of its accumulator"
    if not is_zero_fill(fills[0]):
        return "its accumulator starts from something other than zeros"
    types = [ir.MemRefType(v.type) for v in matmul.operands[:3]]
    if not _row_major(types[2]) or not all(_row_major(t) or _static_strides(t) for t in types[:2]):
        return "an operand with a strided layout"
    layout = library_layout(matmul)
    if isinstance(layout, str):
        return layout
    call = {"op": matmul.name.removeprefix("linalg."), "transpose_a": layout[0], "transpose_b": layout[1]}
    return matmul, fills[0], call


def _row_major(t: ir.MemRefType) -> bool:
    return isinstance(t.layout, ir.AffineMapAttr) and t.layout.value == ir.AffineMap.get_identity(t.rank)


def _static_strides(t: ir.MemRefType) -> bool:
    """A slice of a buffer at a static offset with static strides (q, k or v of one projection,
    left by `fusec-fold-layout-ops{library-slices=1}`): the library reads it where it lies."""
    strides, offset = t.get_strides_and_offset()
    return not any(t.is_dynamic_stride_or_offset(x) for x in (*strides, offset))


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
