// RUN: fusec-opt %s --split-input-file --fusec-fold-layout-ops | FileCheck %s
// x.chunk(2, -1): the halves are offsets in the consumer's map; the first half reads `d1 mod 64`
// (the same element: a bare `d1` would tell linalg the loop runs over all 128 columns).
// CHECK-DAG:   #[[LO:.*]] = affine_map<(d0, d1) -> (d0, d1 mod 64)>
// CHECK-DAG:   #[[HI:.*]] = affine_map<(d0, d1) -> (d0, d1 + 64)>
// CHECK-LABEL: func.func @halves
// CHECK-SAME:    (%[[X:.*]]: tensor<8x128xf32>)
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.generic {indexing_maps = [#[[LO]], #[[HI]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]], %[[X]] : tensor<8x128xf32>, tensor<8x128xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @halves(%x: tensor<8x128xf32>) -> tensor<8x64xf32> {
  %a = tensor.extract_slice %x[0, 0] [8, 64] [1, 1] : tensor<8x128xf32> to tensor<8x64xf32>
  %b = tensor.extract_slice %x[0, 64] [8, 64] [1, 1] : tensor<8x128xf32> to tensor<8x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// -----

// x[:, 2] (a rank-reducing slice, then the unit dim collapsed) reads column 2; x[:, 1:30:2] reads
// `2 * d1 + 1`.
// CHECK-DAG:   #[[COL:.*]] = affine_map<(d0) -> (d0, 2)>
// CHECK-DAG:   #[[STEP:.*]] = affine_map<(d0, d1) -> (d0, d1 * 2 + 1)>
// CHECK-LABEL: func.func @select_strided
// CHECK-NOT:     tensor.extract_slice
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#[[COL]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<16x32xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[STEP]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<16x32xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @select_strided(%x: tensor<16x32xf32>) -> (tensor<16xf32>, tensor<16x15xf32>) {
  %s = tensor.extract_slice %x[0, 2] [16, 1] [1, 1] : tensor<16x32xf32> to tensor<16x1xf32>
  %c = tensor.collapse_shape %s [[0, 1]] : tensor<16x1xf32> into tensor<16xf32>
  %t = tensor.extract_slice %x[0, 1] [16, 15] [1, 2] : tensor<16x32xf32> to tensor<16x15xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%c : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.negf %p : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16x15xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<16x15xf32>) outs(%e2 : tensor<16x15xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.negf %p : f32
    linalg.yield %m : f32
  } -> tensor<16x15xf32>
  return %r, %r2 : tensor<16xf32>, tensor<16x15xf32>
}

// -----

// GPT-2's heads: k = qkv.split(64)[1].view(2, 16, 4, 16).transpose(1, 2), then its scale. Slice,
// expand and transpose compose into one map of the packed qkv.
// CHECK-DAG:   #[[HEADS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 16 + d3 + 64)>
// CHECK-LABEL: func.func @heads
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {indexing_maps = [#[[HEADS]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<2x16x192xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @heads(%x: tensor<2x16x192xf32>) -> tensor<2x4x16x16xf32> {
  %k = tensor.extract_slice %x[0, 0, 64] [2, 16, 64] [1, 1, 1] : tensor<2x16x192xf32> to tensor<2x16x64xf32>
  %v = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 16, 4, 16] : tensor<2x16x64xf32> into tensor<2x16x4x16xf32>
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %t = linalg.transpose ins(%v : tensor<2x16x4x16xf32>) outs(%e : tensor<2x4x16x16xf32>) permutation = [0, 2, 1, 3]
  %cst = arith.constant 2.5e-01 : f32
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %cst : f32
    linalg.yield %m : f32
  } -> tensor<2x4x16x16xf32>
  return %r : tensor<2x4x16x16xf32>
}

// -----

// Merging heads back (a transpose, then a collapse): floordiv and mod split the merged dim.
// CHECK-DAG:   #[[MERGE:.*]] = affine_map<(d0, d1, d2) -> (d0, d2 floordiv 16, d1, d2 mod 16)>
// CHECK-LABEL: func.func @merge_heads
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [#[[MERGE]], #{{.*}}]
// CHECK-SAME:      ins(%{{.*}} : tensor<2x4x16x16xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @merge_heads(%x: tensor<2x4x16x16xf32>) -> tensor<2x16x64xf32> {
  %e = tensor.empty() : tensor<2x16x4x16xf32>
  %t = linalg.transpose ins(%x : tensor<2x4x16x16xf32>) outs(%e : tensor<2x16x4x16xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<2x16x4x16xf32> into tensor<2x16x64xf32>
  %e2 = tensor.empty() : tensor<2x16x64xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x16x64xf32>) outs(%e2 : tensor<2x16x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.negf %p : f32
    linalg.yield %m : f32
  } -> tensor<2x16x64xf32>
  return %r : tensor<2x16x64xf32>
}

// -----

// A slice read by a reduction, and returned: each use gets a copy (a pointwise generic through the
// slice's map), which fuses into the reduction as its prologue or is the kernel that writes it.
// CHECK-DAG:   #[[HI:.*]] = affine_map<(d0, d1) -> (d0, d1 + 64)>
// CHECK-LABEL: func.func @copies
// CHECK-SAME:    (%[[X:.*]]: tensor<8x128xf32>
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %[[C1:.*]] = linalg.generic {indexing_maps = [#[[HI]], #{{.*}}]
// CHECK-SAME:      ins(%[[X]] : tensor<8x128xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
// CHECK:         %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[C1]] : tensor<8x64xf32>)
// CHECK:         %[[C2:.*]] = linalg.generic {indexing_maps = [#[[HI]], #{{.*}}]
// CHECK:         return %[[C2]], %[[S]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @copies(%x: tensor<8x128xf32>, %w: tensor<64x16xf32>) -> (tensor<8x64xf32>, tensor<8xf32>) {
  %b = tensor.extract_slice %x[0, 64] [8, 64] [1, 1] : tensor<8x128xf32> to tensor<8x64xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.addf %p, %o : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %b, %s : tensor<8x64xf32>, tensor<8xf32>
}

// -----

// A reshape alone is a free view for the host: left where it is.
// CHECK-LABEL: func.func @reshape_only
// CHECK:         tensor.expand_shape
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @reshape_only(%x: tensor<8x64xf32>) -> tensor<8x4x16xf32> {
  %v = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 4, 16] : tensor<8x64xf32> into tensor<8x4x16xf32>
  %e = tensor.empty() : tensor<8x4x16xf32>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%v : tensor<8x4x16xf32>) outs(%e : tensor<8x4x16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.negf %p : f32
    linalg.yield %m : f32
  } -> tensor<8x4x16xf32>
  return %r : tensor<8x4x16xf32>
}

// -----

// A slice of a dynamic size is left as it is.
// CHECK-LABEL: func.func @dynamic
// CHECK:         tensor.extract_slice
#id = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @dynamic(%x: tensor<?x128xf32>, %n: index) -> tensor<?x64xf32> {
  %a = tensor.extract_slice %x[0, 64] [%n, 64] [1, 1] : tensor<?x128xf32> to tensor<?x64xf32>
  return %a : tensor<?x64xf32>
}
