"""--fusec-align-workgroup-buffers: give a kernel's shared-memory buffers the alignment its vector
accesses claim.

A `vector.load` or `vector.store` says how aligned its address is (`alignment = 16`: a 128-bit
access), and LLVM believes it: it emits one `ld.shared.v4`/`st.shared.v4`. The address is the
buffer's start plus the offset, and a workgroup attribution becomes a `.shared` global aligned only
to its element (`.align 4` for f32, 2 for bf16), so where the PTX assembler puts it decides whether
the access is legal. This pass sets `llvm.align` in the kernel's `workgroup_attrib_attrs` (which
`convert-gpu-to-nvvm` puts on the global) to the largest alignment any access to the buffer claims.
The row stash (`python/fusec/codegen/row_stash.py`) needs it: its buffers are read and written in 128-bit vectors.

Before:
    gpu.func @k(...) workgroup(%stash : memref<3072xf32, #gpu.address_space<workgroup>>, %scratch : memref<8xf32, ...>) kernel {
      vector.store %v, %stash[%i] {alignment = 16 : i64} : memref<3072xf32, #gpu.address_space<workgroup>>, vector<4xf32>
After:
    gpu.func @k(...) workgroup(...) kernel attributes {workgroup_attrib_attrs = [{llvm.align = 16 : i64}, {}]} {
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-align-workgroup-buffers"
SUMMARY = "Align each kernel's shared-memory buffers to the largest alignment its vector accesses claim"


def _claimed_alignment(buffer) -> int:
    most = 0
    for use in buffer.uses:
        op = use.owner
        if op.name in ("vector.load", "vector.store") and "alignment" in op.attributes:
            most = max(most, ir.IntegerAttr(op.attributes["alignment"]).value)
    return most


def _align(func) -> None:
    count = ir.IntegerAttr(func.attributes["workgroup_attributions"]).value \
        if "workgroup_attributions" in func.attributes else 0
    if not count:
        return
    n_args = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
    block = func.regions[0].blocks[0]
    i64 = ir.IntegerType.get_signless(64)
    alignments = [_claimed_alignment(block.arguments[n_args + i]) for i in range(count)]
    if not any(alignments):
        return
    func.attributes["workgroup_attrib_attrs"] = ir.ArrayAttr.get(
        [ir.DictAttr.get({"llvm.align": ir.IntegerAttr.get(i64, a)} if a else {}) for a in alignments])


def run(module_op, pass_) -> None:
    module_op.walk(lambda op: (_align(op) if op.name == "gpu.func" else None) or ir.WalkResult.ADVANCE)
