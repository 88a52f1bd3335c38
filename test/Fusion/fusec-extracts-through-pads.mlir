// RUN: fusec-opt %s --split-input-file --fusec-extracts-through-pads | FileCheck %s

// A gather from a constant pad (max_pool2d's indices read the padded input at `o * 2 + k`): the
// element is read from x itself at the index minus the low pad, clamped into [0, 8] along each
// padded dim, and is -inf where the index falls outside x. The pad is gone (it was a host subview).
// CHECK-LABEL: func.func @extract_of_pad
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x9x9xf32>, %[[H:.*]]: index, %[[W:.*]]: index, %[[N:.*]]: index)
// CHECK-NOT:     tensor.pad
// CHECK:         %[[H1:.*]] = arith.subi %[[H]], %[[ONE:.*]] : index
// CHECK:         arith.cmpi sge, %[[H1]]
// CHECK:         arith.cmpi slt, %[[H1]]
// CHECK:         %[[HC:.*]] = arith.minsi
// CHECK:         %[[W1:.*]] = arith.subi %[[W]]
// CHECK:         %[[WC:.*]] = arith.minsi
// CHECK:         %[[V:.*]] = tensor.extract %[[X]][%[[N]], %[[N]], %[[HC]], %[[WC]]] : tensor<2x4x9x9xf32>
// CHECK:         %[[R:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK:         return %[[R]]
func.func @extract_of_pad(%x: tensor<2x4x9x9xf32>, %h: index, %w: index, %n: index) -> f32 {
  %ninf = arith.constant 0xFF800000 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<2x4x9x9xf32> to tensor<2x4x11x11xf32>
  %v = tensor.extract %padded[%n, %n, %h, %w] : tensor<2x4x11x11xf32>
  return %v : f32
}

// -----

// A pad that something else reads too (here returned whole) stays for that reader; the extract
// still reads x. A dim padded on its high side alone (ceil_mode) is bounds-checked without a shift.
// CHECK-LABEL: func.func @pad_kept
// CHECK:         %[[P:.*]] = tensor.pad
// CHECK-NOT:     arith.subi
// CHECK:         arith.cmpi slt
// CHECK:         tensor.extract %arg0
// CHECK:         return %[[P]]
func.func @pad_kept(%x: tensor<4x7xf32>, %i: index) -> (tensor<4x8xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0] high[0, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %zero : f32
  } : tensor<4x7xf32> to tensor<4x8xf32>
  %v = tensor.extract %padded[%i, %i] : tensor<4x8xf32>
  return %padded, %v : tensor<4x8xf32>, f32
}
