// RUN: fusec-opt %s --split-input-file --fusec-reshapes-before-pointwise | FileCheck %s

// GroupNorm in bf16: the cast of the input, then its view as groups. The reshapes move onto the
// function's input (a view of its buffer), the cast onto the grouped shape.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @cast_then_groups
// CHECK-SAME:    (%[[X:.*]]: tensor<2x320x16x16xbf16>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0], [1], [2, 3]] : tensor<2x320x16x16xbf16> into tensor<2x320x256xbf16>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[C]] {{\[\[}}0], [1, 2], [3]] output_shape [2, 32, 10, 256] : tensor<2x320x256xbf16> into tensor<2x32x10x256xbf16>
// CHECK:         %[[INIT:.*]] = tensor.empty() : tensor<2x32x10x256xf32>
// CHECK:         %[[F:.*]] = linalg.generic {indexing_maps = [#[[ID4]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[E]] : tensor<2x32x10x256xbf16>) outs(%[[INIT]] : tensor<2x32x10x256xf32>)
// CHECK:           arith.extf
// CHECK:         return %[[F]]
func.func @cast_then_groups(%x: tensor<2x320x16x16xbf16>) -> tensor<2x32x10x256xf32> {
  %e = tensor.empty() : tensor<2x320x16x16xf32>
  %f = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x320x16x16xbf16>) outs(%e : tensor<2x320x16x16xf32>) {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x320x16x16xf32>
  %c = tensor.collapse_shape %f [[0], [1], [2, 3]] : tensor<2x320x16x16xf32> into tensor<2x320x256xf32>
  %g = tensor.expand_shape %c [[0], [1, 2], [3]] output_shape [2, 32, 10, 256] : tensor<2x320x256xf32> into tensor<2x32x10x256xf32>
  return %g : tensor<2x32x10x256xf32>
}

// -----

// A cast with another reader besides the reshape stays for it, and is computed again on the reshaped
// shape (cheap); an op of more than a cast with another reader is left alone; so is one that reads
// its loop indices.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @other_readers
// CHECK-SAME:    (%[[X:.*]]: tensor<8x6xbf16>, %[[Y:.*]]: tensor<8x6xf32>)
// CHECK:         %[[CAST:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x6xbf16>)
// CHECK:         %[[XV:.*]] = tensor.collapse_shape %[[X]] {{.*}} into tensor<48xbf16>
// CHECK:         %[[CAST2:.*]] = linalg.generic {{.*}} ins(%[[XV]] : tensor<48xbf16>)
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<8x6xf32>)
// CHECK:         %[[EV:.*]] = tensor.collapse_shape %[[EXP]]
// CHECK:         %[[IOTA:.*]] = linalg.generic
// CHECK:         %[[IV:.*]] = tensor.collapse_shape %[[IOTA]]
// CHECK:         return %[[CAST]], %[[CAST2]], %[[EXP]], %[[EV]], %[[IV]]
func.func @other_readers(%x: tensor<8x6xbf16>, %y: tensor<8x6xf32>)
    -> (tensor<8x6xf32>, tensor<48xf32>, tensor<8x6xf32>, tensor<48xf32>, tensor<48xf32>) {
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x6xbf16>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: bf16, %b: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x6xf32>
  %fv = tensor.collapse_shape %f [[0, 1]] : tensor<8x6xf32> into tensor<48xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    %x2 = math.exp %n : f32
    linalg.yield %x2 : f32
  } -> tensor<8x6xf32>
  %sv = tensor.collapse_shape %s [[0, 1]] : tensor<8x6xf32> into tensor<48xf32>
  %i = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<8x6xf32>) {
  ^bb0(%b: f32):
    %k = linalg.index 1 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    linalg.yield %kf : f32
  } -> tensor<8x6xf32>
  %iv = tensor.collapse_shape %i [[0, 1]] : tensor<8x6xf32> into tensor<48xf32>
  return %f, %fv, %s, %sv, %iv : tensor<8x6xf32>, tensor<48xf32>, tensor<8x6xf32>, tensor<48xf32>, tensor<48xf32>
}
