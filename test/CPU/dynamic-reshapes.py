# Dynamic rows through reshapes on the cpu target: an elementwise op that reads a computed value
# through a reshape runs at that value's shape (fusec-reshape-pointwise-loops) with a symbolic batch
# as with a static one, so the cost model fuses it with its producer; the kernel counts are the
# static compile's. Each model matches eager in float64 at several batch sizes.
#  - An attention block's merged heads through nn.Linear and GELU: the bias add over [batch * 128,
#    256] and the GELU over [batch, 128, 256] were 2 kernels (3 in all), now one.
#  - GroupNorm(32, 320) + SiLU of [batch, 320, 8, 8]: PyTorch's decomposition reshapes the
#    per-channel scale with as_strided of a symbolic size, which was an internal error
#    ("aten.as_strided.default `size` must be a static int list"); now a view, and the scale and
#    shift are computed inside the normalization (fusec-inline-broadcast-producers): one kernel.

# RUN: %python %s | FileCheck %s

import torch

import fusec
from fusec.numerics import compare

F = torch.nn.functional
torch.manual_seed(0)
BATCH = torch.export.Dim("batch", min=1, max=1024)


def check(label, model, example, batches):
    fn = fusec.compile(model, (example,), dynamic_shapes=({0: BATCH},), target="cpu")
    static = fusec.compile(model, (example,), target="cpu")
    wide = model.double()
    results = []
    for batch in batches:
        x = torch.randn(batch, *example.shape[1:])
        with torch.no_grad():
            ref = wide(x.double())
        err, _, tol = compare(fn(x), ref.float())
        results.append(f"{batch} {'ok' if err <= tol else f'WRONG {err:.2e} > {tol:.2e}'}")
    model.float()
    print(f"{label}: {len(fn.manifest['kernels'])} kernels (static {len(static.manifest['kernels'])}); "
          f"batches {', '.join(results)}")


class MergedHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.out = torch.nn.Linear(256, 256)

    def forward(self, h):
        b, n, s, d = h.shape
        return F.gelu(self.out(h.transpose(1, 2).reshape(b, s, n * d)))


# CHECK: merged heads, linear + gelu: 2 kernels (static 2); batches 1 ok, 3 ok, 4 ok
check("merged heads, linear + gelu", MergedHeads(), torch.randn(4, 4, 128, 64), (1, 3, 4))

group_norm = torch.nn.Sequential(torch.nn.GroupNorm(32, 320), torch.nn.SiLU())
with torch.no_grad():
    group_norm[0].weight.normal_()
    group_norm[0].bias.normal_()
# CHECK: groupnorm + silu: 1 kernels (static 1); batches 1 ok, 2 ok, 5 ok
check("groupnorm + silu", group_norm, torch.randn(2, 320, 8, 8), (1, 2, 5))
