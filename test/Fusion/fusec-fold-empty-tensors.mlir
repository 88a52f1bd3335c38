// RUN: fusec-opt %s --split-input-file --fusec-fold-empty-tensors --canonicalize | FileCheck %s

// A pointwise op over a 3x0x4 tensor: its result holds nothing, so the function returns a
// tensor.empty and no linalg op is left to become a kernel (whose zero-size buffers the
// bare-pointer calling convention cannot type).
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT:     linalg.generic
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<3x0x4xf32>
// CHECK:         return %[[E]]
func.func @pointwise(%x: tensor<3x0x4xf32>) -> tensor<3x0x4xf32> {
  %o = tensor.empty() : tensor<3x0x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<3x0x4xf32>) outs(%o : tensor<3x0x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<3x0x4xf32>
  return %r : tensor<3x0x4xf32>
}

// -----

// A sum over the empty dim runs no iteration: its result is its init, the fill of 0.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @empty_reduction
// CHECK:         %[[F:.*]] = linalg.fill
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[F]]
func.func @empty_reduction(%x: tensor<3x0x4xf32>) -> tensor<3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<3x0x4xf32>) outs(%init : tensor<3x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// A tensor with elements is left alone.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @not_empty
// CHECK:         linalg.generic
func.func @not_empty(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %o = tensor.empty() : tensor<3x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf32>) outs(%o : tensor<3x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// A dynamic row count beside a zero-size dim: still no elements. The empty takes its row count
// from the argument (found by `fusec fuzz --dynamic-rows`: the cpu module failed to load).
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    (%[[X:.*]]: tensor<?x0x4xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x0x4xf32>
// CHECK:         return %[[E]]
func.func @dynamic_rows(%x: tensor<?x0x4xf32>) -> tensor<?x0x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x0x4xf32>
  %o = tensor.empty(%n) : tensor<?x0x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x0x4xf32>) outs(%o : tensor<?x0x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<?x0x4xf32>
  return %r : tensor<?x0x4xf32>
}
