// `fusec FILE.mlir -o OUT.ptx` on the seed model in linalg (4 x 64): the PTX holds one .entry per
// kernel (one here: a block per row, one warp: each thread loads 4 floats at once, the sum of
// squares is reduced with five warp shuffles, no shared memory and no barrier: a one-warp block
// needs neither), libdevice linked in (no .extern calls left); OUT.json beside it is the launch
// manifest: inputs, buffers, and one launch step per kernel with its grid, block and arguments.

// RUN: rm -rf %t && mkdir -p %t
// RUN: fusec %s -o %t/seed.ptx | FileCheck %s --check-prefix=SUMMARY
// RUN: FileCheck %s --check-prefix=PTX --input-file %t/seed.ptx
// RUN: %python -m json.tool --no-indent %t/seed.json | FileCheck %s --check-prefix=MANIFEST
// RUN: fusec %s --emit ptx --arch sm_80 | FileCheck %s --check-prefix=SM80

// SUMMARY:      fusec: emitted 1 kernel, 1 launch -> {{.*}}seed.ptx (+ {{.*}}seed.json)
// SUMMARY-NEXT:   main_kernel_0 grid (4, 1, 1) block (32, 1, 1)

// PTX:       .target sm_90
// PTX:       .address_size 64
// PTX-NOT:   .extern
// PTX-LABEL: .visible .entry main_kernel_0(
// PTX-NEXT:    .param .u64 .ptr .align 1 main_kernel_0_param_0,
// PTX:         .maxntid 32, 1, 1
// PTX-NOT:     .shared
// PTX:         ld.global.v4.b32
// PTX-COUNT-5: shfl.sync.bfly.b32
// PTX-NOT:     bar.sync
// PTX:         ex2.approx
// PTX:         ret;
// PTX-NOT:   .entry
// PTX-NOT:   __nv_

// MANIFEST: "format": "fusec-manifest/1", "target": "cuda", "ptx": "seed.ptx", "arch": "sm_90", "function": "main"
// MANIFEST-SAME: "inputs": [{"name": "arg0", "shape": [4, 64], "dtype": "float32", "role": "input"}
// MANIFEST-SAME: {"name": "arg1", "shape": [64], "dtype": "float32", "role": "input"}
// MANIFEST-SAME: {"name": "arg2", "shape": [4, 64], "dtype": "float32", "role": "input"}
// MANIFEST-SAME: "outputs": [{"buffer": "[[OUT:buf[0-9]+]]", "shape": [4, 64], "dtype": "float32"}]
// MANIFEST-SAME: "buffers": [{"name": "[[OUT]]", "shape": [4, 64], "dtype": "float32", "role": "output"}]
// MANIFEST-SAME: "steps": [{"op": "launch", "kernel": "main_kernel_0", "grid": [4, 1, 1], "block": [32, 1, 1], "shared_bytes": 0, "args": [{"kind": "buffer", "name": "arg0"}, {"kind": "buffer", "name": "arg2"}, {"kind": "buffer", "name": "arg1"}, {"kind": "buffer", "name": "[[OUT]]"}]}]
// MANIFEST-SAME: "kernels": ["main_kernel_0"]

// SM80:      .target sm_80
// SM80:      .visible .entry main_kernel_0(

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d0, 0)>
#map2 = affine_map<(d0, d1) -> (d1)>
module {
  func.func @main(%arg0: tensor<4x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<4x64xf32>) -> tensor<4x64xf32> {
    %c2_i64 = arith.constant 2 : i64
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e+00 : f32
    %cst_1 = arith.constant 9.9999999999999995E-7 : f64
    %cst_2 = arith.constant 6.400000e+01 : f32
    %0 = tensor.empty() : tensor<4x64xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.fpowi %in, %c2_i64 : f32, i64
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %2 = tensor.empty() : tensor<4x1xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4x1xf32>) -> tensor<4x1xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "reduction"]} ins(%1 : tensor<4x64xf32>) outs(%3 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.addf %in, %out : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.divf %in, %cst_2 : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%5 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.truncf %cst_1 : f64 to f32
      %14 = arith.addf %in, %13 : f32
      linalg.yield %14 : f32
    } -> tensor<4x1xf32>
    %7 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%6 : tensor<4x1xf32>) outs(%2 : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = math.rsqrt %in : f32
      linalg.yield %13 : f32
    } -> tensor<4x1xf32>
    %8 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0, %7 : tensor<4x64xf32>, tensor<4x1xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %9 = linalg.generic {indexing_maps = [#map, #map2, #map], iterator_types = ["parallel", "parallel"]} ins(%8, %arg1 : tensor<4x64xf32>, tensor<64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%9 : tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %13 = arith.negf %in : f32
      %14 = math.exp %13 : f32
      %15 = arith.addf %14, %cst_0 : f32
      %16 = arith.divf %cst_0, %15 : f32
      linalg.yield %16 : f32
    } -> tensor<4x64xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %10 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    %12 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%11, %arg2 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%0 : tensor<4x64xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %13 = arith.mulf %in, %in_3 : f32
      linalg.yield %13 : f32
    } -> tensor<4x64xf32>
    return %12 : tensor<4x64xf32>
  }
}
