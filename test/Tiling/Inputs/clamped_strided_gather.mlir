// Two reads of one row at stride 2, clamped into it (unmasked: the clamp is the value at the row's edges):
// out[n, c, w] = x[n, c, clamp(2w + 3, 0, 31)] - x[n, c, clamp(2w - 3, 0, 31)]. Used by
// launches-as-loops-pooling.py.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%x: tensor<2x3x32xf32>) -> tensor<2x3x16xf32> {
  %e = tensor.empty() : tensor<2x3x16xf32>
  %r = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x3x16xf32>) {
  ^bb0(%out: f32):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c31 = arith.constant 31 : index
    %n = linalg.index 0 : index
    %c = linalg.index 1 : index
    %w = linalg.index 2 : index
    %twice = arith.muli %w, %c2 : index
    %right = arith.addi %twice, %c3 : index
    %rlow = arith.maxsi %right, %c0 : index
    %rcol = arith.minsi %rlow, %c31 : index
    %left = arith.subi %twice, %c3 : index
    %lhigh = arith.minsi %left, %c31 : index
    %lcol = arith.maxsi %lhigh, %c0 : index
    %a = tensor.extract %x[%n, %c, %rcol] : tensor<2x3x32xf32>
    %b = tensor.extract %x[%n, %c, %lcol] : tensor<2x3x32xf32>
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x3x16xf32>
  return %r : tensor<2x3x16xf32>
}
