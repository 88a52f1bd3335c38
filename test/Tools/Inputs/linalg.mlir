// A small module in linalg on tensors (x + 1), the input of the command-line error tests.
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %e = tensor.empty() : tensor<64xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %out: f32):
    %1 = arith.addf %a, %one : f32
    linalg.yield %1 : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
