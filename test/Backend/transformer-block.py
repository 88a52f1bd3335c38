# torch.compile(backend="fusec") on the CPU: a transformer block (RMSNorm, causal attention through
# F.scaled_dot_product_attention, SwiGLU MLP, residuals) matches eager in fp32 and bf16. The report
# shows fusec's four regions (RMSNorm; residual add + RMSNorm; SiLU * up; the last residual add) and
# leaves the matmuls, the attention and the head split to PyTorch, each with its reason.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import TransformerBlock, close, private_cache, randomize, run

private_cache()
import fusec.torch_backend as tb
import torch


# CHECK-LABEL: TEST: fp32
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 46 ATen ops -> 4 fusec regions (4 kernels, cpu), 30 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  pow, mean, add, rsqrt, mul, mul -> main_kernel_0 [compiled
# CHECK-NEXT:    fusec   fusec_region_1  cpu  add, pow, mean, add, rsqrt, mul, mul -> main_kernel_0 [compiled
# CHECK-NEXT:    fusec   fusec_region_2  cpu  silu, mul -> main_kernel_0 [compiled
# CHECK-NEXT:    fusec   fusec_region_3  cpu  add -> main_kernel_0 [compiled
# CHECK-NEXT:    pytorch aten._scaled_dot_product_flash_attention_for_cpu  attention: PyTorch's fused attention kernel
# CHECK-NEXT:    pytorch aten._unsafe_view x5 {{ *}} a view with no arithmetic beside it
# CHECK-NEXT:    pytorch aten.mm x5 {{ *}} matmul (contraction)
# CHECK-NEXT:    pytorch aten.split {{ *}} a view with no arithmetic beside it
# CHECK-NEXT:    pytorch aten.t x5 {{ *}} a view
# CHECK-NEXT:    pytorch aten.transpose x4 {{ *}} a view
# CHECK-NEXT:    pytorch aten.view x9 {{ *}} a view
@run
def fp32():
    model = randomize(TransformerBlock())
    compiled = torch.compile(model, backend="fusec")
    with torch.no_grad():
        x1, x2 = torch.randn(2, 16, 64), torch.randn(2, 16, 64)
        print("matches eager:", close(compiled(x1), model(x1)), close(compiled(x2), model(x2)))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: bf16
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec regions: 4, ops in each: [8, 9, 2, 1]
@run
def bf16():
    # bf16 eager rounds after every op, fusec computes a region in fp32 and rounds once: compare
    # both with fp32 eager on the same bf16 weights and inputs, and allow bf16's rounding.
    model = randomize(TransformerBlock()).to(torch.bfloat16)
    compiled = torch.compile(model, backend="fusec")
    x = torch.randn(2, 16, 64, dtype=torch.bfloat16)
    with torch.no_grad():
        got = compiled(x)
        eager = model(x)
        exact = model.float()(x.float())
    err, eager_err = (got.float() - exact).abs().max().item(), (eager.float() - exact).abs().max().item()
    print("matches eager:", got.dtype == torch.bfloat16 and err <= 2 * eager_err + 1e-2)
    regions = tb.reports[-1].fusec_regions
    print(f"fusec regions: {len(regions)}, ops in each: {[len(r.ops) for r in regions]}")
