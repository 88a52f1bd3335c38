// --fusec-blockwise-sums: a float sum of more than `block` elements becomes a sum into partials over
// the innermost reduced dim, then a sum of the partials into the original output. The cpu target
// runs it with its defaults, after fusion; the cuda target before fusion with few-outputs (only sums
// into fewer outputs than that: a whole tensor's, which one block used to sum alone) and
// final-block 65536 (a sum of up to 65536 partials is one kernel; a row of up to 65536 with no
// divisor to block it by is kept whole as the partials' rows).

// RUN: fusec-opt %s --fusec-blockwise-sums | FileCheck %s
// RUN: fusec-opt %s '--fusec-blockwise-sums=block=4096 few-outputs=4 final-block=65536 online-sums=1' | FileCheck %s --check-prefix=CUDA

// A whole 512x1024 tensor: 512 partials of 1024, then one sum of 512 from the original init.
// CHECK-LABEL: func.func @whole
// CHECK:         %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : tensor<512xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<512x1024xf32>) outs(%[[ZERO]] : tensor<512xf32>)
// CHECK:           math.fpowi
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<512xf32>) outs(%arg1 : tensor<f32>)
// CUDA-LABEL:  func.func @whole
// CUDA:          %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<512x1024xf32>) outs(%{{.*}} : tensor<512xf32>)
// CUDA:          linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<512xf32>) outs(%arg1 : tensor<f32>)
func.func @whole(%x: tensor<512x1024xf32>, %init: tensor<f32>) -> tensor<f32> {
  %c2 = arith.constant 2 : i64
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]} ins(%x : tensor<512x1024xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = math.fpowi %a, %c2 : f32, i64
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// Rows of 8192: each row read as [2, 4096], 2 partials per row, then a sum of them.
// CHECK-LABEL: func.func @rows
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 2, 4096] : tensor<4x8192xf32> into tensor<4x2x4096xf32>
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[E]] : tensor<4x2x4096xf32>) outs(%{{.*}} : tensor<4x2xf32>)
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[P]] : tensor<4x2xf32>) outs(%arg1 : tensor<4xf32>)
// cuda: 4 outputs are not few (few-outputs=4): left to the row schedules.
// CUDA-LABEL:  func.func @rows
// CUDA-NOT:      tensor.expand_shape
// CUDA-COUNT-1:  linalg.generic
// CUDA-NOT:      linalg.generic
func.func @rows(%x: tensor<4x8192xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Left alone: a max (it rounds nothing), a short sum, and a prime length (no divisor to block it by).
// CHECK-LABEL: func.func @alone
// CUDA-LABEL:  func.func @alone
// CHECK-NOT:     tensor.expand_shape
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @alone(%x: tensor<4x8192xf32>, %y: tensor<4x1000xf32>, %z: tensor<4x8191xf32>, %init: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8192xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.maximumf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %short = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x1000xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %prime = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]} ins(%z : tensor<4x8191xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %m, %short, %prime : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// A whole 3x8191 tensor: 8191 has no divisor in [512, 4096]. The cpu target leaves it; the cuda
// target keeps each row of 8191 whole: 3 partials, then their sum.
// CHECK-LABEL:  func.func @prime_whole
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT:     linalg.generic
// CUDA-LABEL:   func.func @prime_whole
// CUDA-NOT:       tensor.expand_shape
// CUDA:           %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%arg0 : tensor<3x8191xf32>) outs(%{{.*}} : tensor<3xf32>)
// CUDA:           linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<3xf32>) outs(%arg1 : tensor<f32>)
func.func @prime_whole(%x: tensor<3x8191xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]} ins(%x : tensor<3x8191xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A row sum read back over its rows (softmax's division): the cpu target splits it like any long
// sum; the cuda target leaves it, with its division, to the row schedules' one kernel.
// CHECK-LABEL:  func.func @read_back
// CHECK:          tensor.expand_shape
// CUDA-LABEL:   func.func @read_back
// CUDA-NOT:       tensor.expand_shape
// CUDA-COUNT-2:   linalg.generic
// CUDA-NOT:       linalg.generic
func.func @read_back(%x: tensor<2x8192xf32>, %init: tensor<2xf32>, %o: tensor<2x8192xf32>) -> tensor<2x8192xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<2x8192xf32>) outs(%init : tensor<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<2xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<2x8192xf32>, tensor<2xf32>) outs(%o : tensor<2x8192xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<2x8192xf32>
  return %d : tensor<2x8192xf32>
}

// cuda: a sum of exp(x - c) whose x a max reduces too (logsumexp's, cross-entropy's) is left whole,
// however few its rows, when the online pass is on (online-sums=1): the row kernel computes the max
// and the sum in one read (codegen/online_softmax.py), a block a row. A sum of exp(x - c) with no max
// of x is split as any other.
// CHECK-LABEL:  func.func @sum_of_exp
// CHECK:          tensor.expand_shape
// CUDA-LABEL:   func.func @sum_of_exp
// CUDA-NOT:       tensor.expand_shape
// CUDA-COUNT-3:   linalg.generic
// CUDA-NOT:       linalg.generic
// CUDA-LABEL:   func.func @exp_without_max
// CUDA:           tensor.expand_shape
func.func @sum_of_exp(%x: tensor<3x8192xf32>, %minit: tensor<3xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%x : tensor<3x8192xf32>) outs(%minit : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  %e = tensor.empty() : tensor<3x8192xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x, %c : tensor<3x8192xf32>, tensor<3xf32>) outs(%e : tensor<3x8192xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<3x8192xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%y : tensor<3x8192xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}

func.func @exp_without_max(%x: tensor<3x8192xf32>, %c: tensor<3xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %e = tensor.empty() : tensor<3x8192xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} ins(%x, %c : tensor<3x8192xf32>, tensor<3xf32>) outs(%e : tensor<3x8192xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %t = math.exp %d : f32
    linalg.yield %t : f32
  } -> tensor<3x8192xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]} ins(%y : tensor<3x8192xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// cuda: a pointwise chain that makes the summed tensor is rebuilt over the split dim (it reads the
// model's input through the expand_shape, so that the chain still fuses with the partial sums); one
// that something else reads too is copied, and the original stays for that reader. (A sum of at
// most 16384 elements is left to one block: 32768 here.)
// CUDA-LABEL:   func.func @chain
// CUDA:           %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [8, 4096] : tensor<32768xf32> into tensor<8x4096xf32>
// CUDA:           %[[X2:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[E]] : tensor<8x4096xf32>)
// CUDA:             math.exp
// CUDA:           %[[KEPT:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<32768xf32>)
// CUDA:             math.exp
// CUDA:           %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[X2]] : tensor<8x4096xf32>) outs(%{{.*}} : tensor<8xf32>)
// CUDA:           %[[S:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[P]] : tensor<8xf32>)
// CUDA:           return %[[S]], %[[KEPT]]
func.func @chain(%x: tensor<32768xf32>, %init: tensor<f32>) -> (tensor<f32>, tensor<32768xf32>) {
  %e = tensor.empty() : tensor<32768xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]} ins(%x : tensor<32768xf32>) outs(%e : tensor<32768xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<32768xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]} ins(%y : tensor<32768xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %s, %y : tensor<f32>, tensor<32768xf32>
}
