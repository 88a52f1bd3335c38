"""Dynamic rows through reshapes (a symbolic batch), checked against eager in float64 on the device
named by argv[1] (cpu or cuda), with the kernel counts of the dynamic and the static compile. Each
line: `label: K kernels (static S); batches B ok, ...` or WRONG with the error."""

import copy
import sys

import torch

import fusec
from fusec.numerics import compare

F = torch.nn.functional
device = torch.device(sys.argv[1])
target = "cuda" if device.type == "cuda" else "cpu"
torch.manual_seed(0)
BATCH = torch.export.Dim("batch", min=1, max=1024)


def check(label, model, example, batches):
    model.to(device)
    example = example.to(device)
    fn = fusec.compile(model, (example,), dynamic_shapes=({0: BATCH},), target=target)
    static = fusec.compile(model, (example,), target=target)
    wide = copy.deepcopy(model).double()
    results = []
    for batch in batches:
        x = torch.randn(batch, *example.shape[1:], device=device)
        with torch.no_grad():
            ref = wide(x.double())
        err, _, tol = compare(fn(x), ref.float())
        results.append(f"{batch} {'ok' if err <= tol else f'WRONG {err:.2e} > {tol:.2e}'}")
    print(f"{label}: {len(fn.manifest['kernels'])} kernels (static {len(static.manifest['kernels'])}); "
          f"batches {', '.join(results)}")


class MergedHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.out = torch.nn.Linear(256, 256)

    def forward(self, h):
        b, n, s, d = h.shape
        return F.gelu(self.out(h.transpose(1, 2).reshape(b, s, n * d)))


check("merged heads, linear + gelu", MergedHeads(), torch.randn(4, 4, 128, 64), (1, 3, 4))

group_norm = torch.nn.Sequential(torch.nn.GroupNorm(32, 320), torch.nn.SiLU())
with torch.no_grad():
    group_norm[0].weight.normal_()
    group_norm[0].bias.normal_()
check("groupnorm + silu", group_norm, torch.randn(2, 320, 8, 8), (1, 2, 5))
