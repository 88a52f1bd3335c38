"""Found by `fusec fuzz --target cpu` seed 21 (shrunk by hypothesis), once the fuzzer drew layout ops:
`torch.roll` of a one-element tensor (a shift that is a multiple of the length) is, from torch-mlir,
a `tensor.concat` of an empty slice (size 0 at offset 1, as SSA constants MLIR does not fold) and
the whole tensor; fusec-concat-to-generic kept it as a concat, and the cpu target stopped with
"internal error in pass fusec-outline-groups-to-functions: memref.subview ... defines a value used
outside its group". Fixed: a concat's empty pieces are dropped."""
# fuzz-oracle: narrowest=float32 longest-reduction=17

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = -x0
    v1 = -v0
    v2 = torch.where(v1 > 0.0, v1, x1)
    v3 = -v2
    v4 = torch.softmax(v3, dim=-1)
    v5 = v4[0:1:3]
    v6 = torch.roll(v5, shifts=-7, dims=0)
    return v6


model = fuzz_model
example_inputs = (torch.randn(17), torch.randn(17))
