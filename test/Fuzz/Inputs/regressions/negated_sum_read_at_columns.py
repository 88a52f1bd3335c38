"""Found by `fusec fuzz --target cuda --seed 2003` (shrunk by hypothesis): a row sum, negated twice,
read broadcast along the columns of a square [255, 255] (`where(x0 > 0, v2, x1)` reads v2[j] at row
i). The fusion cost model checked only a reduction's own readers for reading their own row, not the
readers of a pointwise op on the reduced value (`-sum`), so the `where` joined the sum's kernel as
its epilogue and read each row's sum in place of column j's: max abs err 2.0 of tanh's 1.0, on both
targets once the producer groups were tried reductions first. Now such a value is checked as the
reduction it reads (form_groups._row_reduction): two kernels."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = x0.sum(dim=-1)
    v1 = -v0
    v2 = -v1
    v3 = torch.where(x0 > 0.0, v2, x1)
    v4 = v3 + v3
    v5 = v4.sum(dim=-1)
    v6 = torch.tanh(v5)
    return v6


model = fuzz_model
example_inputs = (torch.randn(255, 255), torch.randn(255))
