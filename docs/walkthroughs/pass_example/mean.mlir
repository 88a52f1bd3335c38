func.func @mean(%sum: f32) -> f32 {
  %n = arith.constant 4096.0 : f32
  %y = arith.divf %sum, %n : f32
  return %y : f32
}
