// RUN: fusec-opt %s --split-input-file --fusec-fold-unit-reshapes | FileCheck %s

// An expand_shape that only adds a unit dim: the consumer reads the source through `(d0)`.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @expand
// CHECK-SAME:    (%[[X:.*]]: tensor<8x64xf32>, %[[M:.*]]: tensor<8xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]]
// CHECK-SAME:      ins(%[[X]], %[[M]] : tensor<8x64xf32>, tensor<8xf32>)
func.func @expand(%x: tensor<8x64xf32>, %m: tensor<8xf32>, %o: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %e = tensor.expand_shape %m [[0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %e : tensor<8x64xf32>, tensor<8x1xf32>) outs(%o : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// A collapse_shape that drops a unit dim: the consumer reads the source at `(d0, 0)`.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[ROW:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @collapse
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]], #{{.*}}]
// CHECK-SAME:      tensor<8x1xf32>
func.func @collapse(%x: tensor<8x64xf32>, %m: tensor<8x1xf32>, %o: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %c = tensor.collapse_shape %m [[0, 1]] : tensor<8x1xf32> into tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<8x64xf32>, tensor<8xf32>) outs(%o : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// A reshape that moves data between dims is not a unit-dim reshape: it stays.
// CHECK-LABEL: func.func @real_reshape
// CHECK:         tensor.expand_shape
func.func @real_reshape(%m: tensor<64xf32>, %o: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.expand_shape %m [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<8x8xf32>) outs(%o : tensor<8x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// A collapse_shape of a 1x1 tensor to 0-d has no reassociation groups: both source dims are read at 0
// (the pass built an AffineMap of None exprs: "Invalid expression (None?)", found by
// `fusec fuzz --target cuda` seed 35 on a rms_norm over a float32[1, 1] input's scalar).
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-DAG:   #[[ZERO:.*]] = affine_map<(d0, d1) -> (0, 0)>
// CHECK-LABEL: func.func @collapse_to_scalar
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[S:.*]]: tensor<1x1xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #[[ZERO]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[S]] : tensor<4x8xf32>, tensor<1x1xf32>)
func.func @collapse_to_scalar(%x: tensor<4x8xf32>, %s: tensor<1x1xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = tensor.collapse_shape %s [] : tensor<1x1xf32> into tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<4x8xf32>, tensor<f32>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %d: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
