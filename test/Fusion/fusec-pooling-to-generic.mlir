// RUN: fusec-opt %s --split-input-file --fusec-pooling-to-generic | FileCheck %s

// max_pool2d(x, 3, stride=2, padding=1) as torch-mlir lowers it: a pad with -inf and a pooling over
// the padded tensor. After: an elementwise op over the output; each of the 9 window elements is read
// from x itself at `o * 2 + k - 1`, clamped into [0, 5], and replaced by -inf where it is outside.
// CHECK-LABEL: func.func @max_pool_padded
// CHECK-SAME:    (%[[X:.*]]: tensor<1x2x6x6xf32>)
// CHECK-NOT:     tensor.pad
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<1x2x3x3xf32>)
// CHECK:           %[[OH:.*]] = linalg.index 2 : index
// CHECK:           %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:           arith.cmpi sge
// CHECK:           arith.cmpi slt
// CHECK:           arith.maxsi
// CHECK:           arith.minsi
// CHECK:           %[[V:.*]] = tensor.extract %[[X]]
// CHECK:           arith.select %{{.*}}, %[[V]], %[[NINF]] : f32
// CHECK-COUNT-9:   arith.maximumf
// CHECK-NOT:       tensor.extract
// CHECK:           linalg.yield
// CHECK-NOT:     linalg.pooling_nchw_max
// CHECK:         return %[[Y]]
func.func @max_pool_padded(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %window = tensor.empty() : tensor<3x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %window : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A sum pooling without padding (avg_pool2d(x, 2)'s sum): the window never leaves x, so there are no
// bounds tests (its reads become index maps in --fusec-extracts-to-index-maps).
// CHECK-LABEL: func.func @sum_pool
// CHECK:         linalg.generic
// CHECK-NOT:       arith.cmpi
// CHECK-NOT:       arith.select
// CHECK-COUNT-4:   arith.addf %{{.*}}, %extracted{{.*}} : f32
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield
func.func @sum_pool(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %y = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %window : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A window of more than 64 elements (9x9) is left alone.
// CHECK-LABEL: func.func @large_window
// CHECK:         linalg.pooling_nchw_max
func.func @large_window(%x: tensor<1x2x9x9xf32>) -> tensor<1x2x1x1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x2x1x1xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %window = tensor.empty() : tensor<9x9xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %window : tensor<1x2x9x9xf32>, tensor<9x9xf32>) outs(%init : tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

// max_pool1d(x, 3, 2, 1) as torch-mlir lowers it: x unsqueezed to [N, C, 1, W], a 2-D pooling, the
// result squeezed back. The generic loops over [N, C, W'] only (the unit dim's index is 0), and the
// squeeze reads it directly: no reshape is left between the pooling and what reads it, so the two
// are one kernel (they were two: [2, 3, 1, 4] then [2, 3, 4]).
// CHECK-LABEL: func.func @max_pool_1d
// CHECK:         %[[Y:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-COUNT-3:   tensor.extract %{{.*}} : tensor<2x3x1x8xf32>
// CHECK:           linalg.yield
// CHECK-NOT:     tensor.collapse_shape
// CHECK-NOT:     tensor.expand_shape
// CHECK:         arith.addf %[[Y]], %[[Y]]
// CHECK:         return
func.func @max_pool_1d(%x: tensor<2x3x8xf32>) -> tensor<2x3x4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %x4 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, 3, 1, 8] : tensor<2x3x8xf32> into tensor<2x3x1x8xf32>
  %padded = tensor.pad %x4 low[0, 0, 0, 1] high[0, 0, 0, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<2x3x1x8xf32> to tensor<2x3x1x10xf32>
  %e = tensor.empty() : tensor<2x3x1x4xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x3x1x4xf32>) -> tensor<2x3x1x4xf32>
  %window = tensor.empty() : tensor<1x3xf32>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<[1, 2]> : vector<2xi64>}
      ins(%padded, %window : tensor<2x3x1x10xf32>, tensor<1x3xf32>) outs(%init : tensor<2x3x1x4xf32>) -> tensor<2x3x1x4xf32>
  %squeezed = tensor.collapse_shape %y [[0], [1, 2], [3]] : tensor<2x3x1x4xf32> into tensor<2x3x4xf32>
  %z = arith.addf %squeezed, %squeezed : tensor<2x3x4xf32>
  return %z : tensor<2x3x4xf32>
}
