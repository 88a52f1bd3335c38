// RUN: fusec-opt %s --split-input-file --fusec-erase-unused-results | FileCheck %s

// max(x, dim) as torch-mlir lowers it: the maximum and its index. Only the maximum is used, so the
// index output, its map, its block argument and the ops that computed it go.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmax_unused
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:      ins(%{{.*}} : tensor<8x64xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
// CHECK-NOT:     linalg.index
// CHECK:         return %[[R]]
func.func @argmax_unused(%x: tensor<8x64xf32>, %m0: tensor<8xf32>, %i0: tensor<8xi64>) -> tensor<8xf32> {
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%m0, %i0 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %idx = linalg.index 1 : index
    %idx64 = arith.index_cast %idx : index to i64
    %max = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %idx64, %i : i64
    linalg.yield %max, %sel : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  return %r#0 : tensor<8xf32>
}

// -----

// Both results used: nothing changes.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @both_used
// CHECK:         %{{.*}}:2 = linalg.generic
func.func @both_used(%x: tensor<8x64xf32>, %m0: tensor<8xf32>, %i0: tensor<8xi64>) -> (tensor<8xf32>, tensor<8xi64>) {
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%m0, %i0 : tensor<8xf32>, tensor<8xi64>) {
  ^bb0(%in: f32, %m: f32, %i: i64):
    %idx = linalg.index 1 : index
    %idx64 = arith.index_cast %idx : index to i64
    %max = arith.maximumf %in, %m : f32
    %gt = arith.cmpf ogt, %in, %m : f32
    %sel = arith.select %gt, %idx64, %i : i64
    linalg.yield %max, %sel : f32, i64
  } -> (tensor<8xf32>, tensor<8xi64>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xi64>
}

// -----

// The used result reads the other result's accumulator: not separable, left alone.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @entangled
// CHECK:         %{{.*}}:2 = linalg.generic
func.func @entangled(%x: tensor<8x64xf32>, %a0: tensor<8xf32>, %b0: tensor<8xf32>) -> tensor<8xf32> {
  %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%a0, %b0 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%in: f32, %a: f32, %b: f32):
    %s = arith.addf %in, %b : f32
    %t = arith.addf %s, %a : f32
    linalg.yield %t, %s : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0 : tensor<8xf32>
}
