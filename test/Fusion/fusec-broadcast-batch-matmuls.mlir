// RUN: fusec-opt %s --split-input-file --fusec-broadcast-batch-matmuls | FileCheck %s

// nn.Linear on a 3-d input as torch-mlir lowers it: the weight broadcast over the batch (a copy per
// batch) and a batched matmul. After: x's batch and rows collapsed, one matmul reading the one
// weight, its accumulator's fill at the new shape, the result expanded back; the broadcast is gone.
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME:      (%[[X:.*]]: tensor<2x16x64xf32>, %[[WT:.*]]: tensor<64x96xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<2x16x64xf32> into tensor<32x64xf32>
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x96xf32>)
// CHECK:         %[[P:.*]] = linalg.matmul {{.*}}ins(%[[ROWS]], %[[WT]] : tensor<32x64xf32>, tensor<64x96xf32>) outs(%[[ACC]] : tensor<32x96xf32>)
// CHECK:         %[[Y:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [2, 16, 96] : tensor<32x96xf32> into tensor<2x16x96xf32>
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         return %[[Y]]
#w = affine_map<(d0, d1, d2) -> (d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @linear_3d(%x: tensor<2x16x64xf32>, %wt: tensor<64x96xf32>) -> tensor<2x16x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x64x96xf32>
  %wb = linalg.generic {indexing_maps = [#w, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%wt : tensor<64x96xf32>) outs(%e : tensor<2x64x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x64x96xf32>
  %e2 = tensor.empty() : tensor<2x16x96xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x16x96xf32>) -> tensor<2x16x96xf32>
  %y = linalg.batch_matmul ins(%x, %wb : tensor<2x16x64xf32>, tensor<2x64x96xf32>) outs(%acc : tensor<2x16x96xf32>) -> tensor<2x16x96xf32>
  return %y : tensor<2x16x96xf32>
}

// -----

// Left as they are: a B that differs along the batch (attention's k), and a B broadcast along
// another dim than the batch.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-NOT:     linalg.matmul
#w = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @left_alone(%q: tensor<2x16x64xf32>, %k: tensor<2x64x16xf32>, %v: tensor<2x16xf32>) -> (tensor<2x16x16xf32>, tensor<2x16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<2x16x64xf32>, tensor<2x64x16xf32>) outs(%acc : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %e3 = tensor.empty() : tensor<2x16x16xf32>
  %vb = linalg.generic {indexing_maps = [#w, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x16xf32>) outs(%e3 : tensor<2x16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x16xf32>
  %t = linalg.batch_matmul ins(%s, %vb : tensor<2x16x16xf32>, tensor<2x16x16xf32>) outs(%acc : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  return %s, %t : tensor<2x16x16xf32>, tensor<2x16x16xf32>
}
