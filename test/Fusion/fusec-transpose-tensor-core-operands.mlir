// RUN: fusec-opt %s --split-input-file --fusec-transpose-tensor-core-operands | FileCheck %s

// `x @ w` in bf16 with w [K, N] (linalg.matmul's default maps read B along N): the matmul reads a
// copy of w transposed to [N, K] (a linalg.generic whose input map swaps the dims), through the map
// (n, k), as the tensor cores' kernel reads nn.Linear's weight.
// CHECK-DAG:   #[[SWAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG:   #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG:   #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @x_at_w
// CHECK-SAME:      (%[[X:.*]]: tensor<16x64xbf16>, %[[W:.*]]: tensor<64x32xbf16>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<32x64xbf16>
// CHECK:         %[[WT:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[W]] : tensor<64x32xbf16>) outs(%[[E]] : tensor<32x64xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         linalg.matmul indexing_maps = [#[[A]], #[[B]], #[[C]]] ins(%[[X]], %[[WT]] : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
func.func @x_at_w(%x: tensor<16x64xbf16>, %w: tensor<64x32xbf16>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x64xbf16>, tensor<64x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Left as they are: an f32 matmul (the kernel takes bf16 and fp16), a K that is not a multiple of 8
// (its rows are 16-byte copies), and nn.Linear's form, whose B is read along K already.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     linalg.generic
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<64x32xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x60xbf16>, tensor<60x32xbf16>)
// CHECK:         linalg.matmul indexing_maps = [{{.*}}] ins(%{{.*}}, %{{.*}} : tensor<16x64xbf16>, tensor<32x64xbf16>)
// CHECK-NOT:     linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%x: tensor<16x64xf32>, %w: tensor<64x32xf32>, %x2: tensor<16x60xbf16>, %w2: tensor<60x32xbf16>,
                      %x3: tensor<16x64xbf16>, %w3: tensor<32x64xbf16>, %acc: tensor<16x32xf32>)
    -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>) {
  %y = linalg.matmul ins(%x, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y2 = linalg.matmul ins(%x2, %w2 : tensor<16x60xbf16>, tensor<60x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y3 = linalg.matmul indexing_maps = [#a, #b, #c] ins(%x3, %w3 : tensor<16x64xbf16>, tensor<32x64xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y, %y2, %y3 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>
}
