# torch.compile(dynamic=True) of a transformer block: its activations are [batch, seq, 64] with both
# leading dims symbolic. A region whose tensors all share those leading dims (or are static and
# broadcast along the last dims: a norm's weight) is flattened into one dynamic row count
# (python/fusec/torch_backend/flatten_rows.py) and compiled once; every later (batch, seq) runs the
# same kernels. What works across the leading dims (a sum over the sequence), and tensors whose
# symbolic dims are not leading (attention's q/k/v, [batch, heads, seq, d]), are regions compiled
# per input shape at their calls instead (per_shape.py).

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import TransformerBlock, close, count_compiles, private_cache, randomize, run

private_cache()
import fusec.torch_backend as tb
import torch
from fusec.torch_backend.flatten_rows import flatten_region  # noqa: F401 (the module under test)

BLOCK = randomize(TransformerBlock())
compiles = count_compiles()


def shapes_match(fn, model, shapes) -> bool:
    with torch.no_grad():
        return all(close(fn(x), model(x)) for x in (torch.randn(b, t, 64) for b, t in shapes))


# Four (batch, seq) shapes, one graph, one compile per region; the regions take flat rows ("rows0").
# CHECK-LABEL: TEST: transformer_block
# CHECK-NEXT:  match eager at (2, 8) (3, 5) (5, 17) (4, 33): True
# CHECK-NEXT:  graphs: 1, regions: 4, compiles: 4, all dynamic rows: True
# CHECK-NEXT:  region inputs: [['rows0', 64], [64]]
@run
def transformer_block():
    tb.reports.clear()
    compiles.clear()
    fn = torch.compile(BLOCK, backend="fusec", dynamic=True)
    print("match eager at (2, 8) (3, 5) (5, 17) (4, 33):",
          shapes_match(fn, BLOCK, [(2, 8), (3, 5), (5, 17), (4, 33)]))
    regions = [r for report in tb.reports for r in report.fusec_regions]
    dynamic = all("symbols" in r.compiled.manifest for r in regions)
    print(f"graphs: {len(tb.reports)}, regions: {len(regions)}, compiles: {len(compiles)}, all dynamic rows: {dynamic}")
    print("region inputs:", [i["shape"] for i in regions[0].compiled.manifest["inputs"]])


class SumOverSeq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64))  # a weight: the last dim stays static

    def forward(self, x):
        return torch.nn.functional.silu(x * self.w).sum(1)


# The sum over the sequence cannot be flattened: the product and silu before it are a flat region,
# the sum a region compiled per input shape.
# CHECK-LABEL: TEST: across_the_rows
# CHECK-NEXT:  match eager: True
# CHECK-NEXT:  fusec regions: ['aten.mul, aten.silu: compiled', 'aten.sum: per-shape']
@run
def across_the_rows():
    tb.reports.clear()
    model = SumOverSeq()
    fn = torch.compile(model, backend="fusec", dynamic=True)
    with torch.no_grad():
        ok = all(close(fn(x), model(x)) for x in (torch.randn(2, 8, 64), torch.randn(3, 5, 64)))
    print("match eager:", ok)
    report = tb.reports[-1]
    print("fusec regions:", [f"{', '.join(r.ops)}: {r.status}" for r in report.fusec_regions])


class Rotary(torch.nn.Module):
    """Rotary embeddings as transformers writes them: q is [batch, heads, seq, 16], cos and sin
    [batch, 1, seq, 16], broadcast over the heads: no single row count fits both."""

    def forward(self, q, positions):
        freqs = positions[:, :, None].float() * (1.0 / 10000 ** (torch.arange(0, 16, 2).float() / 16))
        emb = torch.cat([freqs, freqs], -1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        half = torch.cat([-q[..., 8:], q[..., :8]], -1)
        return q * cos + half * sin


# Regions of such tensors are compiled for each input shape at their calls (per_shape.py): two shapes,
# two compiles of the rotation, none failed; a third call at the first shape compiles nothing. (The
# angles, cos and sin are [batch, seq, 16]: a flat region. torch 2.11 puts a mul before the cat.)
# CHECK-LABEL: TEST: per_shape_rotary
# CHECK-NEXT:  match eager at (2, 4, 8) (3, 4, 5) (2, 4, 8): True
# CHECK-NEXT:  per-shape regions: 1, shapes compiled: [2], failures: []
# CHECK-NEXT:  fusec   fusec_shape_region_0  cpu  {{.*}}neg, {{.*}}cat, {{.*}}mul, add -> main_kernel_0 [compiled per input shape, at its calls]
@run
def per_shape_rotary():
    tb.reports.clear()
    model = Rotary()
    fn = torch.compile(model, backend="fusec", dynamic=True)
    ok = True
    for b, h, t in [(2, 4, 8), (3, 4, 5), (2, 4, 8)]:
        q, positions = torch.randn(b, h, t, 16), torch.arange(t).expand(b, t)
        ok &= close(fn(q, positions), model(q, positions))
    print("match eager at (2, 4, 8) (3, 4, 5) (2, 4, 8):", ok)
    regions = [r for report in tb.reports for r in report.fusec_regions if r.status == "per-shape"]
    print(f"per-shape regions: {len(regions)}, shapes compiled: {[r.call.region.shapes_compiled for r in regions]}, "
          f"failures: {[f for r in regions for f in r.call.region.failures]}")
    print(next(line for line in tb.reports[-1].lines() if "shape_region" in line))


class ChunkedSwiGLURotate(torch.nn.Module):
    """Layout ops along the last dim of [batch, seq, 128]: SwiGLU over x.chunk(2, -1), then
    rotate_half's slices, neg and cat (a weight keeps the last dim static, as a model's do)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(128))

    def forward(self, x):
        gate, up = (x * self.w).chunk(2, dim=-1)
        h = torch.nn.functional.silu(gate) * up
        return h * 2 + torch.cat([-h[..., 32:], h[..., :32]], -1)


# Slices, chunks and cats along static dims fold over dynamic rows (fusec-fold-layout-ops), so the
# region is flattened like any row-wise one: compiled once, for every (batch, seq), not per shape.
# (torch 2.11 traces the second slice before the neg.)
# CHECK-LABEL: TEST: layout_ops_flat
# CHECK-NEXT:  match eager at (2, 8) (3, 5) (5, 17): True
# CHECK-NEXT:  fusec regions: ['aten.mul, aten.split, aten.silu, aten.mul, aten.mul, aten.slice, {{aten.neg, aten.slice|aten.slice, aten.neg}}, aten.cat, aten.add: compiled'] compiles: 1
@run
def layout_ops_flat():
    tb.reports.clear()
    compiles.clear()
    model = ChunkedSwiGLURotate()
    fn = torch.compile(model, backend="fusec", dynamic=True)
    with torch.no_grad():
        ok = all(close(fn(x), model(x)) for x in (torch.randn(b, t, 128) for b, t in [(2, 8), (3, 5), (5, 17)]))
    print("match eager at (2, 8) (3, 5) (5, 17):", ok)
    report = tb.reports[-1]
    print("fusec regions:", [f"{', '.join(r.ops)}: {r.status}" for r in report.fusec_regions], f"compiles: {len(compiles)}")
