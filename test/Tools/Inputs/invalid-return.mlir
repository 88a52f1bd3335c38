// IR that parses but does not verify (a return of the wrong type), for fusec's error test.
func.func @main(%x: tensor<4xf32>) -> tensor<8xf32> {
  return %x : tensor<4xf32>
}
