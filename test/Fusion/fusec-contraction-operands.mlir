// RUN: fusec-opt %s --split-input-file --fusec-contraction-operands | FileCheck %s

// nn.Linear in bf16 as torch-mlir lowers it: both operands widened to f32 by linalg.generics, the
// input collapsed from [2, 8, 64], the weight transposed. The matmul now reads the bf16 input
// (collapsed as bf16) and the weight in its [N, K] layout through its indexing map; the casts and
// the transpose are gone.
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME:      (%[[X:.*]]: tensor<2x8x64xbf16>, %[[WT:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:     arith.extf
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[XC:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x8x64xbf16> into tensor<16x64xbf16>
// CHECK:         linalg.matmul indexing_maps = [#[[A]], #[[W]], #[[C]]] ins(%[[XC]], %[[WT]] : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @linear(%x: tensor<2x8x64xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x8x64xf32>
  %xf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x64xbf16>) outs(%e0 : tensor<2x8x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<2x8x64xf32>
  %e1 = tensor.empty() : tensor<32x64xf32>
  %wf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xbf16>) outs(%e1 : tensor<32x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<32x64xf32>
  %xc = tensor.collapse_shape %xf [[0, 1], [2]] : tensor<2x8x64xf32> into tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %wt = linalg.transpose ins(%wf : tensor<32x64xf32>) outs(%e2 : tensor<64x32xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%xc, %wt : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Attention scores, q @ k.transpose(-2, -1): the batched matmul reads k [B, N, K] through its map.
// A cast something else also reads (here the function's result) stays for that reader.
// CHECK-DAG:   #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @scores
// CHECK-SAME:      (%[[Q:.*]]: tensor<4x16x32xbf16>, %[[KK:.*]]: tensor<4x24x32xbf16>)
// CHECK:         %[[QF:.*]] = linalg.generic
// CHECK:           arith.extf
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.batch_matmul indexing_maps = [#{{.*}}, #[[K]], #{{.*}}] ins(%[[Q]], %[[KK]] : tensor<4x16x32xbf16>, tensor<4x24x32xbf16>)
// CHECK:         return %{{.*}}, %[[QF]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @scores(%q: tensor<4x16x32xbf16>, %k: tensor<4x24x32xbf16>) -> (tensor<4x16x24xf32>, tensor<4x16x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x16x32xf32>
  %qf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<4x16x32xbf16>) outs(%e0 : tensor<4x16x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<4x16x32xf32>
  %e1 = tensor.empty() : tensor<4x24x32xf32>
  %kf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<4x24x32xbf16>) outs(%e1 : tensor<4x24x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<4x24x32xf32>
  %e2 = tensor.empty() : tensor<4x32x24xf32>
  %kt = linalg.transpose ins(%kf : tensor<4x24x32xf32>) outs(%e2 : tensor<4x32x24xf32>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<4x16x24xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x16x24xf32>) -> tensor<4x16x24xf32>
  %s = linalg.batch_matmul ins(%qf, %kt : tensor<4x16x32xf32>, tensor<4x32x24xf32>) outs(%acc : tensor<4x16x24xf32>) -> tensor<4x16x24xf32>
  return %s, %qf : tensor<4x16x24xf32>, tensor<4x16x32xf32>
}

// -----

// A matmul that accumulates in bf16 (no widening to read through) is left alone.
// CHECK-LABEL: func.func @bf16_accumulator
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%{{.*}} : tensor<4x3xbf16>)
func.func @bf16_accumulator(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>, %c: tensor<4x3xbf16>) -> tensor<4x3xbf16> {
  %y = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%c : tensor<4x3xbf16>) -> tensor<4x3xbf16>
  return %y : tensor<4x3xbf16>
}

// -----

// x @ x.T: both operands read through one cast, one of them through the transpose too.
// CHECK-LABEL: func.func @gram
// CHECK-SAME:      (%[[X:.*]]: tensor<8x5xbf16>)
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.matmul indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}] ins(%[[X]], %[[X]] : tensor<8x5xbf16>, tensor<8x5xbf16>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @gram(%x: tensor<8x5xbf16>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x5xf32>
  %xf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x5xbf16>) outs(%e0 : tensor<8x5xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<8x5xf32>
  %e1 = tensor.empty() : tensor<5x8xf32>
  %xt = linalg.transpose ins(%xf : tensor<8x5xf32>) outs(%e1 : tensor<5x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %g = linalg.matmul ins(%xf, %xt : tensor<8x5xf32>, tensor<5x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %g : tensor<8x8xf32>
}

// -----

// x @ x: both operands are the one cast, peeled twice and erased once (erasing it twice crashed the
// process).
// CHECK-LABEL: func.func @square
// CHECK-SAME:      (%[[X:.*]]: tensor<8x8xbf16>)
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.matmul ins(%[[X]], %[[X]] : tensor<8x8xbf16>, tensor<8x8xbf16>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @square(%x: tensor<8x8xbf16>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x8xf32>
  %xf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xbf16>) outs(%e0 : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%xf, %xf : tensor<8x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// An attention block's output projection reads its heads transposed and merged, [2, 4, 8, 16] ->
// [2, 8, 4, 16] -> [16, 64]: the transpose under the reshape is a copy, and it moves below the cast
// too, so that the copy is of bf16 and the matmul reads bf16 (what the tensor cores' kernel takes).
// CHECK-LABEL: func.func @merged_heads
// CHECK-SAME:      (%[[H:.*]]: tensor<2x4x8x16xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:     arith.extf
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[H]] : tensor<2x4x8x16xbf16>) outs(%{{.*}} : tensor<2x8x4x16xbf16>) permutation = [0, 2, 1, 3]
// CHECK:         %[[HC:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2, 3]] : tensor<2x8x4x16xbf16> into tensor<16x64xbf16>
// CHECK:         linalg.matmul {{.*}}ins(%[[HC]], %[[W]] : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @merged_heads(%h: tensor<2x4x8x16xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x8x16xf32>
  %hf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%h : tensor<2x4x8x16xbf16>) outs(%e0 : tensor<2x4x8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<2x4x8x16xf32>
  %e1 = tensor.empty() : tensor<2x8x4x16xf32>
  %t = linalg.transpose ins(%hf : tensor<2x4x8x16xf32>) outs(%e1 : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %hc = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<2x8x4x16xf32> into tensor<16x64xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e4 = tensor.empty() : tensor<32x64xf32>
  %wf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xbf16>) outs(%e4 : tensor<32x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<32x64xf32>
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%hc, %wf : tensor<16x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// The same with a dynamic batch: the bf16 transpose's destination is sized from its input
// (tensor.dim), where a static tensor.empty of a dynamic type was invalid IR.
// CHECK-LABEL: func.func @merged_heads_dynamic
// CHECK-NOT:     arith.extf
// CHECK:         tensor.empty(%{{.*}}) : tensor<?x8x4x16xf32>
// CHECK:         %[[B:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?x4x8x16xbf16>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty(%[[B]]) : tensor<?x8x4x16xbf16>
// CHECK-NEXT:    linalg.transpose ins(%{{.*}} : tensor<?x4x8x16xbf16>) outs(%[[E]] : tensor<?x8x4x16xbf16>) permutation = [0, 2, 1, 3]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @merged_heads_dynamic(%h: tensor<?x4x8x16xbf16>, %w: tensor<32x64xbf16>) -> tensor<?x32xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %b = tensor.dim %h, %c0 : tensor<?x4x8x16xbf16>
  %e0 = tensor.empty(%b) : tensor<?x4x8x16xf32>
  %hf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%h : tensor<?x4x8x16xbf16>) outs(%e0 : tensor<?x4x8x16xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<?x4x8x16xf32>
  %e1 = tensor.empty(%b) : tensor<?x8x4x16xf32>
  %t = linalg.transpose ins(%hf : tensor<?x4x8x16xf32>) outs(%e1 : tensor<?x8x4x16xf32>) permutation = [0, 2, 1, 3]
  %hc = tensor.collapse_shape %t [[0, 1], [2, 3]] : tensor<?x8x4x16xf32> into tensor<?x64xf32>
  %c8 = arith.constant 8 : index
  %rows = arith.muli %b, %c8 : index
  %e3 = tensor.empty(%rows) : tensor<?x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<?x32xf32>) -> tensor<?x32xf32>
  %e4 = tensor.empty() : tensor<32x64xf32>
  %wf = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x64xbf16>) outs(%e4 : tensor<32x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %f = arith.extf %in : bf16 to f32
    linalg.yield %f : f32
  } -> tensor<32x64xf32>
  %y = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%hc, %wf : tensor<?x64xf32>, tensor<32x64xf32>) outs(%acc : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
