// RUN: fusec-opt %s --split-input-file --fusec-unroll-window-reductions | FileCheck %s

// max_pool2d's indices as torch-mlir computes them (2x2 windows, stride 2): a reduction over the
// window whose only window operand is an empty tensor<2x2xi64> giving the window's extent. Unrolled:
// an elementwise op over the output, the body once per window element in row-major order, each
// taking the result of the one before as its %out.
// CHECK-LABEL: func.func @pool_indices
// CHECK:         linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:        ins(%[[MAX:.*]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xi64>)
// CHECK-NEXT:    ^bb0(%[[M:.*]]: f32, %[[OUT:.*]]: i64):
// CHECK-NEXT:      linalg.index 0
// CHECK-NEXT:      linalg.index 1
// CHECK-NEXT:      arith.constant 0 : index
// CHECK-NEXT:      arith.constant 1 : index
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x4xf32>
// CHECK:           arith.cmpi eq, %[[OUT]], %{{.*}} : i64
// CHECK-NEXT:      %[[R0:.*]] = arith.select %{{.*}}, %{{.*}}, %[[OUT]] : i64
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x4xf32>
// CHECK:           arith.cmpi eq, %[[R0]], %{{.*}} : i64
// CHECK-NEXT:      %[[R1:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R0]] : i64
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x4xf32>
// CHECK:           arith.cmpi eq, %[[R1]], %{{.*}} : i64
// CHECK-NEXT:      %[[R2:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R1]] : i64
// CHECK:           tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x4xf32>
// CHECK:           arith.cmpi eq, %[[R2]], %{{.*}} : i64
// CHECK-NEXT:      %[[R3:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R2]] : i64
// CHECK-NEXT:      linalg.yield %[[R3]] : i64
// CHECK-NOT:     "reduction"
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @pool_indices(%x: tensor<4x4xf32>, %max: tensor<2x2xf32>) -> tensor<2x2xi64> {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %m1 = arith.constant -1 : i64
  %e = tensor.empty() : tensor<2x2xi64>
  %fill = linalg.fill ins(%m1 : i64) outs(%e : tensor<2x2xi64>) -> tensor<2x2xi64>
  %window = tensor.empty() : tensor<2x2xi64>
  %r = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%max, %window : tensor<2x2xf32>, tensor<2x2xi64>) outs(%fill : tensor<2x2xi64>) {
  ^bb0(%in: f32, %unused: i64, %out: i64):
    %oh = linalg.index 0 : index
    %kh = linalg.index 2 : index
    %ow = linalg.index 1 : index
    %kw = linalg.index 3 : index
    %ih = arith.addi %kh, %oh : index
    %ih2 = arith.addi %ih, %oh : index
    %iw = arith.addi %kw, %ow : index
    %iw2 = arith.addi %iw, %ow : index
    %v = tensor.extract %x[%ih2, %iw2] : tensor<4x4xf32>
    %eq = arith.cmpf oeq, %v, %in : f32
    %flat = arith.muli %ih2, %c4 : index
    %pos = arith.addi %flat, %iw2 : index
    %k = arith.index_cast %pos : index to i64
    %pick = arith.select %eq, %k, %out : i64
    %first = arith.cmpi eq, %out, %m1 : i64
    %res = arith.select %first, %pick, %out : i64
    linalg.yield %res : i64
  } -> tensor<2x2xi64>
  return %r : tensor<2x2xi64>
}

// -----

// A reduction whose window elements the body reads (a row sum) is a reduction fusec schedules as
// one: left alone.
// CHECK-LABEL: func.func @row_sum
// CHECK:         iterator_types = ["parallel", "reduction"]
#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: tensor<4x3xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
