// --fusec-classify-ops on the generics layout ops become (--fusec-fold-layout-ops,
// --fusec-concat-to-generic): reading through an index map keeps an all-parallel op fusable
// (broadcast); a reduction that reads so stays opaque. A body that reads a tensor at computed
// indices (torch-mlir's flip, before --fusec-extracts-to-index-maps) is a gather: fusable too.

// RUN: fusec-opt %s --fusec-classify-ops | FileCheck %s

// CHECK-LABEL: func.func @kinds
// CHECK:         %[[SLICE:.*]] = linalg.generic {{.*}} attrs = {fusec.kind = "broadcast"}
// CHECK:         %[[CAT:.*]] = linalg.generic {{.*}} attrs = {fusec.concat, fusec.kind = "broadcast"}
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} attrs = {fusec.kind = "opaque"}
// CHECK:         %[[FLIP:.*]] = linalg.generic {{.*}} attrs = {fusec.kind = "broadcast"}
// CHECK:           tensor.extract
// CHECK:         return %[[SLICE]], %[[CAT]], %[[SUM]], %[[FLIP]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#hi = affine_map<(d0, d1) -> (d0, d1 + 64)>
#lo = affine_map<(d0, d1) -> (d0, d1 mod 64)>
#wrap = affine_map<(d0, d1) -> (d0, (d1 - 64) mod 64)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @kinds(%x: tensor<8x128xf32>) -> (tensor<8x64xf32>, tensor<8x128xf32>, tensor<8xf32>, tensor<8x128xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %slice = linalg.generic {indexing_maps = [#hi, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x128xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.negf %a : f32
    linalg.yield %0 : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8x128xf32>
  %cat = linalg.generic {indexing_maps = [#lo, #wrap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%slice, %slice : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e2 : tensor<8x128xf32>) attrs = {fusec.concat} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 1 : index
    %c64 = arith.constant 64 : index
    %first = arith.cmpi ult, %i, %c64 : index
    %v = arith.select %first, %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<8x128xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #hi, #row], iterator_types = ["parallel", "reduction"]}
      ins(%slice, %x : tensor<8x64xf32>, tensor<8x128xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %0 = arith.addf %p, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %flip = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e2 : tensor<8x128xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c127 = arith.constant 127 : index
    %k = arith.subi %c127, %j : index
    %v = tensor.extract %x[%i, %k] : tensor<8x128xf32>
    linalg.yield %v : f32
  } -> tensor<8x128xf32>
  return %slice, %cat, %sum, %flip : tensor<8x64xf32>, tensor<8x128xf32>, tensor<8xf32>, tensor<8x128xf32>
}
