# Approximate divides by one value per row taken as a multiply by its reciprocal
# (fusec-reciprocal-divisors): softmax (the row's sum), F.normalize (the row's norm), and rows
# divided by a mean that is itself a quotient (the divisors are taken one at a time). Checked against float64 eager in both dtypes;
# each line also says how many reciprocals and divides the kernel's PTX has.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s
# CHECK: softmax fp32: ok rcp=1 div=0
# CHECK: softmax bf16: ok rcp=1 div=0
# CHECK: normalize fp32: ok rcp=1 div=0
# CHECK: normalize bf16: ok rcp=1 div=0
# CHECK: divide by mean fp32: ok rcp=1 div=0
# CHECK: divide by mean bf16: ok rcp=1 div=0

import re

import torch
import torch.nn.functional as F

import fusec
from fusec.numerics import compare

torch.manual_seed(0)

MODELS = {
    "softmax": lambda x: torch.softmax(x, -1),
    "normalize": lambda x: F.normalize(x, dim=-1),
    "divide by mean": lambda x: x / x.abs().mean(-1, keepdim=True) + (x * x).mean(-1, keepdim=True),
}

for name, fn in MODELS.items():
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(1000, 4000, device="cuda").to(dtype)
        compiled = fusec.compile(fn, (x,))
        ptx = compiled.compilation.artifact
        ptx = ptx if isinstance(ptx, str) else ptx.decode()
        max_abs, scale, _ = compare(compiled(x).double().cpu(), fn(x.double()).to(dtype).double().cpu())
        tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(scale, 1.0)
        print(f"{name} {'fp32' if dtype == torch.float32 else 'bf16'}: {'ok' if max_abs <= tol else 'WRONG'} "
              f"rcp={len(re.findall(r'rcp[.]approx', ptx))} div={len(re.findall(r'div[.](?:approx|rn|full)', ptx))} "
              f"(error {max_abs / tol:.2f} of tolerance)")
