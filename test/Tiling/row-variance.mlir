// A LayerNorm's two sums (the mean's, then the squares about it) in one block-wide round:
// fusec-lower-groups-to-gpu with `one-round-variance` (python/fusec/codegen/row_variance.py). 4 rows of 256 floats:
// a block of 64 threads (2 warps) per row, one vector of 4 per thread. Each thread takes the mean of
// its 4 elements and the sum of squares about it (Welford over its slots, then its lanes merged: with
// one slot, the lanes' average and squared distances from it); butterfly shuffles merge (mean, squares) within
// each warp (the counts are equal and known, so they are constants, not shuffled); lane 0 of each
// warp writes its pair to shared memory; after the one barrier every warp merges the 2 warps' pairs
// by one more shuffle. Without the option (TWO), each sum is its own gpu.all_reduce.

// RUN: fusec %s --emit tiled | FileCheck %s
// RUN: fusec %s --emit fused | fusec-opt - --fusec-dissolve-groups \
// RUN:   '--one-shot-bufferize=bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map' \
// RUN:   '--fusec-lower-groups-to-gpu=one-round-variance=0 one-barrier-rows=0' | FileCheck %s --check-prefix=TWO
// A sum that starts from 1 instead of 0 (its fill edited) no longer gives the mean that the squares
// are about: no merge (START), each of the three sums its own block-wide combination (a kernel of
// few rows: one barrier each, `block_reduce`).
// RUN: sed 's/%cst = arith.constant 0.000000e+00 : f64/%cst = arith.constant 1.000000e+00 : f64/' %s > %t.mlir
// RUN: fusec %t.mlir --emit tiled | FileCheck %s --check-prefix=START

// CHECK-LABEL: func.func @main(
// CHECK-SAME:      %[[X:.*]]: memref<4x256xf32>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64, {{.*}}) workgroup(%[[WG:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) {
// CHECK:           %[[XV:.*]] = vector.load %[[X]]
// CHECK:           %[[SUM:.*]] = vector.reduction <add>, %{{.*}} : vector<4xf32> into f32
// CHECK:           %[[MEAN:.*]] = arith.mulf %[[SUM]], %[[QUARTER:.*]] : f32
// CHECK:           %[[SHIFT:.*]] = vector.broadcast %[[MEAN]]
// CHECK:           %[[D:.*]] = arith.subf %[[XV]], %[[SHIFT]] : vector<4xf32>
// CHECK:           arith.mulf %[[D]], %[[D]] : vector<4xf32>
// CHECK:           %[[SQUARES:.*]] = vector.reduction <add>
// CHECK-NEXT:      gpu.shuffle xor %[[MEAN]], %c16_i32, %c32_i32 : f32
// CHECK-NEXT:      gpu.shuffle xor %[[SQUARES]], %c16_i32, %c32_i32 : f32
// CHECK-NOT:       divf
// CHECK-COUNT-8:   gpu.shuffle xor
// CHECK:           scf.if
// CHECK-COUNT-2:     memref.store %{{.*}}, %[[WG]]
// CHECK:           gpu.barrier
// CHECK-COUNT-2:   memref.load %[[WG]]
// CHECK-COUNT-2:   gpu.shuffle xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK-NOT:       gpu.barrier
// CHECK-NOT:       gpu.all_reduce
// CHECK:           math.rsqrt
// CHECK:           vector.store
// CHECK:           gpu.terminator

// START-LABEL: func.func @main(
// START-COUNT-3: gpu.barrier
// START-NOT:     gpu.barrier
// START-NOT:     gpu.all_reduce

