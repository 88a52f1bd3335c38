// A NaN constant: the newer LLVM prints it as `+qnan` (`-qnan`, `+snan` for others), which
// llvmlite's LLVM 22 cannot parse; it must be rewritten as a hex literal like -inf and +inf, in
// f32 and in the 16-bit types (an f16 NaN raised "could not convert string to float: 'qnan'":
// the mean of an empty dim in half, found by `fusec fuzz --target cuda`, seed 31), and +-inf and NaN
// in f64 (`double -inf` did not parse: softmax(x, dtype=torch.float64) was refused on the GPU, found
// by the cuda conformance run).

// RUN: fusec %s --emit llvm | FileCheck %s
// RUN: fusec %s --emit ptx | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: define ptx_kernel void @main_kernel_0(ptr
// CHECK:         store float 0x7FF8000000000000, ptr
// CHECK:         store half 0xH7E00, ptr
// CHECK:         store bfloat 0xR7FC0, ptr
// CHECK:         store double 0xFFF0000000000000, ptr
// CHECK:         store double 0x7FF8000000000000, ptr
// CHECK:         store double 2.500000e-01, ptr
// CHECK-NOT:     nan

// PTX-LABEL: .visible .entry main_kernel_0(
// PTX:         st.global

module attributes {gpu.container_module} {
  func.func @main(%arg0: memref<4xf32>) -> memref<4xf32> {
    %c1 = arith.constant 1 : index
    gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    return %arg0 : memref<4xf32>
  }
  gpu.module @fusec_kernels {
    llvm.func @main_kernel_0(%arg0: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %nan = llvm.mlir.constant(0x7FC00000 : f32) : f32
      llvm.store %nan, %arg0 : f32, !llvm.ptr
      %nan16 = llvm.mlir.constant(0x7E00 : f16) : f16
      llvm.store %nan16, %arg0 : f16, !llvm.ptr
      %nanbf = llvm.mlir.constant(0x7FC0 : bf16) : bf16
      llvm.store %nanbf, %arg0 : bf16, !llvm.ptr
      %ninf64 = llvm.mlir.constant(0xFFF0000000000000 : f64) : f64
      llvm.store %ninf64, %arg0 : f64, !llvm.ptr
      %nan64 = llvm.mlir.constant(0x7FF8000000000000 : f64) : f64
      llvm.store %nan64, %arg0 : f64, !llvm.ptr
      %q64 = llvm.mlir.constant(0.25 : f64) : f64
      llvm.store %q64, %arg0 : f64, !llvm.ptr
      llvm.return
    }
  }
}
