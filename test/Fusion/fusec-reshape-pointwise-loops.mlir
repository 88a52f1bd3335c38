// RUN: fusec-opt %s --split-input-file --fusec-reshape-pointwise-loops | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-reshape-pointwise-loops --fusec-inline-broadcast-producers | FileCheck %s --check-prefix=INLINE

// GroupNorm(32, 320)'s normalization, cut down: a statistic per (sample, group), a scale per
// (sample, group, channel), and `x * scale + bias` at [N, C, H, W] reading the scale through a
// collapse. The op moves to the statistics' shape [2, 32, 10, 64]: x through the view the
// statistics read, the scale directly, the bias at `d1 * 10 + d2`; its result is reshaped back.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#chan = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#per_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[SCALE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// CHECK-DAG:   #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1 * 10 + d2)>
// CHECK-LABEL: func.func @group_scale
// CHECK-SAME:    (%[[X:.*]]: tensor<2x320x8x8xf32>, %[[W:.*]]: tensor<1x32x10x1xf32>, %[[B:.*]]: tensor<320xf32>)
// CHECK:         %[[V:.*]] = tensor.expand_shape {{.*}} into tensor<2x32x10x64xf32>
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<2x32x1x1xf32>, tensor<1x32x10x1xf32>)
// CHECK-NOT:     tensor.collapse_shape %[[S]]
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[SCALE]], #[[BIAS]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[V]], %[[S]], %[[B]] : tensor<2x32x10x64xf32>, tensor<2x32x10x1xf32>, tensor<320xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0, 1, 2, 3]] : tensor<2x32x10x64xf32> into tensor<40960xf32>
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2, 3]] output_shape [2, 320, 8, 8]
// CHECK:         return %[[OUT]]

