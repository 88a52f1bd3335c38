# A float sum over a long row is accumulated in two levels (codegen/row_loop.py, `_BLOCK_TRIPS`): a
# thread sums 64 trips into a fresh accumulator (the inner loop), then adds it to its total (the outer
# loop). A mean of x**2 over 32768x4096, one row of 2**27 elements for a block of 256 threads, folded
# 131072 elements into each lane one after the other, and was off by 2.0e-5 relative on the H200.
# That mean is now two kernels by default (`split_sums`: partial sums of rows, then their sum); with
# `--split-sums 0` it is the one long row again, as a normalization of a few long rows still is.

# RUN: fusec %s --emit tiled --split-sums 0 | FileCheck %s

# CHECK:     gpu.launch
# CHECK:     %[[TOTAL:.*]] = scf.for %[[BLOCK:.*]] = %{{.*}} to %[[END:.*]] step %c65536 iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<4xf32>)
# CHECK:       %[[STOP:.*]] = arith.minui %{{.*}}, %[[END]]
# CHECK:       %[[PART:.*]] = scf.for %{{.*}} = %[[BLOCK]] to %[[STOP]] step %c1024 iter_args(%{{.*}}) -> (vector<4xf32>)
# CHECK:       arith.addf %[[ACC]], %[[PART]] : vector<4xf32>
# CHECK:     vector.reduction <add>, %[[TOTAL]]

import torch


def model(x):
    return x.pow(2).mean()


example_inputs = (torch.randn(32768, 4096),)
