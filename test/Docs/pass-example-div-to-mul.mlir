// The example pass of walkthrough 6 (docs/walkthroughs/06-writing-a-pass.md), tested as a fusec pass is.
// RUN: %python %walkthroughs/pass_example/fusec_opt_with_example.py %s --fusec-div-to-mul | FileCheck %s

// CHECK-LABEL: func.func @mean
// CHECK:         %[[R:.*]] = arith.constant 2.44140625E-4 : f32
// CHECK:         %[[Y:.*]] = arith.mulf %{{.*}}, %[[R]] : f32
// CHECK-NOT:     arith.divf
// CHECK:         return %[[Y]]
func.func @mean(%sum: f32) -> f32 {
  %n = arith.constant 4096.0 : f32
  %y = arith.divf %sum, %n : f32
  return %y : f32
}

// CHECK-LABEL: func.func @third
// CHECK:         arith.divf
func.func @third(%x: f32) -> f32 {
  %c = arith.constant 3.0 : f32
  %y = arith.divf %x, %c : f32
  return %y : f32
}
