// RUN: fusec-opt %s --split-input-file '--fusec-fold-layout-ops=library-slices=1' | FileCheck %s
// RUN: fusec-opt %s --split-input-file --fusec-fold-layout-ops | FileCheck %s --check-prefix=COPY
// With `library-slices` (library matmuls on, the tensor cores' kernel off), a slice a float matmul
// reads into a zero fill stays a slice: after bufferization a strided view the library reads where it
// lies (q and k split from one projection). Without it, the matmul reads a copy.
// CHECK-LABEL: func.func @q_at_k
// CHECK-DAG:     %[[Q:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [4, 32, 24] [1, 1, 1]
// CHECK-DAG:     %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 0, 24] [4, 32, 24] [1, 1, 1]
// CHECK:         linalg.batch_matmul {{.*}} ins(%[[Q]], %[[K]] :
// COPY-LABEL:  func.func @q_at_k
// COPY-NOT:      tensor.extract_slice
// COPY-COUNT-2:  linalg.generic
// COPY:          linalg.batch_matmul
#a = affine_map<(b, m, n, k) -> (b, m, k)>
#bt = affine_map<(b, m, n, k) -> (b, n, k)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @q_at_k(%qkv: tensor<4x32x72xf32>) -> tensor<4x32x32xf32> {
  %q = tensor.extract_slice %qkv[0, 0, 0] [4, 32, 24] [1, 1, 1] : tensor<4x32x72xf32> to tensor<4x32x24xf32>
  %k = tensor.extract_slice %qkv[0, 0, 24] [4, 32, 24] [1, 1, 1] : tensor<4x32x72xf32> to tensor<4x32x24xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %s = linalg.batch_matmul indexing_maps = [#a, #bt, #c] ins(%q, %k : tensor<4x32x24xf32>, tensor<4x32x24xf32>)
      outs(%acc : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  return %s : tensor<4x32x32xf32>
}

// -----
// A matmul the library does not take gets the copy either way: integers (the loop lowering, whose
// kernels read no strided views), an accumulator that is not zeros, a strided slice.
// CHECK-LABEL: func.func @not_for_the_library
// CHECK-NOT:     tensor.extract_slice
// CHECK-COUNT-3: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_for_the_library(%xi: tensor<8x64xi32>, %wi: tensor<32x16xi32>, %x: tensor<8x64xf32>, %w: tensor<32x16xf32>,
                               %acc: tensor<8x16xf32>) -> (tensor<8x16xi32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %ai = tensor.extract_slice %xi[0, 32] [8, 32] [1, 1] : tensor<8x64xi32> to tensor<8x32xi32>
  %zi = arith.constant 0 : i32
  %ei = tensor.empty() : tensor<8x16xi32>
  %fi = linalg.fill ins(%zi : i32) outs(%ei : tensor<8x16xi32>) -> tensor<8x16xi32>
  %ri = linalg.matmul ins(%ai, %wi : tensor<8x32xi32>, tensor<32x16xi32>) outs(%fi : tensor<8x16xi32>) -> tensor<8x16xi32>
  %a = tensor.extract_slice %x[0, 32] [8, 32] [1, 1] : tensor<8x64xf32> to tensor<8x32xf32>
  %r = linalg.matmul ins(%a, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  %every_other = tensor.extract_slice %x[0, 0] [8, 32] [1, 2] : tensor<8x64xf32> to tensor<8x32xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %s = linalg.matmul ins(%every_other, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %ri, %r, %s : tensor<8x16xi32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----
// torch's select is a slice and a collapse of its unit dim (`x[1] @ w`, `x[:, 1] @ w`): the collapse
// only drops unit dims, so the matmul reads one rank-reducing slice, a strided view as above.
// CHECK-LABEL: func.func @selects
// CHECK-NOT:     tensor.collapse_shape
// CHECK-DAG:     %[[ROW:.*]] = tensor.extract_slice %{{.*}}[1, 0, 0] [1, 128, 64] [1, 1, 1] : tensor<4x128x64xf32> to tensor<128x64xf32>
// CHECK-DAG:     %[[COL:.*]] = tensor.extract_slice %{{.*}}[0, 1, 0] [4, 1, 64] [1, 1, 1] : tensor<4x128x64xf32> to tensor<4x64xf32>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.matmul ins(%[[ROW]], %{{.*}} :
// CHECK:         linalg.matmul ins(%[[COL]], %{{.*}} :
// COPY-LABEL:  func.func @selects
// COPY-NOT:      tensor.extract_slice
// COPY-COUNT-2:  linalg.generic
func.func @selects(%x: tensor<4x128x64xf32>, %w: tensor<64x32xf32>) -> (tensor<128x32xf32>, tensor<4x32xf32>) {
  %s = tensor.extract_slice %x[1, 0, 0] [1, 128, 64] [1, 1, 1] : tensor<4x128x64xf32> to tensor<1x128x64xf32>
  %row = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x128x64xf32> into tensor<128x64xf32>
  %t = tensor.extract_slice %x[0, 1, 0] [4, 1, 64] [1, 1, 1] : tensor<4x128x64xf32> to tensor<4x1x64xf32>
  %col = tensor.collapse_shape %t [[0, 1], [2]] : tensor<4x1x64xf32> into tensor<4x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x32xf32>) -> tensor<128x32xf32>
  %r = linalg.matmul ins(%row, %w : tensor<128x64xf32>, tensor<64x32xf32>) outs(%f : tensor<128x32xf32>) -> tensor<128x32xf32>
  %e2 = tensor.empty() : tensor<4x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %c = linalg.matmul ins(%col, %w : tensor<4x64xf32>, tensor<64x32xf32>) outs(%f2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %r, %c : tensor<128x32xf32>, tensor<4x32xf32>
}
