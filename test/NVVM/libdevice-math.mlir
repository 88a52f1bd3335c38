// Math ops in a kernel become calls to libdevice at the `nvvm` stage, one __nv_* function each
// (math-expand-ops runs only for fpowi, so powf stays __nv_powf, which is right for negative bases).

// RUN: fusec %s --emit nvvm | FileCheck %s

// CHECK:       gpu.module @fusec_kernels {
// CHECK-DAG:     llvm.func @__nv_erff(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_tanhf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_logf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_expf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_sqrtf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_rsqrtf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_powf(f32, f32) -> f32
// CHECK-LABEL:   llvm.func @main_kernel_0(
// CHECK-SAME:        %[[IN:.*]]: !llvm.ptr, %[[OUT:.*]]: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}
// CHECK:           %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:           %[[ERF:.*]] = llvm.call @__nv_erff(%[[X]]) : (f32) -> f32
// CHECK:           %[[TANH:.*]] = llvm.call @__nv_tanhf(%[[ERF]]) : (f32) -> f32
// CHECK:           %[[LOG:.*]] = llvm.call @__nv_logf(%[[TANH]]) : (f32) -> f32
// CHECK:           %[[EXP:.*]] = llvm.call @__nv_expf(%[[LOG]]) : (f32) -> f32
// CHECK:           %[[SQRT:.*]] = llvm.call @__nv_sqrtf(%[[EXP]]) : (f32) -> f32
// CHECK:           %[[RSQRT:.*]] = llvm.call @__nv_rsqrtf(%[[SQRT]]) : (f32) -> f32
// CHECK:           %[[POW:.*]] = llvm.call @__nv_powf(%[[RSQRT]], %[[X]]) : (f32, f32) -> f32
// CHECK:           llvm.store %[[POW]], %{{.*}} : f32, !llvm.ptr
// CHECK-NOT:     math.

module attributes {gpu.container_module} {
  func.func @main(%arg0: memref<64xf32>, %arg1: memref<64xf32>) -> memref<64xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%arg0 : memref<64xf32>, %arg1 : memref<64xf32>)
    return %arg1 : memref<64xf32>
  }
  gpu.module @fusec_kernels {
    gpu.func @main_kernel_0(%in: memref<64xf32>, %out: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 1, 1, 1>} {
      %i = gpu.thread_id x
      %x = memref.load %in[%i] : memref<64xf32>
      %0 = math.erf %x : f32
      %1 = math.tanh %0 : f32
      %2 = math.log %1 : f32
      %3 = math.exp %2 : f32
      %4 = math.sqrt %3 : f32
      %5 = math.rsqrt %4 : f32
      %6 = math.powf %5, %x : f32
      memref.store %6, %out[%i] : memref<64xf32>
      gpu.return
    }
  }
}