// The scale, a product of the statistic and the weight at a shape between the statistic's and the
// tensor's, is computed inside the normalization instead (the cost model fuses ops of those two).
// INLINE-DAG:   #[[ROWS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
// INLINE-DAG:   #[[CHAN:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>
// INLINE-LABEL: func.func @group_scale
// INLINE-SAME:    (%[[X:.*]]: tensor<2x320x8x8xf32>, %[[W:.*]]: tensor<1x32x10x1xf32>, %[[B:.*]]: tensor<320xf32>)
// INLINE:         %[[V:.*]] = tensor.expand_shape {{.*}} into tensor<2x32x10x64xf32>
// INLINE:         %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// INLINE-NOT:     -> tensor<2x32x10x1xf32>
// INLINE:         linalg.generic {{.*}}#[[ROWS]], #[[CHAN]]
// INLINE-SAME:      ins(%[[V]], %[[B]], %[[SUM]], %[[W]] :
// INLINE:           %[[SC:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// INLINE:           arith.mulf %{{.*}}, %[[SC]] : f32
// INLINE:           arith.addf
func.func @group_scale(%x: tensor<2x320x8x8xf32>, %w: tensor<1x32x10x1xf32>, %b: tensor<320xf32>) -> tensor<2x320x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c = tensor.collapse_shape %x [[0], [1], [2, 3]] : tensor<2x320x8x8xf32> into tensor<2x320x64xf32>
  %v = tensor.expand_shape %c [[0], [1, 2], [3]] output_shape [2, 32, 10, 64] : tensor<2x320x64xf32> into tensor<2x32x10x64xf32>
  %e1 = tensor.empty() : tensor<2x32x1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x32x1x1xf32>) -> tensor<2x32x1x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%v : tensor<2x32x10x64xf32>) outs(%f : tensor<2x32x1x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x32x1x1xf32>
  %e2 = tensor.empty() : tensor<2x32x10x1xf32>
  %scale = linalg.generic {indexing_maps = [#rows, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sum, %w : tensor<2x32x1x1xf32>, tensor<1x32x10x1xf32>) outs(%e2 : tensor<2x32x10x1xf32>) {
  ^bb0(%a: f32, %b2: f32, %o: f32):
    %m = arith.mulf %a, %b2 : f32
    linalg.yield %m : f32
  } -> tensor<2x32x10x1xf32>
  %sc = tensor.collapse_shape %scale [[0], [1, 2], [3]] : tensor<2x32x10x1xf32> into tensor<2x320x1xf32>
  %e3 = tensor.empty() : tensor<2x320x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #per_c, #bias, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sc, %b : tensor<2x320x8x8xf32>, tensor<2x320x1xf32>, tensor<320xf32>) outs(%e3 : tensor<2x320x8x8xf32>) {
  ^bb0(%a: f32, %s: f32, %bb: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    %r = arith.addf %m, %bb : f32
    linalg.yield %r : f32
  } -> tensor<2x320x8x8xf32>
  return %y : tensor<2x320x8x8xf32>
}

// -----

// Left alone: an operand at the op's own index computed by more than a cast (its reshape would be a
// new boundary after that op), and an op whose result an elementwise op reads that a reduction reads
// (the reduction cannot follow to [2, 2, 6]: the boundary would move from before the add into the
// kernel of the add, the square and the sum).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bc3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @left_alone
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2x6xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[WIDE]]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[FLAT]] : tensor<4x6xf32>, tensor<4x6xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[FLAT]] : tensor<4x6xf32>, tensor<4x6xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[P]] : tensor<4x6xf32>, tensor<4x6xf32>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK:         linalg.generic {{.*}}"reduction"{{.*}} ins(%[[SQ]] :
func.func @left_alone(%x: tensor<4x6xf32>, %y: tensor<2x2xf32>) -> (tensor<4x6xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<2x2x6xf32>
  %wide = linalg.generic {indexing_maps = [#bc3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x2xf32>) outs(%e : tensor<2x2x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2x6xf32>
  %flat = tensor.collapse_shape %wide [[0, 1], [2]] : tensor<2x2x6xf32> into tensor<4x6xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    %x2 = math.exp %n : f32
    linalg.yield %x2 : f32
  } -> tensor<4x6xf32>
  %z = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %flat : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %flat : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %p : tensor<4x6xf32>, tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x6xf32>) outs(%f4 : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %z, %s : tensor<4x6xf32>, tensor<4xf32>
}

// -----

// A chain: GroupNorm's output at [N, C, H, W], then SiLU of it. The SiLU reads the first op's result
// through the reshape back: it moves to the same shape and reads that result directly.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#per_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
// CHECK-LABEL: func.func @chain
// CHECK:         %[[N:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x3x25xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} ins(%[[N]] : tensor<2x4x3x25xf32>) outs(%{{.*}} : tensor<2x4x3x25xf32>)
// CHECK:         tensor.collapse_shape %[[S]] {{.*}} into tensor<600xf32>
func.func @chain(%x: tensor<2x12x5x5xf32>, %t: tensor<2x4x3x7xf32>) -> tensor<2x12x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3x1xf32>) -> tensor<2x4x3x1xf32>
  %scale = linalg.generic {indexing_maps = [#id4, #last], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%t : tensor<2x4x3x7xf32>) outs(%f : tensor<2x4x3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x3x1xf32>
  %sc = tensor.collapse_shape %scale [[0], [1, 2], [3]] : tensor<2x4x3x1xf32> into tensor<2x12x1xf32>
  %e2 = tensor.empty() : tensor<2x12x5x5xf32>
  %n = linalg.generic {indexing_maps = [#id4, #per_c, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sc : tensor<2x12x5x5xf32>, tensor<2x12x1xf32>) outs(%e2 : tensor<2x12x5x5xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x12x5x5xf32>
  %silu = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%n : tensor<2x12x5x5xf32>) outs(%e2 : tensor<2x12x5x5xf32>) {
  ^bb0(%a: f32, %o: f32):
    %neg = arith.negf %a : f32
    %ex = math.exp %neg : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %ex, %one : f32
    %r = arith.divf %a, %den : f32
    linalg.yield %r : f32
  } -> tensor<2x12x5x5xf32>
  return %silu : tensor<2x12x5x5xf32>
}

// -----
// Dynamic rows (a symbolic batch): the bias add of a linear over [?, 256] (batch * 128 rows) and a
// multiply over [?, 128, 256] that reads it through an expand. The op moves to [?, 256], reading the
// sum directly; F's rows are the op's rows times 128 (`tensor.dim` of its output), and its result
// is reshaped back with the op's own rows. The cost model then fuses the two (one kernel, not two).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    (%[[X:.*]]: tensor<?x256xf32>, %[[B:.*]]: tensor<256xf32>, %[[ROWS:.*]]: index)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[B]] :
// CHECK:         %[[R:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x128x256xf32>
// CHECK:         %[[FR:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK:         %[[E:.*]] = tensor.empty(%[[FR]]) : tensor<?x256xf32>
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<?x256xf32>) outs(%[[E]] : tensor<?x256xf32>)
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[Y]] {{\[\[}}0, 1]] : tensor<?x256xf32> into tensor<?xf32>
// CHECK:         %[[OUT:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [%[[R]], 128, 256]
// CHECK:         return %[[OUT]]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @dynamic_rows(%x: tensor<?x256xf32>, %b: tensor<256xf32>, %batch: index) -> tensor<?x128x256xf32> {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty(%rows) : tensor<?x256xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x256xf32>, tensor<256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<?x256xf32>
  %v = tensor.expand_shape %sum [[0, 1], [2]] output_shape [%batch, 128, 256] : tensor<?x256xf32> into tensor<?x128x256xf32>
  %e3 = tensor.empty(%batch) : tensor<?x128x256xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<?x128x256xf32>) outs(%e3 : tensor<?x128x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %a, %half : f32
    linalg.yield %m : f32
  } -> tensor<?x128x256xf32>
  return %y : tensor<?x128x256xf32>
}
