# Bools in a vectorized kernel are read and written a byte at a time. An i1 memref holds a byte per
# element, but a vector<16xi1> in memory is 16 packed bits (LLVM's layout): the masked softmax below
# (64 rows: 16 lanes, since the mask's elements are bytes) read 2 bytes of its mask for 16 elements
# and gave wrong values in every row on the GPU. Now the mask's 16 bytes are 16 scalar loads made
# into the vector; x keeps its 128-bit vector loads, and a bool output (`keep`) is stored by element.

# RUN: fusec %s --emit tiled | FileCheck %s

# CHECK:     gpu.launch
# CHECK-NOT: vector<16xi1>
# CHECK:     memref.load %{{.*}} : memref<64x2048xi1>
# CHECK:     vector.from_elements {{.*}} : vector<16xi1>
# CHECK:     vector.load %{{.*}} : memref<64x2048xf32>, vector<16xf32>
# CHECK-NOT: vector.store {{.*}}xi1>
# CHECK:     memref.store %{{.*}} : memref<64x2048xi1>

import torch


def model(x, mask):
    probs = torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
    return probs, probs > 1e-4


example_inputs = (torch.randn(64, 2048), torch.rand(64, 2048) < 0.5)
