// RUN: fusec-opt %s --split-input-file --fusec-clone-cheap-producers | FileCheck %s

// Cross-entropy's mask of ignored targets has three readers, one of which counts it over every row:
// each reader gets its own copy, computed from the targets.
// CHECK-LABEL: func.func @mask
// CHECK-COUNT-3: arith.cmpi ne
// CHECK-NOT:     arith.cmpi ne
#one = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @mask(%t: tensor<64xi64>, %x: tensor<64xf32>) -> (tensor<64xi64>, tensor<64xf32>, tensor<i64>) {
  %c-100 = arith.constant -100 : i64
  %c0 = arith.constant 0 : i64
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xi1>
  %m = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]} ins(%t : tensor<64xi64>) outs(%e : tensor<64xi1>) {
  ^bb0(%in: i64, %out: i1):
    %ne = arith.cmpi ne, %in, %c-100 : i64
    linalg.yield %ne : i1
  } -> tensor<64xi1>
  %ei = tensor.empty() : tensor<64xi64>
  %a = linalg.generic {indexing_maps = [#one, #one, #one], iterator_types = ["parallel"]} ins(%m, %t : tensor<64xi1>, tensor<64xi64>) outs(%ei : tensor<64xi64>) {
  ^bb0(%k: i1, %in: i64, %out: i64):
    %s = arith.select %k, %in, %c0 : i64
    linalg.yield %s : i64
  } -> tensor<64xi64>
  %ef = tensor.empty() : tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#one, #one, #one], iterator_types = ["parallel"]} ins(%m, %x : tensor<64xi1>, tensor<64xf32>) outs(%ef : tensor<64xf32>) {
  ^bb0(%k: i1, %in: f32, %out: f32):
    %s = arith.select %k, %in, %z : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e0 = tensor.empty() : tensor<i64>
  %f = linalg.fill ins(%c0 : i64) outs(%e0 : tensor<i64>) -> tensor<i64>
  %n = linalg.generic {indexing_maps = [#one, #all], iterator_types = ["reduction"]} ins(%m : tensor<64xi1>) outs(%f : tensor<i64>) {
  ^bb0(%k: i1, %acc: i64):
    %w = arith.extui %k : i1 to i64
    %s = arith.addi %w, %acc : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  return %a, %b, %n : tensor<64xi64>, tensor<64xf32>, tensor<i64>
}

// -----

// Readers that all keep the rows (a LayerNorm's mean and centring read one cast) share one copy.
// CHECK-LABEL: func.func @rows
// CHECK-COUNT-1: arith.extf
// CHECK-NOT:     arith.extf
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: tensor<8x64xbf16>) -> (tensor<8xf32>, tensor<8x64xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xbf16>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x64xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%c : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %g = arith.negf %in : f32
    linalg.yield %g : f32
  } -> tensor<8x64xf32>
  return %s, %n : tensor<8xf32>, tensor<8x64xf32>
}

// -----

// Llama's rotary table in bf16: the cast of cos to fp32 is read by q's product and by k's, which
// loop over different extents (fewer kv heads): other kernels, so each gets its own copy.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-2: arith.extf
// CHECK-NOT:     arith.extf
#t = affine_map<(d0, d1) -> (0, d1)>
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d0, d1)>
func.func @apart(%cos: tensor<1x8xbf16>, %q: tensor<4x8xf32>, %k: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<2x8xf32>) {
  %e = tensor.empty() : tensor<1x8xf32>
  %c = linalg.generic {indexing_maps = [#c, #c], iterator_types = ["parallel", "parallel"]} ins(%cos : tensor<1x8xbf16>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<1x8xf32>
  %eq = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#t, #x, #x], iterator_types = ["parallel", "parallel"]} ins(%c, %q : tensor<1x8xf32>, tensor<4x8xf32>) outs(%eq : tensor<4x8xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %ek = tensor.empty() : tensor<2x8xf32>
  %b = linalg.generic {indexing_maps = [#t, #x, #x], iterator_types = ["parallel", "parallel"]} ins(%c, %k : tensor<1x8xf32>, tensor<2x8xf32>) outs(%ek : tensor<2x8xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<2x8xf32>
}
