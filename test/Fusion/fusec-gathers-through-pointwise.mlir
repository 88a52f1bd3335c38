// RUN: fusec-opt %s --fusec-gathers-through-pointwise --canonicalize | FileCheck %s

// Cross-entropy's pick: log_softmax's element at (i, t_i) is x[i, t_i] - lse[i, 0], so the gather
// reads x and lse there and subtracts; the [64, 1000] log_softmax is no longer computed.
// CHECK-LABEL: func.func @pick
// CHECK-SAME:    (%[[X:.*]]: tensor<64x1000xf32>, %[[LSE:.*]]: tensor<64x1xf32>, %[[T:.*]]: tensor<64xi64>)
// CHECK-NOT:     arith.subf
// CHECK:         linalg.generic
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[C:.*]] = arith.index_cast
// CHECK-DAG:       %[[A:.*]] = tensor.extract %[[X]][%[[I]], %[[C]]] : tensor<64x1000xf32>
// CHECK-DAG:       %[[B:.*]] = tensor.extract %[[LSE]][%[[I]], %{{.*}}] : tensor<64x1xf32>
// CHECK:           %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK:           linalg.yield %[[D]] : f32
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#one = affine_map<(d0) -> (d0)>
func.func @pick(%x: tensor<64x1000xf32>, %lse: tensor<64x1xf32>, %t: tensor<64xi64>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64x1000xf32>
  %logp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %lse : tensor<64x1000xf32>, tensor<64x1xf32>) outs(%e : tensor<64x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<64x1000xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%t : tensor<64xi64>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %in : i64 to index
    %v = tensor.extract %logp[%i, %c] : tensor<64x1000xf32>
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
