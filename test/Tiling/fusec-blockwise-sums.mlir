// --fusec-blockwise-sums (cpu target): a float sum of more than `block` elements becomes a sum into
// partials over the innermost reduced dim, then a sum of the partials into the original output.

// RUN: fusec-opt %s --fusec-blockwise-sums | FileCheck %s

// A whole 512x1024 tensor: 512 partials of 1024, then one sum of 512 from the original init.
// CHECK-LABEL: func.func @whole
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : tensor<512xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<512x1024xf32>) outs(%[[ZERO]] : tensor<512xf32>)
// CHECK:           math.fpowi
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<512xf32>) outs(%arg1 : tensor<f32>)
func.func @whole(%x: tensor<512x1024xf32>, %init: tensor<f32>) -> tensor<f32> {
  %c2 = arith.constant 2 : i64
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]} ins(%x : tensor<512x1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = math.fpowi %a, %c2 : f32, i64
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Rows of 8192: each row read as [2, 4096], 2 partials per row, then a sum of them.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 2, 4096] : tensor<4x8192xf32> into tensor<4x2x4096xf32>
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[E]] : tensor<4x2x4096xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[P]] : tensor<4x2xf32>) outs(%arg1 : tensor<4xf32>)
func.func @rows(%x: tensor<4x8192xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Left alone: a max (it rounds nothing), a short sum, and a prime length (no divisor to block it by).
// CHECK-LABEL: func.func @alone
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @alone(%x: tensor<4x8192xf32>, %y: tensor<4x1000xf32>, %z: tensor<4x8191xf32>, %init: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %short = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x1000xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %prime = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]} ins(%z : tensor<4x8191xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %m, %short, %prime : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
