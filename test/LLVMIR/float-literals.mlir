// Float constants in the `llvm` stage are written in the one form llvmlite's LLVM 22 parses, the
// double hex literal (`0x3EB0C6F7A0000000`), whatever the newer LLVM printed: raw bits (`f0x...`),
// a decimal, or `-inf`/`+inf` (a softmax's max starts at -inf). The PTX then has the same values.

// RUN: rm -rf %t && fusec %s --emit ptx --dump-dir %t | FileCheck %s --check-prefix=PTX
// RUN: FileCheck %s --input-file %t/06-llvm.ll

// CHECK-LABEL: define ptx_kernel void @main_kernel_0(ptr
// CHECK:         %[[X:.*]] = load float, ptr
// CHECK:         %[[M:.*]] = fmul float %[[X]], 0x3FA6E4E260000000
// CHECK:         %[[A:.*]] = fadd float %[[M]], 0x3EB0C6F7A0000000
// CHECK:         call float @llvm.maxnum.f32(float %[[A]], float 0xFFF0000000000000)
// CHECK:         store float 0xFFF0000000000000, ptr
// CHECK:         store float 0x7FF0000000000000, ptr
// CHECK-NOT:     f0x
// CHECK-NOT:     inf
// CHECK-NOT:     e-0

// PTX-LABEL: .visible .entry main_kernel_0(
// PTX:         mul.rn.f32 {{.*}}, 0f3D372713;
// PTX:         add.rn.f32 {{.*}}, 0f358637BD;
// PTX:         max.f32 {{.*}}, 0fFF800000;

module attributes {gpu.container_module} {
  func.func @main(%arg0: memref<4xf32>) -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    return %arg0 : memref<4xf32>
  }
  gpu.module @fusec_kernels {
    llvm.func @main_kernel_0(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %ninf = llvm.mlir.constant(0xFF800000 : f32) : f32
      %pinf = llvm.mlir.constant(0x7F800000 : f32) : f32
      %eps = llvm.mlir.constant(1.000000e-06 : f32) : f32
      %k = llvm.mlir.constant(4.471500e-02 : f32) : f32
      %c1 = llvm.mlir.constant(1 : i64) : i64
      %c2 = llvm.mlir.constant(2 : i64) : i64
      %p1 = llvm.getelementptr %arg0[%c1] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %p2 = llvm.getelementptr %arg0[%c2] : (!llvm.ptr, i64) -> !llvm.ptr, f32
      %x = llvm.load %arg0 : !llvm.ptr -> f32
      %0 = llvm.fmul %x, %k : f32
      %1 = llvm.fadd %0, %eps : f32
      %2 = llvm.intr.maxnum(%1, %ninf) : (f32, f32) -> f32
      llvm.store %2, %arg0 : f32, !llvm.ptr
      llvm.store %ninf, %p1 : f32, !llvm.ptr
      llvm.store %pinf, %p2 : f32, !llvm.ptr
      llvm.return
    }
  }
}
