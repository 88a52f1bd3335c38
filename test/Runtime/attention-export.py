# fusec.compile of an attention block on CUDA tensors: torch.export traced scaled_dot_product_attention
# as `_scaled_dot_product_efficient_attention` there, which torch-mlir does not import ("transformer
# block fusec.compile with CUDA inputs fails", session 32). The export now asks for SDPA's math (its
# matmuls and softmax), as on the CPU: the block compiles and matches eager, in fp32 and in bf16.

# REQUIRES: cuda
# RUN: %python %s %S/../CPU/Inputs | FileCheck %s
# CHECK: fp32: close True
# CHECK: bf16: close True

import copy
import importlib.util
import os
import sys

import torch

import fusec

spec = importlib.util.spec_from_file_location("attention_block", os.path.join(sys.argv[1], "attention_block.py"))
block = importlib.util.module_from_spec(spec)
spec.loader.exec_module(block)

for label, dtype, tol in (("fp32", torch.float32, 1e-4), ("bf16", torch.bfloat16, 3e-2)):
    model = copy.deepcopy(block.model).cuda().to(dtype)
    x = torch.randn(4, 128, 64, device="cuda", dtype=dtype)
    fn = fusec.compile(model, (x,))
    with torch.no_grad():
        want = model(x)
    got = fn(x)
    print(f"{label}: close {torch.allclose(got.float(), want.float(), rtol=tol, atol=tol)}")
