// --fusec-split-column-sums with `slices=32 min-rows=512`, as the cuda target runs it when column
// kernels are sliced (`column_slices` other than 1): the column schedule may give an output vector
// 32 threads (slices of a block), so a column sum is split into longer blocks of rows, fewer
// partials, and sums of fewer than 512 rows are left to one sliced kernel.

// RUN: fusec-opt %s --split-input-file '--fusec-split-column-sums=slices=32 min-rows=512' | FileCheck %s
// RUN: fusec-opt %s --split-input-file '--fusec-split-column-sums=slices=32 min-rows=512 threads=1024' | FileCheck %s --check-prefix=FEW

// 32768x4096: 1024 column vectors of 4. The column schedule gives an output vector up to 32 threads
// (slices of a block), so b = 2048 (16 x 1024 vectors x 32 slices, 64 rows a thread), then the 16
// partials summed into the original init: two kernels.
// CHECK-LABEL: func.func @col
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [16, 2048, 4096] : tensor<32768x4096xf32> into tensor<16x2048x4096xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x4096xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[ID3:.*]], #[[OUT3:.*]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<16x2048x4096xf32>) outs(%[[Z]] : tensor<16x4096xf32>)
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[P]] : tensor<16x4096xf32>) outs(%arg1 : tensor<4096xf32>)
// CHECK:         return %[[S]]
// FEW-LABEL:   func.func @col
// FEW-NOT:       tensor.expand_shape
// FEW-COUNT-1:   linalg.generic
// FEW-NOT:       linalg.generic
// FEW:           return
func.func @col(%x: tensor<32768x4096xf32>, %init: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]} ins(%x : tensor<32768x4096xf32>) outs(%init : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// -----

// A bias gradient over [B, T, C] = [64, 512, 768]: a block of 2048 rows or fewer is T whole, so
// only B's 64 become the partials, then their sum.
// CHECK-LABEL: func.func @bias
// CHECK-NOT:     tensor.expand_shape
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<64x768xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[P]] : tensor<64x768xf32>) outs(%arg1 : tensor<768xf32>)
func.func @bias(%g: tensor<64x512x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                       iterator_types = ["reduction", "reduction", "parallel"]} ins(%g : tensor<64x512x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %r : tensor<768xf32>
}

// -----

// [8, 8192, 768]: T read as [8, 1024]; the [8, 8] partials are collapsed into one dim of 64 (a view),
// whose sum is the second kernel.
// CHECK-LABEL: func.func @bias_long
// CHECK:         tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [8, 8, 1024, 768]
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<8x8x768xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2]] : tensor<8x8x768xf32> into tensor<64x768xf32>
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[C]] : tensor<64x768xf32>) outs(%arg1 : tensor<768xf32>)
func.func @bias_long(%g: tensor<8x8192x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                       iterator_types = ["reduction", "reduction", "parallel"]} ins(%g : tensor<8x8192x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %r : tensor<768xf32>
}

// -----

// A pointwise producer (bf16 -> f32, the upcast) is rebuilt over the split dim, so it still fuses
// with the partial sum: the bf16 input is what is reshaped.
// CHECK-LABEL: func.func @upcast
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{.*}} : tensor<32768x4096xbf16> into tensor<16x2048x4096xbf16>
// CHECK:         %[[F:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[E]] : tensor<16x2048x4096xbf16>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extf
// CHECK:         linalg.generic {{.*}} ins(%[[F]] : tensor<16x2048x4096xf32>) outs(%{{.*}} : tensor<16x4096xf32>)
// CHECK-NOT:     tensor.expand_shape {{.*}}xf32> into tensor<16x2048x4096xf32>
func.func @upcast(%x: tensor<32768x4096xbf16>, %init: tensor<4096xf32>) -> tensor<4096xf32> {
  %e = tensor.empty() : tensor<32768x4096xf32>
  %f = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x : tensor<32768x4096xbf16>) outs(%e : tensor<32768x4096xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %w = arith.extf %a : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<32768x4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]} ins(%f : tensor<32768x4096xf32>) outs(%init : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// -----

// Left alone: a row sum (the innermost dim reduced), few rows (8 < min-rows), a column max, and a
// column sum read back over the rows (x - x.mean(0): the normalization's kernels decide).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return
func.func @left_alone(%x: tensor<32768x4096xf32>, %y: tensor<8x4096xf32>, %i0: tensor<32768xf32>,
                      %i1: tensor<4096xf32>, %i2: tensor<4096xf32>, %i3: tensor<4096xf32>)
    -> (tensor<32768xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<32768x4096xf32>) {
  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                          iterator_types = ["parallel", "reduction"]} ins(%x : tensor<32768x4096xf32>) outs(%i0 : tensor<32768xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<32768xf32>
  %few = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]} ins(%y : tensor<8x4096xf32>) outs(%i1 : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]} ins(%x : tensor<32768x4096xf32>) outs(%i2 : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]} ins(%x : tensor<32768x4096xf32>) outs(%i3 : tensor<4096xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4096xf32>
  %e = tensor.empty() : tensor<32768x4096xf32>
  %centered = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                              iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<32768x4096xf32>, tensor<4096xf32>) outs(%e : tensor<32768x4096xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<32768x4096xf32>
  return %rows, %few, %max, %centered : tensor<32768xf32>, tensor<4096xf32>, tensor<4096xf32>, tensor<32768x4096xf32>
}
