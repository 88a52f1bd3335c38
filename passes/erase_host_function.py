"""--fusec-erase-host-function: keep only the kernels (functions marked `fusec.kernel`) in the module.

On the cpu target the host function's work is the launch manifest's: the runtime reads the manifest
(taken from the `tiled` stage) and calls the kernels through MLIR's ExecutionEngine one by one, so
the host function is never run. It is erased before the module goes to the llvm dialect, as the
cuda target's `llvm` stage holds only kernels too. (It also could not be lowered when its buffers
have a dynamic row count: kernels take bare pointers, and a bare pointer carries no sizes.)

Before:
    func.func @main(%x: memref<?x4096xf32>) -> memref<?x4096xf32> { ... call @main_kernel_0(...) ... }
    func.func @main_kernel_0(%x: memref<2147483648x4096xf32>, %rows: index, ...) attributes {fusec.kernel} { ... }
After:
    func.func @main_kernel_0(%x: memref<2147483648x4096xf32>, %rows: index, ...) attributes {fusec.kernel} { ... }
"""

from __future__ import annotations

FLAG = "fusec-erase-host-function"
SUMMARY = "Erase the host function, keeping the kernels (cpu target: the manifest does the host's work)"


def run(module_op, pass_) -> None:
    for op in list(module_op.regions[0].blocks[0].operations):
        if op.operation.name == "func.func" and "fusec.kernel" not in op.attributes:
            op.operation.erase()
