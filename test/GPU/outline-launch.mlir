// The `gpu` stage on a row-schedule kernel (the seed model's one group, 4 x 64): the gpu.launch
// becomes a gpu.launch_func of @fusec_kernels::@main_kernel_0 with the same grid (a block per row)
// and block (64 threads), taking every buffer it touches as an argument; the body, with its
// gpu.all_reduce, is outlined unchanged.

// RUN: fusec %s --emit gpu | FileCheck %s

// CHECK:       module attributes {gpu.container_module}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4x64xf32>, %[[W:.*]]: memref<64xf32>, %[[UP:.*]]: memref<4x64xf32>) -> memref<4x64xf32>
// CHECK-DAG:     %[[C64:.*]] = arith.constant 64 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4x64xf32>
// CHECK-NEXT:    gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C64]], %[[C1]], %[[C1]]) args(%[[X]] : memref<4x64xf32>, %[[W]] : memref<64xf32>, %[[UP]] : memref<4x64xf32>, %[[OUT]] : memref<4x64xf32>)
// CHECK-NEXT:    return %[[OUT]] : memref<4x64xf32>
// CHECK:       gpu.module @fusec_kernels {
// CHECK-NEXT:    gpu.func @main_kernel_0(%[[KX:.*]]: memref<4x64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<4x64xf32>, %[[KOUT:.*]]: memref<4x64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// CHECK-DAG:       %[[ROW:.*]] = gpu.block_id x
// CHECK-DAG:       %[[TID:.*]] = gpu.thread_id x
// CHECK:           %[[PART:.*]] = scf.for %{{.*}} = %[[TID]] to {{.*}} iter_args
// CHECK:             memref.load %[[KX]][%[[ROW]], %{{.*}}]
// CHECK:           gpu.all_reduce add %[[PART]] uniform
// CHECK:           memref.store %{{.*}}, %[[KOUT]][%[[ROW]], %{{.*}}]
// CHECK:           gpu.return
// CHECK-NOT:   gpu.launch {
// CHECK-NOT:   gpu.module

module {
  func.func @main(%arg0: memref<4x64xf32>, %arg1: memref<64xf32>, %arg2: memref<4x64xf32>) -> memref<4x64xf32> {
    %c64 = arith.constant 64 : index
    %c4 = arith.constant 4 : index
    %c1 = arith.constant 1 : index
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %cst_2 = arith.constant 6.400000e+01 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
    gpu.launch blocks(%arg3, %arg4, %arg5) in (%arg9 = %c4, %arg10 = %c1, %arg11 = %c1) threads(%arg6, %arg7, %arg8) in (%arg12 = %c64, %arg13 = %c1, %arg14 = %c1) {
      %0 = scf.for %arg15 = %arg6 to %c64 step %c64 iter_args(%arg16 = %cst) -> (f32) {
        %3 = memref.load %arg0[%arg3, %arg15] : memref<4x64xf32>
        %4 = math.fpowi %3, %c2_i64 : f32, i64
        %5 = arith.addf %arg16, %4 : f32
        scf.yield %5 : f32
      }
      %1 = gpu.all_reduce add %0 uniform {
      } : (f32) -> f32
      %2 = arith.addf %1, %cst : f32
      scf.for %arg15 = %arg6 to %c64 step %c64 {
        %3 = memref.load %arg0[%arg3, %arg15] : memref<4x64xf32>
        %4 = memref.load %arg1[%arg15] : memref<64xf32>
        %5 = memref.load %arg2[%arg3, %arg15] : memref<4x64xf32>
        %6 = arith.divf %2, %cst_2 : f32
        %7 = arith.truncf %cst_1 : f64 to f32
        %8 = arith.addf %6, %7 : f32
        %9 = math.rsqrt %8 : f32
        %10 = arith.mulf %3, %9 : f32
        %11 = arith.mulf %10, %4 : f32
        %12 = arith.negf %11 : f32
        %13 = math.exp %12 : f32
        %14 = arith.addf %13, %cst_0 : f32
        %15 = arith.divf %cst_0, %14 : f32
        %16 = arith.mulf %11, %15 : f32
        %17 = arith.mulf %16, %5 : f32
        memref.store %17, %alloc[%arg3, %arg15] : memref<4x64xf32>
      }
      gpu.terminator
    }
    return %alloc : memref<4x64xf32>
  }
}
