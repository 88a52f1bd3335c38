// The launch grid on an odd shape (bias add, 37 x 1001 = 37037 elements, flat schedule, one element
// a thread: `--vectors 1`; by default a thread takes 4, test/Tiling/flat-schedule.mlir):
// ceil(37037 / threads-per-block) blocks along x, 145 of 256 threads or 290 of 128, and the
// kernel guards the linear index of the last block.

// RUN: fusec %s --emit gpu --vectors 1 | FileCheck %s
// RUN: fusec %s --emit gpu --vectors 1 --threads-per-block 128 | FileCheck %s --check-prefix=TPB128

// CHECK-LABEL: func.func @main(
// CHECK-DAG:     %[[C145:.*]] = arith.constant 145 : index
// CHECK-DAG:     %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%[[C145]], %[[C1]], %[[C1]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @fusec_kernels
// CHECK:         gpu.func @main_kernel_0({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 145, 1, 1>}
// CHECK-DAG:       %[[N:.*]] = arith.constant 37037 : index
// CHECK-DAG:       %[[BX:.*]] = gpu.block_id x
// CHECK-DAG:       %[[TX:.*]] = gpu.thread_id x
// CHECK:           %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK:           %[[I:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]] : index
// CHECK:           scf.if %[[IN]] {

// TPB128-LABEL: func.func @main(
// TPB128-DAG:     %[[C290:.*]] = arith.constant 290 : index
// TPB128-DAG:     %[[C128:.*]] = arith.constant 128 : index
// TPB128-DAG:     %[[C1:.*]] = arith.constant 1 : index
// TPB128:         gpu.launch_func @fusec_kernels::@main_kernel_0 blocks in (%[[C290]], %[[C1]], %[[C1]]) threads in (%[[C128]], %[[C1]], %[[C1]])
// TPB128:         gpu.func @main_kernel_0({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 290, 1, 1>}

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<37x1001xf32>, %arg1: tensor<1001xf32>) -> tensor<37x1001xf32> {
    %0 = tensor.empty() : tensor<37x1001xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<37x1001xf32>, tensor<1001xf32>) outs(%0 : tensor<37x1001xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.addf %in, %in_0 : f32
      linalg.yield %2 : f32
    } -> tensor<37x1001xf32>
    return %1 : tensor<37x1001xf32>
  }
}
