// RUN: fusec-opt %s --split-input-file --fusec-library-matmuls | FileCheck %s

// nn.Linear in fp32 (the weight [N, K] read through the map (n, k)): the matmul and the fill of zeros
// it accumulates into become one call, marked for the runtime's library with B transposed; the
// other group (the bias) is left as it is.
// CHECK-LABEL: func.func @linear
// CHECK-SAME:      (%[[X:.*]]: memref<32x64xf32>, %[[W:.*]]: memref<96x64xf32>
// CHECK:         %[[C:.*]] = memref.alloc() : memref<32x96xf32>
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     linalg.matmul
// CHECK:         call @fusec_matmul_0(%[[X]], %[[W]], %[[C]]) {fusec.library = {op = "matmul", transpose_a = false, transpose_b = true}} : (memref<32x64xf32>, memref<96x64xf32>, memref<32x96xf32>) -> ()
// CHECK:         linalg.generic {{.*}} ins(%[[C]], %{{.*}} : memref<32x96xf32>, memref<96xf32>)
// CHECK-SAME:      fusec.group = 1
// CHECK:       func.func private @fusec_matmul_0(memref<32x64xf32>, memref<96x64xf32>, memref<32x96xf32>) attributes {fusec.library}
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @linear(%x: memref<32x64xf32>, %w: memref<96x64xf32>, %bias: memref<96xf32>, %out: memref<32x96xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<32x96xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%c : memref<32x96xf32>)
  linalg.matmul indexing_maps = [#a, #bt, #c] {fusec.group = 0 : i64, fusec.group_kind = "contraction"}
      ins(%x, %w : memref<32x64xf32>, memref<96x64xf32>) outs(%c : memref<32x96xf32>)
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<32x96xf32>, memref<96xf32>) outs(%out : memref<32x96xf32>)
      attrs = {fusec.group = 1 : i64, fusec.group_kind = "pointwise"} {
  ^bb0(%in: f32, %b: f32, %o: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batched matmul with its default maps, and one reading A transposed, share nothing: each call
// says its own transposes; two calls of one signature share one declaration.
// CHECK-LABEL: func.func @batched
// CHECK:         call @fusec_batch_matmul_0(%{{.*}}, %{{.*}}, %{{.*}}) {fusec.library = {op = "batch_matmul", transpose_a = false, transpose_b = false}}
// CHECK:         call @fusec_batch_matmul_0(%{{.*}}, %{{.*}}, %{{.*}}) {fusec.library = {op = "batch_matmul", transpose_a = false, transpose_b = false}}
// CHECK:         call @fusec_matmul_1(%{{.*}}, %{{.*}}, %{{.*}}) {fusec.library = {op = "matmul", transpose_a = true, transpose_b = false}} : (memref<16x8xf32>, memref<16x24xf32>, memref<8x24xf32>) -> ()
// CHECK-DAG:   func.func private @fusec_batch_matmul_0(memref<4x8x16xf32>, memref<4x16x24xf32>, memref<4x8x24xf32>) attributes {fusec.library}
// CHECK-DAG:   func.func private @fusec_matmul_1(memref<16x8xf32>, memref<16x24xf32>, memref<8x24xf32>) attributes {fusec.library}
#at = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @batched(%q: memref<4x8x16xf32>, %k: memref<4x16x24xf32>, %a: memref<16x8xf32>, %b: memref<16x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<4x8x24xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%s : memref<4x8x24xf32>)
  linalg.batch_matmul {fusec.group = 0 : i64, fusec.group_kind = "contraction"}
      ins(%q, %k : memref<4x8x16xf32>, memref<4x16x24xf32>) outs(%s : memref<4x8x24xf32>)
  %s2 = memref.alloc() : memref<4x8x24xf32>
  linalg.fill {fusec.group = 1 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%s2 : memref<4x8x24xf32>)
  linalg.batch_matmul {fusec.group = 1 : i64, fusec.group_kind = "contraction"}
      ins(%q, %k : memref<4x8x16xf32>, memref<4x16x24xf32>) outs(%s2 : memref<4x8x24xf32>)
  %t = memref.alloc() : memref<8x24xf32>
  linalg.fill {fusec.group = 2 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%t : memref<8x24xf32>)
  linalg.matmul indexing_maps = [#at, #b, #c] {fusec.group = 2 : i64, fusec.group_kind = "contraction"}
      ins(%a, %b : memref<16x8xf32>, memref<16x24xf32>) outs(%t : memref<8x24xf32>)
  return
}

// -----

// Left to the loop lowering: an accumulator that does not start from zeros, integers, and a
// matmul the tensor cores' kernel builds (`fusec.tensor_cores`).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     call
// CHECK-COUNT-3: linalg.matmul
// CHECK-NOT:     fusec.library
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @left_alone(%x: memref<32x64xf32>, %w: memref<64x96xf32>, %i: memref<32x64xi32>, %j: memref<64x96xi32>,
                      %h: memref<32x64xbf16>, %g: memref<96x64xbf16>) {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<32x96xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%one : f32) outs(%c : memref<32x96xf32>)
  linalg.matmul {fusec.group = 0 : i64, fusec.group_kind = "contraction"}
      ins(%x, %w : memref<32x64xf32>, memref<64x96xf32>) outs(%c : memref<32x96xf32>)
  %zi = arith.constant 0 : i32
  %ci = memref.alloc() : memref<32x96xi32>
  linalg.fill {fusec.group = 1 : i64, fusec.group_kind = "contraction"} ins(%zi : i32) outs(%ci : memref<32x96xi32>)
  linalg.matmul {fusec.group = 1 : i64, fusec.group_kind = "contraction"}
      ins(%i, %j : memref<32x64xi32>, memref<64x96xi32>) outs(%ci : memref<32x96xi32>)
  %zero = arith.constant 0.0 : f32
  %ct = memref.alloc() : memref<32x96xf32>
  linalg.fill {fusec.group = 2 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%ct : memref<32x96xf32>)
  linalg.matmul indexing_maps = [#a, #bt, #c] {fusec.group = 2 : i64, fusec.group_kind = "contraction", fusec.tensor_cores}
      ins(%h, %g : memref<32x64xbf16>, memref<96x64xbf16>) outs(%ct : memref<32x96xf32>)
  return
}

// -----

// A slice at a static offset with static strides (q and k of one projection) is called as it lies:
// the declaration takes the strided types. An output that is a slice is not (C must be row-major).
// CHECK-LABEL: func.func @slices
// CHECK:         %[[Q:.*]] = memref.subview %{{.*}}[0, 0, 0]
// CHECK:         %[[K:.*]] = memref.subview %{{.*}}[0, 0, 24]
// CHECK:         call @fusec_batch_matmul_{{[0-9]+}}(%[[Q]], %[[K]], %{{.*}}) {fusec.library = {op = "batch_matmul", transpose_a = false, transpose_b = true}}
// CHECK-SAME:      (memref<4x32x24xf32, strided<[2304, 72, 1]>>, memref<4x32x24xf32, strided<[2304, 72, 1], offset: 24>>, memref<4x32x32xf32>) -> ()
// CHECK:         linalg.matmul
// CHECK:         func.func private @fusec_batch_matmul_{{[0-9]+}}(memref<4x32x24xf32, strided<[2304, 72, 1]>>, memref<4x32x24xf32, strided<[2304, 72, 1], offset: 24>>, memref<4x32x32xf32>)
#a3 = affine_map<(b, m, n, k) -> (b, m, k)>
#bt3 = affine_map<(b, m, n, k) -> (b, n, k)>
#c3 = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @slices(%qkv: memref<4x32x72xf32>, %x: memref<8x64xf32>, %w: memref<64x48xf32>) {
  %q = memref.subview %qkv[0, 0, 0] [4, 32, 24] [1, 1, 1] : memref<4x32x72xf32> to memref<4x32x24xf32, strided<[2304, 72, 1]>>
  %k = memref.subview %qkv[0, 0, 24] [4, 32, 24] [1, 1, 1] : memref<4x32x72xf32> to memref<4x32x24xf32, strided<[2304, 72, 1], offset: 24>>
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<4x32x32xf32>
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%s : memref<4x32x32xf32>)
  linalg.batch_matmul indexing_maps = [#a3, #bt3, #c3] {fusec.group = 0 : i64, fusec.group_kind = "contraction"}
      ins(%q, %k : memref<4x32x24xf32, strided<[2304, 72, 1]>>, memref<4x32x24xf32, strided<[2304, 72, 1], offset: 24>>)
      outs(%s : memref<4x32x32xf32>)
  %big = memref.alloc() : memref<8x96xf32>
  %half = memref.subview %big[0, 0] [8, 48] [1, 1] : memref<8x96xf32> to memref<8x48xf32, strided<[96, 1]>>
  linalg.fill {fusec.group = 1 : i64, fusec.group_kind = "contraction"} ins(%zero : f32) outs(%half : memref<8x48xf32, strided<[96, 1]>>)
  linalg.matmul {fusec.group = 1 : i64, fusec.group_kind = "contraction"}
      ins(%x, %w : memref<8x64xf32>, memref<64x48xf32>) outs(%half : memref<8x48xf32, strided<[96, 1]>>)
  return
}
