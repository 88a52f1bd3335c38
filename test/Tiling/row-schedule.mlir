// The `tiled` stage, row schedule (fusec-lower-groups-to-gpu), on the seed model (4 x 64): its one
// group becomes one gpu.launch with a block per row. A row of 64 floats is 16 vectors of 4, so one
// warp does it, each thread one vector (threads 16-31 load the row's last vector, clamped, and are
// masked out). Each thread loads its vector of x once (128 bits) and, before the reduction, its
// vector of up (the prefetch: up streams from memory and only the epilogue reads it), squares x,
// reduces the lanes; five butterfly shuffles combine the warp's threads (a kernel of few rows
// combines with one barrier, `block_reduce`, and one warp needs none); the epilogue then computes from the x and
// up it already holds, loads w (one row for every row: from cache), and stores 128 bits where it is
// inside the row. (The registers schedule
// chooses its own threads per row; --threads-per-block applies to the flat and loop schedules.)

// RUN: fusec %s --emit tiled | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4x64xf32>, %[[W:.*]]: memref<64xf32>, %[[UP:.*]]: memref<4x64xf32>) -> memref<4x64xf32>
// CHECK-DAG:     %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4x64xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch blocks(%[[ROW:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %[[C1]], %{{.*}} = %[[C1]]) {
// CHECK:           %[[INSIDE:.*]] = arith.cmpi ult, %[[TID]], %c16
// CHECK:           %[[V:.*]] = arith.minui %[[TID]], %c15
// CHECK:           %[[COL:.*]] = arith.muli %[[V]], %c4
// CHECK:           %[[XV:.*]] = vector.load %[[X]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK:           vector.load %[[UP]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK:           %[[SQ:.*]] = math.fpowi %[[XV]]
// CHECK:           %[[MASKED:.*]] = arith.select %[[INSIDE]]
// CHECK:           %[[LANES:.*]] = vector.reduction <add>, %[[MASKED]] : vector<4xf32> into f32
// CHECK:           %[[S16:.*]], %{{.*}} = gpu.shuffle xor %[[LANES]], %c16_i32, %c32_i32 : f32
// CHECK:           arith.addf %[[LANES]], %[[S16]] : f32
// CHECK-COUNT-4:   gpu.shuffle xor
// CHECK-NOT:       gpu.barrier
// CHECK-NOT:       gpu.all_reduce
// CHECK-NOT:       vector.load %[[X]]
// CHECK-NOT:       vector.load %[[UP]]
// CHECK:           vector.load %[[W]][%[[COL]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK:           math.rsqrt
// CHECK:           arith.mulf %[[XV]], %{{.*}} : vector<4xf32>
// CHECK:           math.exp %{{.*}} : vector<4xf32>
// CHECK:           scf.if %[[INSIDE]] {
// CHECK-NEXT:        vector.store %{{.*}}, %[[OUT]][%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<4x64xf32>, vector<4xf32>
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     scf.parallel
// CHECK:         return %[[OUT]] : memref<4x64xf32>

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<4x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %cst_2 = arith.constant 6.400000e+01 : f32
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = tensor.empty() : tensor<4x1xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x64xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = math.fpowi %in, %c2_i64 : f32, i64
      %6 = arith.addf %5, %out : f32
      linalg.yield %6 : f32
    } -> tensor<4x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map2, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %3, %arg1, %arg2 : tensor<4x64xf32>, tensor<4x1xf32>, tensor<64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %in_4: f32, %in_5: f32, %out: f32):
      %5 = arith.divf %in_3, %cst_2 : f32
      %6 = arith.truncf %cst_1 : f64 to f32
      %7 = arith.addf %5, %6 : f32
      %8 = math.rsqrt %7 : f32
      %9 = arith.mulf %in, %8 : f32
      %10 = arith.mulf %9, %in_4 : f32
      %11 = arith.negf %10 : f32
      %12 = math.exp %11 : f32
      %13 = arith.addf %12, %cst_0 : f32
      %14 = arith.divf %cst_0, %13 : f32
      %15 = arith.mulf %10, %14 : f32
      %16 = arith.mulf %15, %in_5 : f32
      linalg.yield %16 : f32
    } -> tensor<4x64xf32>
    return %4 : tensor<4x64xf32>
  }
}
