// RUN: fusec-opt %s --fusec-inline-broadcast-producers | FileCheck %s

// LayerNorm's shapes, which the cost model fuses as they are: an op at the reduced shape (one value
// per row: rsqrt of the sum) and ops over the whole rows (x * r, then + 1) stay. An op between the
// two (the row's value times a per-column weight at [8, 4, 1]) is computed in its larger readers:
// `s` in `y` (each read composes its maps: s's (d0, 0, 0) read at (d0, d1, 0) of y is (d0, 0, 0)).
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
#mid = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#col = affine_map<(d0, d1, d2) -> (0, d1, 0)>
// CHECK-LABEL: func.func @between_shapes
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4x16xf32>, %[[W:.*]]: tensor<1x4x1xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}"reduction"
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8x1x1xf32>)
// CHECK:           math.rsqrt
// CHECK:         %[[XR:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[R]] :
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%[[XR]] :
// CHECK-NOT:     -> tensor<8x4x1xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[R]], %[[W]] : tensor<8x4x16xf32>, tensor<8x1x1xf32>, tensor<1x4x1xf32>)
// CHECK:           %[[S:.*]] = arith.mulf
// CHECK:           arith.mulf %{{.*}}, %[[S]]
// CHECK:         return %[[Y]]
func.func @between_shapes(%x: tensor<8x4x16xf32>, %w: tensor<1x4x1xf32>) -> tensor<8x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e1 = tensor.empty() : tensor<8x1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x1x1xf32>) -> tensor<8x1x1xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<8x4x16xf32>) outs(%f : tensor<8x1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<8x1x1xf32>) outs(%e1 : tensor<8x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %q = math.rsqrt %a : f32
    linalg.yield %q : f32
  } -> tensor<8x1x1xf32>
  %e3 = tensor.empty() : tensor<8x4x16xf32>
  %xr = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r : tensor<8x4x16xf32>, tensor<8x1x1xf32>) outs(%e3 : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%xr : tensor<8x4x16xf32>) outs(%e3 : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %one : f32
    linalg.yield %m : f32
  } -> tensor<8x4x16xf32>
  %e2 = tensor.empty() : tensor<8x4x1xf32>
  %s = linalg.generic {indexing_maps = [#row, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %w : tensor<8x1x1xf32>, tensor<1x4x1xf32>) outs(%e2 : tensor<8x4x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4x1xf32>
  %y = linalg.generic {indexing_maps = [#id3, #mid, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %s : tensor<8x4x16xf32>, tensor<8x4x1xf32>) outs(%e3 : tensor<8x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x4x16xf32>
  return %y : tensor<8x4x16xf32>
}
