// RUN: not fusec-opt %s --fusec-library-matmuls 2>&1 | FileCheck %s

// A matmul --fusec-narrow-library-matmuls gave a 16-bit result (`fusec.accumulate_f32`) must be a
// library call: the loop lowering would accumulate it in 16 bits. One the library cannot call (here
// its accumulator starts from ones) is an error naming why, not a silently less accurate kernel.
// CHECK: error: fusec-library-matmuls: a 16-bit matmul narrowed for the library cannot be called: its accumulator starts from something other than zeros
func.func @narrowed(%h: memref<16x32xbf16>, %g: memref<32x24xbf16>, %c: memref<16x24xbf16>) {
  %one = arith.constant 1.0 : bf16
  linalg.fill {fusec.group = 0 : i64, fusec.group_kind = "contraction"} ins(%one : bf16) outs(%c : memref<16x24xbf16>)
  linalg.matmul {fusec.group = 0 : i64, fusec.group_kind = "contraction", fusec.accumulate_f32}
      ins(%h, %g : memref<16x32xbf16>, memref<32x24xbf16>) outs(%c : memref<16x24xbf16>)
  return
}
