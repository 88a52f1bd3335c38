// The `gpu` stage on loop-mapped kernels (scf.parallel nests with #gpu.loop_dim_map, the `tiled`
// form of ops that fit no group schedule; here the seed model, 4 x 64, lowered op by op): the host
// function keeps only its allocations and three gpu.launch_func ops, one per loop nest; the
// kernels are outlined into the single gpu.module @fusec_kernels, named in launch order.

// RUN: fusec %s --emit gpu | FileCheck %s

// CHECK:       module attributes {gpu.container_module}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4x64xf32>, %[[W:.*]]: memref<64xf32>, %[[UP:.*]]: memref<4x64xf32>) -> memref<4x64xf32>
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK:         %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4x64xf32>
// CHECK:         %[[ACC:.*]] = memref.alloc() {{.*}} : memref<4x1xf32>
// CHECK-NOT:     scf.parallel
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C256]], %[[C1]]) args(%[[ACC]] : memref<4x1xf32>)
// CHECK-NEXT:    gpu.launch_func @fusec_kernels::@main_kernel_1 blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C1]], %[[C1]]) args(%[[X]] : memref<4x64xf32>, %[[ACC]] : memref<4x1xf32>)
// CHECK-NEXT:    gpu.launch_func @fusec_kernels::@main_kernel_2 blocks in (%[[C4]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C256]], %[[C1]]) args(%[[X]] : memref<4x64xf32>, %[[ACC]] : memref<4x1xf32>, %[[W]] : memref<64xf32>, %[[UP]] : memref<4x64xf32>, %[[OUT]] : memref<4x64xf32>)
// CHECK-NEXT:    return %[[OUT]] : memref<4x64xf32>

// CHECK:       gpu.module @fusec_kernels {
// CHECK:         gpu.func @main_kernel_0(%{{.*}}: memref<4x1xf32>) kernel attributes {known_block_size = array<i32: 1, 256, 1>, known_grid_size = array<i32: 4, 1, 1>}
// CHECK:           gpu.block_id x
// CHECK:           gpu.thread_id y
// CHECK:           gpu.return
// CHECK:         gpu.func @main_kernel_1(%[[KX:.*]]: memref<4x64xf32>, %[[KACC:.*]]: memref<4x1xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 4, 1, 1>}
// CHECK:           %[[ROW:.*]] = gpu.block_id x
// CHECK:           scf.for %[[K:.*]] =
// CHECK:             memref.load %[[KX]][%[[ROW]], %[[K]]] : memref<4x64xf32>
// CHECK:             memref.store %{{.*}}, %[[KACC]][%[[ROW]], %{{.*}}] : memref<4x1xf32>
// CHECK:         gpu.func @main_kernel_2(
// CHECK:           math.rsqrt
// CHECK:           math.exp
// CHECK-NOT:   gpu.module
// CHECK-NOT:   gpu.func

module {
  func.func @main(%arg0: memref<4x64xf32>, %arg1: memref<64xf32>, %arg2: memref<4x64xf32>) -> memref<4x64xf32> {
    %c64 = arith.constant 64 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c0 = arith.constant 0 : index
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %cst_2 = arith.constant 6.400000e+01 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<4x64xf32>
    %alloc_3 = memref.alloc() {alignment = 64 : i64} : memref<4x1xf32>
    %c0_4 = arith.constant 0 : index
    %c1_5 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %0 = arith.muli %c1, %c1_5 : index
    %1 = arith.muli %c1, %c256 : index
    scf.parallel (%arg3, %arg4) = (%c0, %c0) to (%c4, %c1) step (%0, %1) {
      scf.parallel (%arg5, %arg6) = (%c0_4, %c0_4) to (%0, %1) step (%c1, %c1) {
        %5 = arith.addi %arg5, %arg3 : index
        %6 = arith.addi %arg6, %arg4 : index
        %true = arith.constant true
        %7 = arith.muli %arg5, %c1 : index
        %8 = arith.addi %7, %arg3 : index
        %9 = arith.cmpi ult, %8, %c4 : index
        %10 = arith.andi %true, %9 : i1
        %11 = arith.muli %arg6, %c1 : index
        %12 = arith.addi %11, %arg4 : index
        %13 = arith.cmpi ult, %12, %c1 : index
        %14 = arith.andi %10, %13 : i1
        scf.if %14 {
          memref.store %cst, %alloc_3[%5, %6] : memref<4x1xf32>
        }
        scf.reduce 
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
      scf.reduce 
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    %c0_6 = arith.constant 0 : index
    %c1_7 = arith.constant 1 : index
    %2 = arith.muli %c1, %c1_7 : index
    scf.parallel (%arg3) = (%c0) to (%c4) step (%2) {
      scf.parallel (%arg4) = (%c0_6) to (%2) step (%c1) {
        %5 = arith.addi %arg4, %arg3 : index
        scf.for %arg5 = %c0 to %c64 step %c1 {
          %6 = memref.load %arg0[%5, %arg5] : memref<4x64xf32>
          %7 = memref.load %alloc_3[%5, %c0] : memref<4x1xf32>
          %8 = math.fpowi %6, %c2_i64 : f32, i64
          %9 = arith.addf %8, %7 : f32
          memref.store %9, %alloc_3[%5, %c0] : memref<4x1xf32>
        }
        scf.reduce 
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
      scf.reduce 
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    %c0_8 = arith.constant 0 : index
    %c1_9 = arith.constant 1 : index
    %c256_10 = arith.constant 256 : index
    %3 = arith.muli %c1, %c1_9 : index
    %4 = arith.muli %c1, %c256_10 : index
    scf.parallel (%arg3, %arg4) = (%c0, %c0) to (%c4, %c64) step (%3, %4) {
      scf.parallel (%arg5, %arg6) = (%c0_8, %c0_8) to (%3, %4) step (%c1, %c1) {
        %5 = arith.addi %arg5, %arg3 : index
        %6 = arith.addi %arg6, %arg4 : index
        %true = arith.constant true
        %7 = arith.muli %arg5, %c1 : index
        %8 = arith.addi %7, %arg3 : index
        %9 = arith.cmpi ult, %8, %c4 : index
        %10 = arith.andi %true, %9 : i1
        %11 = arith.muli %arg6, %c1 : index
        %12 = arith.addi %11, %arg4 : index
        %13 = arith.cmpi ult, %12, %c64 : index
        %14 = arith.andi %10, %13 : i1
        scf.if %14 {
          %15 = memref.load %arg0[%5, %6] : memref<4x64xf32>
          %16 = memref.load %alloc_3[%5, %c0] : memref<4x1xf32>
          %17 = memref.load %arg1[%6] : memref<64xf32>
          %18 = memref.load %arg2[%5, %6] : memref<4x64xf32>
          %19 = arith.divf %16, %cst_2 : f32
          %20 = arith.truncf %cst_1 : f64 to f32
          %21 = arith.addf %19, %20 : f32
          %22 = math.rsqrt %21 : f32
          %23 = arith.mulf %15, %22 : f32
          %24 = arith.mulf %23, %17 : f32
          %25 = arith.negf %24 : f32
          %26 = math.exp %25 : f32
          %27 = arith.addf %26, %cst_0 : f32
          %28 = arith.divf %cst_0, %27 : f32
          %29 = arith.mulf %24, %28 : f32
          %30 = arith.mulf %29, %18 : f32
          memref.store %30, %alloc[%5, %6] : memref<4x64xf32>
        }
        scf.reduce 
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
      scf.reduce 
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
    return %alloc : memref<4x64xf32>
  }
}