// TWO-LABEL: func.func @main(
// TWO-NOT:       workgroup(
// TWO:           gpu.all_reduce add
// TWO:           gpu.all_reduce add
// TWO-NOT:       gpu.shuffle
// TWO:           gpu.terminator

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<4x256xf32>, %arg1: tensor<256xf32>, %arg2: tensor<256xf32>) -> tensor<4x256xf32> {
    %cst = arith.constant 0.000000e+00 : f64
    %cst_0 = arith.constant 0.000000e+00 : f32
    %cst_1 = arith.constant 1.000000e-05 : f64
    %cst_2 = arith.constant 2.560000e+02 : f64
    %cst_3 = arith.constant 2.560000e+02 : f32
    %0 = tensor.empty() : tensor<4x256xf64>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x256xf32>) outs(%0 : tensor<4x256xf64>) {
    ^bb0(%in: f32, %out: f64):
      %22 = arith.extf %in : f32 to f64
      linalg.yield %22 : f64
    } -> tensor<4x256xf64>
    %2 = tensor.empty() : tensor<4x1xf64>
    %3 = linalg.fill ins(%cst : f64) outs(%2 : tensor<4x1xf64>) -> tensor<4x1xf64>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x256xf64>) outs(%3 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<4x1xf64>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x1xf64>) outs(%2 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_2 : f64
      linalg.yield %22 : f64
    } -> tensor<4x1xf64>
    %6 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%1, %5 : tensor<4x256xf64>, tensor<4x1xf64>) outs(%0 : tensor<4x256xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %22 = arith.subf %in, %in_4 : f64
      linalg.yield %22 : f64
    } -> tensor<4x256xf64>
    %7 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%6, %6 : tensor<4x256xf64>, tensor<4x256xf64>) outs(%0 : tensor<4x256xf64>) {
    ^bb0(%in: f64, %in_4: f64, %out: f64):
      %22 = arith.mulf %in, %in_4 : f64
      linalg.yield %22 : f64
    } -> tensor<4x256xf64>
    %8 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%7 : tensor<4x256xf64>) outs(%3 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.addf %in, %out : f64
      linalg.yield %22 : f64
    } -> tensor<4x1xf64>
    %9 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%8 : tensor<4x1xf64>) outs(%2 : tensor<4x1xf64>) {
    ^bb0(%in: f64, %out: f64):
      %22 = arith.divf %in, %cst_2 : f64
      linalg.yield %22 : f64
    } -> tensor<4x1xf64>
    %10 = tensor.empty() : tensor<4x1xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<4x1xf64>) outs(%10 : tensor<4x1xf32>) {
    ^bb0(%in: f64, %out: f32):
      %22 = arith.truncf %in : f64 to f32
      linalg.yield %22 : f32
    } -> tensor<4x1xf32>
    %12 = linalg.fill ins(%cst_0 : f32) outs(%10 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %13 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<4x256xf32>) outs(%12 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.addf %in, %out : f32
      linalg.yield %22 : f32
    } -> tensor<4x1xf32>
    %14 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%13 : tensor<4x1xf32>) outs(%10 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.divf %in, %cst_3 : f32
      linalg.yield %22 : f32
    } -> tensor<4x1xf32>
    %15 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%11 : tensor<4x1xf32>) outs(%10 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = arith.truncf %cst_1 : f64 to f32
      %23 = arith.addf %in, %22 : f32
      linalg.yield %23 : f32
    } -> tensor<4x1xf32>
    %16 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%15 : tensor<4x1xf32>) outs(%10 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %22 = math.rsqrt %in : f32
      linalg.yield %22 : f32
    } -> tensor<4x1xf32>
    %17 = tensor.empty() : tensor<4x256xf32>
    %18 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %14 : tensor<4x256xf32>, tensor<4x1xf32>) outs(%17 : tensor<4x256xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %22 = arith.subf %in, %in_4 : f32
      linalg.yield %22 : f32
    } -> tensor<4x256xf32>
    %19 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%18, %16 : tensor<4x256xf32>, tensor<4x1xf32>) outs(%17 : tensor<4x256xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %22 = arith.mulf %in, %in_4 : f32
      linalg.yield %22 : f32
    } -> tensor<4x256xf32>
    %20 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%19, %arg1 : tensor<4x256xf32>, tensor<256xf32>) outs(%17 : tensor<4x256xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %22 = arith.mulf %in, %in_4 : f32
      linalg.yield %22 : f32
    } -> tensor<4x256xf32>
    %21 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%20, %arg2 : tensor<4x256xf32>, tensor<256xf32>) outs(%17 : tensor<4x256xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %22 = arith.addf %in, %in_4 : f32
      linalg.yield %22 : f32
    } -> tensor<4x256xf32>
    return %21 : tensor<4x256xf32>
  }
}
