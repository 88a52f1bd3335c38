# fusec fuzz rejection (target cpu, seed 0): unsupported
#   error: stage 'fused' failed: /tmp/fusec-fuzz-n6bg_n8k/model_a0f8364b1a93.py:13:1: error: fusec-form-groups: a reduction over the dynamic row count (tensor<?x8192xf32>) is not supported: kernels reduce along static dims; compile with a static row count, or reduce over another dim
#   note: reproduce with: fusec-opt /tmp/fusec-repro-fused-ucu2s6ax.mlir --fusec-narrow-f64 --fusec-broadcast-batch-matmuls --fusec-contraction-operands --fusec-narrow-library-matmuls=wgmma=0 --fusec-pooling-to-generic --fusec-max-index-nans --fusec-extracts-through-pads --fusec-unroll-window-reductions --fusec-reshape-pointwise-loops --fusec-inline-broadcast-producers --fusec-reshapes-before-pointwise --fusec-bound-gather-indices --fusec-gathers-through-pointwise --fusec-concat-to-generic --fusec-fold-layout-ops=library-slices=1 --fusec-extracts-to-index-maps --fusec-erase-unused-results --fusec-fold-empty-tensors --fusec-materialize-returned-constants --fusec-fold-splat-constants --fusec-fold-unit-reshapes --fusec-inline-iotas '--pass-pipeline=builtin.module(func.func(resolve-ranked-shaped-type-result-dims), canonicalize, cse)' --fusec-hoist-parallel-dims --fusec-clone-cheap-producers --fusec-classify-ops '--fusec-form-groups=fusion=full max-registers=128 recompute-budget=16 wgmma=0'
# reproduce: fusec fuzz --replay fuzz-failures/rejected/seed0-2.py --target cpu --dynamic-rows
"""fusec fuzz model: cast, scalar, cast, amax on float32[7, 8192]."""
# fuzz-oracle: narrowest=float16 longest-reduction=7

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = x0.to(torch.float16)
    v1 = v0 * -1.5
    v2 = v1.float()
    v3 = torch.amax(v2, dim=0)
    return v3


model = fuzz_model
example_inputs = (torch.randn(7, 8192),)
