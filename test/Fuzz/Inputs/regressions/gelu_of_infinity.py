"""Found by `fusec fuzz --target cuda` on the H200 (seed 11, 2026-12-01), the first run with the
fuzzer's non-finite value classes: erf-GELU of randn with +-inf at random places. The GPU kernel
was right and the oracle wrong: PyTorch's CPU eager gives gelu(+inf) = NaN (its vectorised erf),
CUDA's eager gives inf, as does fusec on the GPU (libdevice's __nv_erff saturates to 1); the oracle
compared with the CPU only. Measured on the H200 2026-12-02: fusec = CUDA eager at all 4099
elements, 202 differ from CPU eager, all of them +inf inputs. The oracle now judges a cuda
output's NaN and inf against eager on the GPU where the CPU's disagree (oracle._eager_on_gpu).
CPU eager itself depends on the CPU: NaN with AVX-512, inf with AVX2 (the CI machine) and in fp64;
fusec's cpu target gives inf. The oracle also accepts the fp64 reference's NaN and inf (2026-12-02)."""
# fuzz-oracle: narrowest=float32 longest-reduction=1 specials=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = torch.nn.functional.gelu(x0)
    return v0


model = fuzz_model
example_inputs = (torch.randn(4099).masked_fill(torch.rand(4099) < 0.05, float("inf")).masked_fill(torch.rand(4099) < 0.05, float("-inf")),)
