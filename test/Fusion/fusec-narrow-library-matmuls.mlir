// RUN: fusec-opt %s --split-input-file --fusec-narrow-library-matmuls | FileCheck %s
// RUN: fusec-opt %s --split-input-file '--fusec-narrow-library-matmuls=wgmma=1' | FileCheck %s --check-prefix=WGMMA

// bf16 `x @ w.T` for the library: the matmul writes bf16 (accumulated in fp32 by the library,
// `fusec.accumulate_f32`) into a bf16 zero fill. The model's rounding of the product to bf16 is the
// product itself; the bias epilogue reads it widened to fp32.
// CHECK-LABEL: func.func @linear
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK:         %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : bf16) outs(%{{.*}} : tensor<16x24xbf16>)
// CHECK:         %[[Y:.*]] = linalg.matmul {{.*}} {fusec.accumulate_f32} ins(%{{.*}}, %{{.*}} : tensor<16x32xbf16>, tensor<24x32xbf16>) outs(%[[ACC]] : tensor<16x24xbf16>) -> tensor<16x24xbf16>
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} ins(%[[Y]] : tensor<16x24xbf16>) outs(%{{.*}} : tensor<16x24xf32>)
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<16x24xf32>, tensor<16x24xf32>)
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[Y]], %[[E]]
// The tensor cores' kernel builds this one (sm_90a, wgmma on): it keeps its fp32 accumulator.
// WGMMA-LABEL: func.func @linear
// WGMMA-NOT:     fusec.accumulate_f32
// WGMMA:         linalg.matmul {{.*}} outs(%{{.*}} : tensor<16x24xf32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @linear(%x: tensor<16x32xbf16>, %w: tensor<24x32xbf16>, %bias: tensor<16x24xf32>) -> (tensor<16x24xbf16>, tensor<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<16x32xbf16>, tensor<24x32xbf16>) outs(%acc : tensor<16x24xf32>) -> tensor<16x24xf32>
  %e2 = tensor.empty() : tensor<16x24xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<16x24xf32>) outs(%e2 : tensor<16x24xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<16x24xbf16>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : tensor<16x24xf32>, tensor<16x24xf32>) outs(%e : tensor<16x24xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %t = arith.addf %in, %b : f32
    linalg.yield %t : f32
  } -> tensor<16x24xf32>
  return %r, %s : tensor<16x24xbf16>, tensor<16x24xf32>
}

// -----

// Left as they are: fp32 operands, an accumulator that is not zeros, and an operand sliced from
// another tensor (a strided buffer the library call does not take).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     fusec.accumulate_f32
// CHECK-COUNT-3: linalg.matmul {{.*}} -> tensor<16x24xf32>
// CHECK-NOT:     fusec.accumulate_f32
func.func @left_alone(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %h: tensor<16x32xbf16>, %g: tensor<32x24xbf16>,
                      %big: tensor<2x16x32xbf16>) -> (tensor<16x24xf32>, tensor<16x24xf32>, tensor<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x24xf32>) outs(%acc : tensor<16x24xf32>) -> tensor<16x24xf32>
  %z = linalg.matmul ins(%h, %g : tensor<16x32xbf16>, tensor<32x24xbf16>) outs(%ones : tensor<16x24xf32>) -> tensor<16x24xf32>
  %slice = tensor.extract_slice %big[1, 0, 0] [1, 16, 32] [1, 1, 1] : tensor<2x16x32xbf16> to tensor<16x32xbf16>
  %v = linalg.matmul ins(%slice, %g : tensor<16x32xbf16>, tensor<32x24xbf16>) outs(%acc : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %y, %z, %v : tensor<16x24xf32>, tensor<16x24xf32>, tensor<16x24xf32>
}

// -----

// A dynamic row count: the bf16 accumulator and the widened copy are sized from the accumulator's
// rows (tensor.dim), before the matmul.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:         %[[N:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x24xf32>
// CHECK:         tensor.empty(%[[N]]) : tensor<?x24xbf16>
// CHECK:         %[[Y:.*]] = linalg.matmul {{.*}} {fusec.accumulate_f32} {{.*}} -> tensor<?x24xbf16>
// CHECK:         tensor.empty(%{{.*}}) : tensor<?x24xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[Y]] : tensor<?x24xbf16>) outs(%{{.*}} : tensor<?x24xf32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dynamic_rows(%x: tensor<?x32xbf16>, %w: tensor<24x32xbf16>) -> tensor<?x24xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %x, %c0 : tensor<?x32xbf16>
  %e = tensor.empty(%rows) : tensor<?x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x24xf32>) -> tensor<?x24xf32>
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<?x32xbf16>, tensor<24x32xbf16>) outs(%acc : tensor<?x24xf32>) -> tensor<?x24xf32>
  return %y : tensor<?x24xf32>
}
