// --fusec-split-column-sums: a float sum over outer dims (a column sum: the innermost dim kept) whose
// kernel would have too few threads becomes partial column sums over blocks of b rows, laid out
// [R / b, C] (the columns stay innermost), then the sum of the partials, split again while it is long.
// The cuda target runs it before fusion, with its defaults.

// RUN: fusec-opt %s --split-input-file --fusec-split-column-sums | FileCheck %s
// RUN: fusec-opt %s --split-input-file '--fusec-split-column-sums=threads=1024' | FileCheck %s --check-prefix=FEW

// 32768x4096: 1024 column vectors of 4. b = 64 (512 x 1024 threads), then 512 partials in blocks of
// 32, then 16 of them summed into the original init.
// CHECK-LABEL: func.func @col
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [512, 64, 4096] : tensor<32768x4096xf32> into tensor<512x64x4096xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<512x4096xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[ID3:.*]], #[[OUT3:.*]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<512x64x4096xf32>) outs(%[[Z]] : tensor<512x4096xf32>)
// CHECK:         %[[E2:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [16, 32, 4096]
// CHECK:         %[[P2:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E2]] : tensor<16x32x4096xf32>) outs(%{{.*}} : tensor<16x4096xf32>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[P2]] : tensor<16x4096xf32>) outs(%arg1 : tensor<4096xf32>)
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

// A bias gradient over [B, T, C] = [64, 512, 768]: T read as [16, 32]; the [64, 16] partials are
// collapsed into one dim of 1024 (a view) for the next split.
// CHECK-LABEL: func.func @bias
// CHECK:         tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [64, 16, 32, 768]
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<64x16x768xf32>)
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[P]] {{\[\[}}0, 1], [2]] : tensor<64x16x768xf32> into tensor<1024x768xf32>
// CHECK:         tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [32, 32, 768]
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<32x768xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} outs(%arg1 : tensor<768xf32>)
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

// A pointwise producer (bf16 -> f32, the upcast) is rebuilt over the split dim, so it still fuses
// with the partial sum: the bf16 input is what is reshaped.
// CHECK-LABEL: func.func @upcast
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{.*}} : tensor<32768x4096xbf16> into tensor<512x64x4096xbf16>
// CHECK:         %[[F:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[E]] : tensor<512x64x4096xbf16>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extf
// CHECK:         linalg.generic {{.*}} ins(%[[F]] : tensor<512x64x4096xf32>) outs(%{{.*}} : tensor<512x4096xf32>)
// CHECK-NOT:     tensor.expand_shape {{.*}}xf32> into tensor<512x64x4096xf32>
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
