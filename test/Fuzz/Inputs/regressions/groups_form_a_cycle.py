"""Found by `fusec fuzz --target cuda` on the H200 (shrunk by hypothesis): fp16 ops whose fusion
groups, as the cost model forms them, depend on each other both ways; form-groups stops with
"fusion groups form a cycle" (a clean error, on both targets). The cost model's cycle check looked
at what each op depended on when it was placed, not at what its group came to read later. Fixed:
it now walks the groups' current reads (`_reaches` in fusion/cost_model.py)."""
# fuzz-oracle: narrowest=float16 longest-reduction=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = -x0
    v1 = v0 * 0.5
    v2 = v1 + x1
    v3 = torch.relu(v2)
    v4 = torch.where(x1 > v1, v0, v3)
    v5 = torch.amax(v4, dim=-1, keepdim=True)
    v6 = v5.pow(2)
    v7 = v6 + 2.0
    return v7


model = fuzz_model
example_inputs = (torch.randn(1, dtype=torch.float16), torch.randn(1, dtype=torch.float16))
