"""Found by `fusec fuzz --target cuda` on the H200 (seed 137; written smaller by hand): GELU (tanh
form) of a log-softmax, about -9 everywhere, averaged. Eager computes 0.5·x·(1 + tanh(t)) with
tanh(t) rounded to -1, so 0 in fp32 and in fp64 alike; fusec computes 1 + tanh(t) exactly as
2 / (1 + exp(-2t)) (fusec-one-plus-tanh) and returns the true mean, about -1e-23. The oracle's
tolerance was proportional to max|ref| = 0 and called that a mismatch; it now has a floor
(fusec.fuzz.oracle._SCALE_FLOOR). The model passes on both targets."""
# fuzz-oracle: narrowest=bfloat16 longest-reduction=8192

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = torch.log_softmax(torch.clamp(x0 * 2.0, min=-1.0, max=1.0), dim=-1)
    return torch.nn.functional.gelu(v0, approximate="tanh").mean(dim=-1, keepdim=True)


model = fuzz_model
example_inputs = (torch.randn(8192, dtype=torch.bfloat16),)
