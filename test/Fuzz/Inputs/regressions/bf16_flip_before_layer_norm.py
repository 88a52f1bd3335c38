"""Found by `fusec fuzz --target cpu --dynamic-rows --seed 3` (model #51, not shrunk): 9.4e-3 off at
max|ref| 0.8 where the oracle allowed 8.0e-3, on the cpu and, compiled statically at the same 130
rows, the same. Not a fusec bug: tanh(exp(x)) in fp32 differs from PyTorch's by an ulp, the cast to
bf16 then rounds one element the other way (a bf16 ulp, 2^-8 near 1), and layer_norm over 17 values
of spread 0.3 divides that by 0.3. The oracle now allows twice what the model's own bf16 roundings
move its outputs (here 2.0e-2; fusec.fuzz.oracle, "rounding")."""
# fuzz-oracle: narrowest=bfloat16 longest-reduction=17

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = torch.exp(x0)
    v1 = torch.tanh(v0)
    v2 = v1.to(torch.bfloat16).float()
    v3 = torch.nn.functional.layer_norm(v2, (17,), None, None, eps=1e-5)
    v4 = torch.tanh(v3)
    v5 = torch.tanh(v4)
    v6 = v5 / (torch.sigmoid(x1) + 0.5)
    v7 = torch.tanh(v6)
    return v7


model = fuzz_model
example_inputs = (torch.randn(127, 17, 17), torch.randn(17))
