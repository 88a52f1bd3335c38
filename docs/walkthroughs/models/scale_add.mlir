// y = x * 2 + b, at the linalg stage (linalg on tensors): `fusec scale_add.mlir` starts here.
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<4x1024xf32>, %b: tensor<1024xf32>) -> tensor<4x1024xf32> {
  %two = arith.constant 2.0 : f32
  %init = tensor.empty() : tensor<4x1024xf32>
  %y = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x1024xf32>, tensor<1024xf32>) outs(%init : tensor<4x1024xf32>) {
  ^bb0(%xv: f32, %bv: f32, %out: f32):
    %m = arith.mulf %xv, %two : f32
    %s = arith.addf %m, %bv : f32
    linalg.yield %s : f32
  } -> tensor<4x1024xf32>
  return %y : tensor<4x1024xf32>
}
