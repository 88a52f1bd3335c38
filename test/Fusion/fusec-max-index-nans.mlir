// RUN: fusec-opt %s --split-input-file --fusec-max-index-nans | FileCheck %s

// max_pool's indices as torch-mlir computes them: the first window element equal to the max. A NaN
// max equals nothing, so the index stayed -1; now a NaN element's own index is taken, over what the
// elements before chose (eager's loop: the last NaN of the window).
// CHECK-LABEL: func.func @pool_indices
// CHECK:         %[[K:.*]] = arith.index_cast
// CHECK-NEXT:    %[[EQ:.*]] = arith.cmpf oeq, %[[E:.*]], %{{.*}} : f32
// CHECK-NEXT:    %[[PICK:.*]] = arith.select %[[EQ]], %[[K]], %[[OUT:.*]] : i64
// CHECK-NEXT:    %[[FIRST:.*]] = arith.cmpi eq, %[[OUT]]
// CHECK-NEXT:    %[[R:.*]] = arith.select %[[FIRST]], %[[PICK]], %[[OUT]] : i64
// CHECK-NEXT:    %[[NAN:.*]] = arith.cmpf uno, %[[E]], %[[E]] : f32
// CHECK-NEXT:    %[[LAST:.*]] = arith.select %[[NAN]], %[[K]], %[[R]] : i64
// CHECK-NEXT:    linalg.yield %[[LAST]] : i64
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @pool_indices(%x: tensor<4x3xf32>) -> tensor<4xi64> {
  %ninf = arith.constant 0xFF800000 : f32
  %m1 = arith.constant -1 : i64
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#map1, #map], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fi = linalg.fill ins(%m1 : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %idx = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "reduction"]}
      ins(%max, %x : tensor<4xf32>, tensor<4x3xf32>) outs(%fi : tensor<4xi64>) {
  ^bb0(%mx: f32, %el: f32, %out: i64):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i64
    %eq = arith.cmpf oeq, %el, %mx : f32
    %s = arith.select %eq, %ki, %out : i64
    %first = arith.cmpi eq, %out, %m1 : i64
    %r = arith.select %first, %s, %out : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  return %idx : tensor<4xi64>
}

// -----

// An equality against something that is not a max (here the input itself) is left alone.
// CHECK-LABEL: func.func @not_a_max
// CHECK-NOT:     arith.cmpf uno
#map = affine_map<(d0) -> (d0)>
func.func @not_a_max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi64> {
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<4xi64>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: f32, %b: f32, %out: i64):
    %eq = arith.cmpf oeq, %a, %b : f32
    %s = arith.select %eq, %one, %z : i64
    linalg.yield %s : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}
