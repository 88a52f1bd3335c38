// RUN: fusec-opt %s --split-input-file --fusec-fold-splat-constants | FileCheck %s

// torch.where(mask, torch.full_like(x, -inf), x): the -inf tensor is read as the scalar -inf, so no
// constant buffer is left for the host to provide (a memref.get_global the manifest cannot express).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @mask
// CHECK:         linalg.generic {indexing_maps = [#map, #map, #map]{{.*}} ins(%arg0, %arg1 : tensor<8x64xi1>, tensor<8x64xf32>)
// CHECK-NEXT:    ^bb0(%[[M:.*]]: i1, %[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:      arith.select %[[M]], %[[NINF]], %[[X]] : f32
func.func @mask(%m: tensor<8x64xi1>, %x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %ninf = arith.constant dense<0xFF800000> : tensor<8x64xf32>
  %o = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %ninf, %x : tensor<8x64xi1>, tensor<8x64xf32>, tensor<8x64xf32>) outs(%o : tensor<8x64xf32>) {
  ^bb0(%a: i1, %b: f32, %c: f32, %out: f32):
    %s = arith.select %a, %b, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// The sum of a tensor of ones: the constant is the only operand that gives the reduced loop its
// extent, so it stays.
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @only_extent
// CHECK:         %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<8x64xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[ONES]] : tensor<8x64xf32>)
func.func @only_extent(%init: tensor<8xf32>) -> tensor<8xf32> {
  %ones = arith.constant dense<1.0> : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%ones : tensor<8x64xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
