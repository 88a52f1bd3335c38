// The `nvvm` stage on a row-schedule kernel: gpu.all_reduce becomes warp shuffles (butterfly,
// with partial-warp handling), a workgroup buffer in shared memory (address space 3) for the
// per-warp results and a barrier; math becomes libdevice calls.

// RUN: fusec %s --emit nvvm | FileCheck %s

// CHECK:       gpu.module @fusec_kernels {
// CHECK:         llvm.mlir.global internal @[[WG:.*]]() {addr_space = 3 : i32} : !llvm.array<32 x f32>
// CHECK-DAG:     llvm.func @__nv_rsqrtf(f32) -> f32
// CHECK-DAG:     llvm.func @__nv_expf(f32) -> f32
// CHECK-LABEL:   llvm.func @main_kernel_0(
// CHECK-SAME:        !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {gpu.kernel, {{.*}}nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}
// CHECK:           llvm.mlir.addressof @[[WG]] : !llvm.ptr<3>
// CHECK:           nvvm.shfl.sync bfly {{.*}} {return_value_and_is_valid} : f32 -> !llvm.struct<(f32, i1)>
// CHECK:           llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK:           nvvm.barrier
// CHECK:           llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK:           llvm.call @__nv_rsqrtf(
// CHECK:           llvm.call @__nv_expf(
// CHECK-NOT:     gpu.all_reduce
// CHECK-NOT:     gpu.func

module attributes {gpu.container_module} {
  func.func @main(%arg0: memref<4x64xf32>, %arg1: memref<64xf32>, %arg2: memref<4x64xf32>) -> memref<4x64xf32> {
    %c64 = arith.constant 64 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
    gpu.launch_func  @fusec_kernels::@main_kernel_0 blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)  args(%arg0 : memref<4x64xf32>, %arg1 : memref<64xf32>, %arg2 : memref<4x64xf32>, %alloc : memref<4x64xf32>)
    return %alloc : memref<4x64xf32>
  }
  gpu.module @fusec_kernels {
    gpu.func @main_kernel_0(%arg0: memref<4x64xf32>, %arg1: memref<64xf32>, %arg2: memref<4x64xf32>, %arg3: memref<4x64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %cst = arith.constant 1.000000e+00 : f32
      %cst_0 = arith.constant 9.9999999999999995E-7 : f64
      %cst_1 = arith.constant 6.400000e+01 : f32
      %cst_2 = arith.constant 0.000000e+00 : f32
      %c64 = arith.constant 64 : index
      %c2_i64 = arith.constant 2 : i64
      %block_id_x = gpu.block_id x
      %thread_id_x = gpu.thread_id x
      %0 = scf.for %arg4 = %thread_id_x to %c64 step %c64 iter_args(%arg5 = %cst_2) -> (f32) {
        %3 = memref.load %arg0[%block_id_x, %arg4] : memref<4x64xf32>
        %4 = math.fpowi %3, %c2_i64 : f32, i64
        %5 = arith.addf %arg5, %4 : f32
        scf.yield %5 : f32
      }
      %1 = gpu.all_reduce add %0 uniform {
      } : (f32) -> f32
      %2 = arith.addf %1, %cst_2 : f32
      scf.for %arg4 = %thread_id_x to %c64 step %c64 {
        %3 = memref.load %arg0[%block_id_x, %arg4] : memref<4x64xf32>
        %4 = memref.load %arg1[%arg4] : memref<64xf32>
        %5 = memref.load %arg2[%block_id_x, %arg4] : memref<4x64xf32>
        %6 = arith.divf %2, %cst_1 : f32
        %7 = arith.truncf %cst_0 : f64 to f32
        %8 = arith.addf %6, %7 : f32
        %9 = math.rsqrt %8 : f32
        %10 = arith.mulf %3, %9 : f32
        %11 = arith.mulf %10, %4 : f32
        %12 = arith.negf %11 : f32
        %13 = math.exp %12 : f32
        %14 = arith.addf %13, %cst : f32
        %15 = arith.divf %cst, %14 : f32
        %16 = arith.mulf %11, %15 : f32
        %17 = arith.mulf %16, %5 : f32
        memref.store %17, %arg3[%block_id_x, %arg4] : memref<4x64xf32>
      }
      gpu.return
    }
  }
}
