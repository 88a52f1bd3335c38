// RUN: fusec-opt %s --split-input-file --fusec-bound-gather-indices | FileCheck %s

// torch-mlir's embedding: two asserts on the token id, then the read. The asserts go and the id is
// clamped into [0, 999]; the column index (a loop index) is left as it is.
// CHECK-LABEL: func.func @embedding
// CHECK-NOT:     cf.assert
// CHECK:         %[[I:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[J:.*]] = linalg.index 1 : index
// CHECK:         %[[LO:.*]] = arith.maxsi %[[I]], %{{.*}} : index
// CHECK:         %[[IN:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK:         tensor.extract %{{.*}}[%[[IN]], %[[J]]] : tensor<1000x64xf32>
#map = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @embedding(%ids: tensor<8xi64>, %w: tensor<1000x64xf32>) -> tensor<8x64xf32> {
  %c1000 = arith.constant 1000 : index
  %c0_i64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#map, #id], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<8xi64>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 1 : index
    %lt = arith.cmpi slt, %i, %c1000 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %w[%i, %j] : tensor<1000x64xf32>
    linalg.yield %v : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// An assert that checks no index (here: the data itself) is kept, for the linalg stage's check to
// refuse by name.
// CHECK-LABEL: func.func @other_assert
// CHECK:         cf.assert
#id = affine_map<(d0) -> (d0)>
func.func @other_assert(%x: tensor<8xi64>) -> tensor<8xi64> {
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8xi64>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xi64>) outs(%e : tensor<8xi64>) {
  ^bb0(%in: i64, %out: i64):
    %ne = arith.cmpi ne, %in, %c0 : i64
    cf.assert %ne, "must not be zero"
    linalg.yield %in : i64
  } -> tensor<8xi64>
  return %r : tensor<8xi64>
}
