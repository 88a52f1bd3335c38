# REQUIRES: cuda
# GPT-2's LM head on the GPU (bf16, 4 x 512 tokens, 1024 wide, vocabulary 50257): cuBLAS falls back to
# an align1 kernel for logits rows of 50257, so the backend pads the weight to 50264 rows (both ways
# timed at compile time) and the report says so; the logits match eager's, a view of the padded
# product whose rows are 50264 apart (as Inductor returns them).
# An aligned vocabulary (32000) is left as it is.
# RUN: %python %s | FileCheck %s
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache

private_cache()
import torch

import fusec.torch_backend as tb


class Head(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.norm = torch.nn.LayerNorm(1024)
        self.lm_head = torch.nn.Linear(1024, vocab, bias=False)

    def forward(self, h):
        return self.lm_head(self.norm(h))


for vocab in (50257, 32000):
    torch.manual_seed(0)
    head = Head(vocab).to("cuda", torch.bfloat16)
    h = torch.randn(4, 512, 1024, device="cuda", dtype=torch.bfloat16)
    torch._dynamo.reset()
    got = torch.compile(head, backend="fusec")(h)
    want = head(h)
    err = ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()
    print(f"vocab {vocab}: padded {[line.split(':')[0] for line in tb.reports[-1].padded_matmuls]}; "
          f"row stride {got.stride(1)}; shape {list(got.shape)}; matches eager: {err < 1e-2}")
# CHECK: vocab 50257: padded ['mm 2048x1024 x 1024x50257']; row stride 50264; shape [4, 512, 50257]; matches eager: True
# CHECK: vocab 32000: padded []; row stride 32000; shape [4, 512, 32000]; matches eager: True
