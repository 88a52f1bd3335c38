"""Running sums and products (`torch.cumsum`, `torch.cumprod`) inside fused kernels, checked against
eager in float64 on the device named by argv[1] (cpu or cuda), each with the kernel count it must
compile to: a scan with its pointwise prologue and epilogue is one kernel, whether it runs along the
innermost dim (a block per row on the GPU) or another (a thread per row); what reads the running
values at other elements than its own, or reduces them, is a kernel of its own. Run by
test/CPU/scans.test and test/Runtime/scans.test ("big": the GPU's sizes, rows of 1 to 128K)."""

import sys

import torch

import eager_check  # this directory (the script's) is on sys.path

torch.manual_seed(0)
device = torch.device(sys.argv[1])
big = len(sys.argv) > 2 and sys.argv[2] == "big"


def check(label, model, inputs, kernels):
    eager_check.check(label, model, inputs, kernels, device)


def randn(*shape, dtype=torch.float32):
    return torch.randn(*shape, device=device).to(dtype)


rows, width = (4096, 8192) if big else (64, 5000)
check("cumsum rows", lambda x: torch.cumsum(x * 2.0, -1) + 1.0, (randn(rows, width),), kernels=1)
check("cumsum rows bf16", lambda x: torch.cumsum(x, -1) * 0.5, (randn(rows, width, dtype=torch.bfloat16),),
      kernels=1)
check("cumsum long row", lambda x: x.cumsum(-1), (randn(2, 131072 if big else 20000),), kernels=1)
check("cumsum of a vector", lambda x: x.cumsum(0) * 0.5, (randn(100003),), kernels=1)

# The position ids of a padded batch (Hugging Face's `attention_mask.long().cumsum(-1) - 1`).
mask = (torch.rand(16, 1000, device=device) > 0.3).long()
check("position ids", lambda m: (m.cumsum(-1) - 1).masked_fill(m == 0, 1), (mask,), kernels=1)
check("bool cumsum", lambda x: (x > 0).cumsum(-1), (randn(16, 777),), kernels=1)
check("int32 cumsum", lambda x: x.cumsum(-1, dtype=torch.int32), (torch.randint(-9, 9, (16, 777), device=device,
                                                                                 dtype=torch.int32),), kernels=1)
check("float64 cumsum", lambda x: x.cumsum(-1), (randn(8, 3000, dtype=torch.float64),), kernels=1)
check("short rows", lambda x: x.cumsum(-1) - x, (randn(4096, 24),), kernels=1)

# Along other dims than the innermost: a thread per row, walking the scanned dim.
check("cumsum dim 1 bf16", lambda x: x.cumsum(1) * 0.5, (randn(4, 300, 96, dtype=torch.bfloat16),), kernels=1)
check("cumsum dim 0", lambda x: x.cumsum(0).exp(), (randn(50, 33) * 0.1,), kernels=1)
check("cumprod", lambda x: torch.cumprod(x, -1), (torch.rand(128, 20, device=device) + 0.5,), kernels=1)

# What one kernel cannot hold: a reduction of the running values, and a read of them at other
# elements than the one computed (a difference of neighbours).
check("sum of cumsum", lambda x: x.cumsum(-1).sum(-1), (randn(64, 500),), kernels=2)
check("neighbours of cumsum", lambda x: (lambda c: c[:, 1:] - c[:, :-1])(x.cumsum(-1)), (randn(64, 500),),
      kernels=2)

# A 0-d tensor's running sum and product are its value (torch-mlir has no lowering of a 0-d scan:
# fusec's decompositions take it as one element).
check("cumsum of a 0-d tensor", lambda x: x.cumsum(0), (torch.randn((), device=device),), kernels=1)
check("cumprod of a 0-d tensor", lambda x: x.cumprod(0), (torch.randn((), device=device),),
      kernels=1)
# Into another dtype: the input cast first, as PyTorch defines `dtype` (torch-mlir has no lowering of
# a cumprod that changes the dtype).
check("cumprod into float64", lambda x: x.cumprod(-1, dtype=torch.float64), (torch.rand(64, 40, device=device) + 0.5,),
      kernels=1)
check("int cumsum into float", lambda m: m.cumsum(-1, dtype=torch.float32) * 0.5,
      (torch.randint(0, 3, (16, 300), device=device),), kernels=1)
