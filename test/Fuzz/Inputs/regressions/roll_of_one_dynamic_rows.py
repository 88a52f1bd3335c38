"""Found by `fusec fuzz --target cpu --dynamic-rows` seed 32 (shrunk by hypothesis): `torch.roll`
along a dim of length 1, over dynamic rows, is from torch-mlir a `tensor.concat` of a slice typed
with 0 elements there (at an SSA offset) and the whole tensor; fusec-concat-to-generic read the empty
piece at `(d - 0) mod 0`, and the output was never written (the oracle's NaN-filled second call
differed). Fixed: a piece of length 0 along the concatenated dim is dropped."""
# fuzz-oracle: narrowest=float32 longest-reduction=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = -x0
    v1 = torch.cat((x1, v0), dim=2)
    v2 = torch.roll(v1, shifts=-7, dims=1)
    return v2


model = fuzz_model
example_inputs = (torch.randn(2, 1, 4099), torch.randn(2, 1, 7))
