# The ops torch.export records for scaled_dot_product_attention on CUDA tensors
# (`_scaled_dot_product_efficient_attention`, `_scaled_dot_product_flash_attention`, which torch-mlir
# does not import) compile as attention's math (frontend/attention_math.py) and match
# F.scaled_dot_product_attention: causal, a float bias, a boolean mask, a scale; fp32 and bf16 (the
# math in fp32, rounded once, as PyTorch's math backend). The cpu target runs them: the ops
# themselves have no CPU kernel, eager cannot run these models.

# RUN: %python %s | FileCheck %s
# CHECK: efficient causal fp32: close True
# CHECK: efficient bias fp32: close True
# CHECK: efficient bool-mask fp32: close True
# CHECK: flash scale fp32: close True
# CHECK: efficient causal bf16: close True
# CHECK: efficient bias bf16: close True
# CHECK: efficient bool-mask bf16: close True
# CHECK: flash scale bf16: close True

import torch
import torch.nn.functional as F

import fusec

aten = torch.ops.aten
torch.manual_seed(0)


class Efficient(torch.nn.Module):
    def __init__(self, is_causal):
        super().__init__()
        self.is_causal = is_causal

    def forward(self, q, k, v, mask=None):
        return aten._scaled_dot_product_efficient_attention(q, k, v, mask, False, 0.0, self.is_causal)[0] * 2


class Flash(torch.nn.Module):
    def forward(self, q, k, v):
        return aten._scaled_dot_product_flash_attention(q, k, v, 0.0, False, scale=0.3)[0] + 1


for label, dtype, tol in (("fp32", torch.float32, 1e-5), ("bf16", torch.bfloat16, 2e-2)):
    q, k, v = (torch.randn(2, 4, 16, 8, dtype=dtype) for _ in range(3))
    bias = torch.randn(2, 1, 16, 16, dtype=dtype)
    keep = torch.rand(16, 16) > 0.3
    keep[:, 0] = True  # no row without a key
    cases = [
        ("efficient causal", Efficient(True), (q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True) * 2),
        ("efficient bias", Efficient(False), (q, k, v, bias), F.scaled_dot_product_attention(q, k, v, bias) * 2),
        ("efficient bool-mask", Efficient(False), (q, k, v, keep), F.scaled_dot_product_attention(q, k, v, keep) * 2),
        ("flash scale", Flash(), (q, k, v), F.scaled_dot_product_attention(q, k, v, scale=0.3) + 1),
    ]
    for name, model, args, want in cases:
        got = fusec.compile(model, args, target="cpu")(*args)
        close = got.dtype == dtype and torch.allclose(got.float(), want.float(), rtol=tol, atol=tol)
        print(f"{name} {label}: close {close}")
