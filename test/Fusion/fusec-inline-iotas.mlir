// RUN: fusec-opt %s --split-input-file --fusec-inline-iotas | FileCheck %s

// torch.arange(1000) * x: the reader computes the iota from its own loop index 1 (the dim its map
// read the iota at); the iota op and its operand go.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#one = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @scale_by_arange(
// CHECK-SAME:      %[[X:.*]]: tensor<8x1000xf32>)
// CHECK-NOT:     linalg.index 0
// CHECK:         linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<8x1000xf32>)
// CHECK-NEXT:    ^bb0(%[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT:      %[[A:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:      %[[F:.*]] = arith.sitofp %[[A]] : i64 to f32
// CHECK-NEXT:      arith.mulf %[[F]], %[[B]] : f32
// CHECK-NOT:     linalg.generic
func.func @scale_by_arange(%x: tensor<8x1000xf32>) -> tensor<8x1000xf32> {
  %e = tensor.empty() : tensor<1000xi64>
  %iota = linalg.generic {indexing_maps = [#one], iterator_types = ["parallel"]} outs(%e : tensor<1000xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<1000xi64>
  %o = tensor.empty() : tensor<8x1000xf32>
  %y = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%iota, %x : tensor<1000xi64>, tensor<8x1000xf32>) outs(%o : tensor<8x1000xf32>) {
  ^bb0(%a: i64, %b: f32, %out: f32):
    %f = arith.sitofp %a : i64 to f32
    %m = arith.mulf %f, %b : f32
    linalg.yield %m : f32
  } -> tensor<8x1000xf32>
  return %y : tensor<8x1000xf32>
}

// -----

// A chain of iotas (`arange(300) * 3` then minus a row index, T5's relative positions): the reader
// with no input left is an iota in turn, so the chain folds into the first reader with data (here
// the output's own old value does not count: the subtraction reads none). A unit dim read at 0
// (the 1x300 iota) reads index 0.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#unit = affine_map<(d0, d1) -> (0, d1)>
#one = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @relative_positions(
// CHECK-SAME:      %[[P:.*]]: tensor<256xi64>)
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel"]} ins(%[[P]] : tensor<256xi64>)
// CHECK-NEXT:    ^bb0(%[[Q:.*]]: i64, %{{.*}}: i64):
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      %[[J:.*]] = linalg.index 1 : index
// CHECK-NEXT:      arith.addi %[[ZERO]], %[[J]] : index
// CHECK:           arith.muli
// CHECK:           arith.subi %{{.*}}, %[[Q]] : i64
// CHECK:         return %[[R]]
func.func @relative_positions(%q: tensor<256xi64>) -> tensor<256x300xi64> {
  %c3 = arith.constant 3 : i64
  %e = tensor.empty() : tensor<1x300xi64>
  %iota = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<1x300xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %v = arith.index_cast %s : index to i64
    linalg.yield %v : i64
  } -> tensor<1x300xi64>
  %times3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%iota : tensor<1x300xi64>) outs(%e : tensor<1x300xi64>) {
  ^bb0(%a: i64, %out: i64):
    %m = arith.muli %a, %c3 : i64
    linalg.yield %m : i64
  } -> tensor<1x300xi64>
  %o = tensor.empty() : tensor<256x300xi64>
  %r = linalg.generic {indexing_maps = [#unit, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%times3, %q : tensor<1x300xi64>, tensor<256xi64>) outs(%o : tensor<256x300xi64>) {
  ^bb0(%a: i64, %b: i64, %out: i64):
    %d = arith.subi %a, %b : i64
    linalg.yield %d : i64
  } -> tensor<256x300xi64>
  return %r : tensor<256x300xi64>
}

// -----

// A reader that reduces keeps reading the iota (its loops may be split later, which would change
// what its linalg.index means); so does the function's return, and an iota read by both a
// pointwise op and the return stays for the return.
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#one = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[IOTA:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<64xf32>)
// CHECK:           linalg.index 0
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[IOTA]], %{{.*}} : tensor<64xf32>, tensor<8x64xf32>)
// CHECK:         %[[ADD:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xf32>)
// CHECK:           linalg.index 1
// CHECK:         return %{{.*}}, %[[ADD]], %[[IOTA]]
func.func @kept(%x: tensor<8x64xf32>, %init: tensor<8xf32>) -> (tensor<8xf32>, tensor<8x64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %iota = linalg.generic {indexing_maps = [#one], iterator_types = ["parallel"]} outs(%e : tensor<64xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#col, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%iota, %x : tensor<64xf32>, tensor<8x64xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %o = tensor.empty() : tensor<8x64xf32>
  %add = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%iota, %x : tensor<64xf32>, tensor<8x64xf32>) outs(%o : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %sum, %add, %iota : tensor<8xf32>, tensor<8x64xf32>, tensor<64xf32>
}

// -----

// A generic of no inputs that reads a tensor at indices it computes (nearest upsampling) is not an
// iota: its reader keeps reading it.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @upsample_not_an_iota(
// CHECK:         %[[UP:.*]] = linalg.generic
// CHECK:           tensor.extract
// CHECK:         linalg.generic {{.*}} ins(%[[UP]] : tensor<4x16xf32>)
func.func @upsample_not_an_iota(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x16xf32>
  %up = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %h = arith.divui %j, %c2 : index
    %v = tensor.extract %x[%i, %h] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%up : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
