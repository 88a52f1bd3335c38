// RUN: fusec-opt %s --split-input-file --fusec-narrow-f64 | FileCheck %s

// An fp32 function with an f64 sum inside (as torch-mlir writes a variance): the sum, its buffer,
// its constants and block arguments become f32, and the casts f32 -> f64 -> f32 disappear.
// CHECK-LABEL: func.func @variance_like
// CHECK-NOT:     f64
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x1xf32>
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x1xf32>)
// CHECK:         ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
// CHECK:         return %{{.*}} : tensor<4x1xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
func.func @variance_like(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x1xf64>
  %acc = linalg.fill ins(%zero : f64) outs(%e : tensor<4x1xf64>) -> tensor<4x1xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4x1xf64>) {
  ^bb0(%in: f32, %a: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %w, %a : f64
    linalg.yield %s : f64
  } -> tensor<4x1xf64>
  %e2 = tensor.empty() : tensor<4x1xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x1xf64>) outs(%e2 : tensor<4x1xf32>) {
  ^bb0(%in: f64, %o: f32):
    %n = arith.truncf %in : f64 to f32
    linalg.yield %n : f32
  } -> tensor<4x1xf32>
  return %out : tensor<4x1xf32>
}

// -----

// A model that computes in f64 on purpose (an f64 argument) is left alone.
// CHECK-LABEL: func.func @double
// CHECK:         arith.addf %{{.*}} : f64
func.func @double(%x: f64) -> f64 {
  %y = arith.addf %x, %x : f64
  return %y : f64
}
