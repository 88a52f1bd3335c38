// RUN: fusec-opt %s --split-input-file --fusec-concat-to-generic | FileCheck %s

// torch.cat of two halves (rotate_half's): one generic over the output, each piece read at
// `(d - offset) mod size` (in bounds for every d), the loop index selecting the piece.
// CHECK-DAG:   #[[FIRST:.*]] = affine_map<(d0, d1) -> (d0, d1 mod 32)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @two
// CHECK-SAME:    (%[[A:.*]]: tensor<8x32xf32>, %[[B:.*]]: tensor<8x32xf32>)
// CHECK-NOT:     tensor.concat
// CHECK:         linalg.generic {indexing_maps = [#[[FIRST]], #[[FIRST]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<8x32xf32>, tensor<8x32xf32>)
// CHECK-SAME:      attrs = {fusec.concat}
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 1 : index
// CHECK:           %[[C32:.*]] = arith.constant 32 : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[C32]] : index
// CHECK:           %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[Y]] : f32
// CHECK:           linalg.yield %[[V]] : f32
func.func @two(%a: tensor<8x32xf32>, %b: tensor<8x32xf32>) -> tensor<8x64xf32> {
  %c = tensor.concat dim(1) %a, %b : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  return %c : tensor<8x64xf32>
}

// -----

// Three pieces of different sizes along dim 0: a chain of selects, the last piece (one row) read at 0.
// CHECK-DAG:   #[[P0:.*]] = affine_map<(d0, d1) -> (d0 mod 2, d1)>
// CHECK-DAG:   #[[P1:.*]] = affine_map<(d0, d1) -> ((d0 - 2) mod 3, d1)>
// CHECK-DAG:   #[[P2:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @three
// CHECK:         linalg.generic {indexing_maps = [#[[P0]], #[[P1]], #[[P2]], #{{.*}}]
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32, %{{.*}}: f32):
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           arith.constant 5 : index
// CHECK:           %[[YZ:.*]] = arith.select %{{.*}}, %[[Y]], %[[Z]] : f32
// CHECK:           arith.constant 2 : index
// CHECK:           %[[V:.*]] = arith.select %{{.*}}, %[[X]], %[[YZ]] : f32
// CHECK:           linalg.yield %[[V]] : f32
func.func @three(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>, %c: tensor<1x8xf32>) -> tensor<6x8xf32> {
  %r = tensor.concat dim(0) %a, %b, %c : (tensor<2x8xf32>, tensor<3x8xf32>, tensor<1x8xf32>) -> tensor<6x8xf32>
  return %r : tensor<6x8xf32>
}

// -----

// torch.roll imports as a cat of two slices cast to a dynamic size: the pieces are read as the
// static tensors the casts came from.
// CHECK-LABEL: func.func @casts
// CHECK-SAME:    (%[[A:.*]]: tensor<16x3xf32>, %[[B:.*]]: tensor<16x29xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[A]], %[[B]] : tensor<16x3xf32>, tensor<16x29xf32>)
func.func @casts(%a: tensor<16x3xf32>, %b: tensor<16x29xf32>) -> tensor<16x32xf32> {
  %ca = tensor.cast %a : tensor<16x3xf32> to tensor<16x?xf32>
  %cb = tensor.cast %b : tensor<16x29xf32> to tensor<16x?xf32>
  %r = tensor.concat dim(1) %ca, %cb : (tensor<16x?xf32>, tensor<16x?xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Pieces of dynamic size along the concatenated dim have no static offsets: left as they are.
// CHECK-LABEL: func.func @dynamic
// CHECK:         tensor.concat dim(0)
// CHECK-NOT:     linalg.generic
func.func @dynamic(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = tensor.concat dim(0) %a, %b : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
