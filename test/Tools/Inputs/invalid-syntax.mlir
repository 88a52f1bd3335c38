// IR that does not parse (an op without its type, line 4, column 25), for the tools' error tests.
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = arith.addf %x, %x
  return %0 : tensor<64xf32>
}
