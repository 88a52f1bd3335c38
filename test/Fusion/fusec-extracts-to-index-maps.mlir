// RUN: fusec-opt %s --split-input-file --fusec-extracts-to-index-maps | FileCheck %s

// torch-mlir's torch.flip(x, -1): the extract at (i, 31 - j) becomes an input read through
// `(d0, -d1 + 31)`; the unused input, the loop indices and their arithmetic go.
// CHECK-DAG:   #[[FLIP:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 31)>
// CHECK-LABEL: func.func @flip
// CHECK-SAME:    (%[[X:.*]]: tensor<16x32xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]] : tensor<16x32xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK-NOT:     tensor.extract
// CHECK-NOT:     linalg.index
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @flip(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %c31 = arith.constant 31 : index
  %cst = arith.constant 0.0 : f32
  %2 = tensor.empty() : tensor<16x32xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<16x32xf32>) outs(%4 : tensor<16x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %21 = linalg.index 0 : index
    %22 = linalg.index 1 : index
    %23 = arith.subi %c31, %22 : index
    %extracted = tensor.extract %arg0[%21, %23] : tensor<16x32xf32>
    linalg.yield %extracted : f32
  } -> tensor<16x32xf32>
  return %5 : tensor<16x32xf32>
}

// -----

// An embedding's extract at a token id read from data is a gather: left as it is.
// CHECK-LABEL: func.func @gather
// CHECK:         %[[I:.*]] = arith.index_cast
// CHECK:         tensor.extract %{{.*}}[%[[I]], %{{.*}}] : tensor<100x8xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @gather(%w: tensor<100x8xf32>, %ids: tensor<4xi64>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, #map], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<4xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %w[%i, %j] : tensor<100x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
