# Dynamic rows through torch.compile: when the batch changes, dynamo recompiles the graph with a
# symbolic dim 0 (automatic dynamic shapes), and fusec compiles its regions once with dynamic rows:
# the kernels take the row count at each call, so later batch sizes run without another compile.
# `torch._dynamo.mark_dynamic(x, 0)` gets there on the first call, and so does dynamic=True when the
# module's weights pin every other dim. A symbolic size in another dim (a function whose inputs are
# all dynamic) is flattened into rows where it is one of the leading dims, else compiled per shape
# (test/Backend/dynamic-batch-seq.py).

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, count_compiles, private_cache, randomize

private_cache()
import fusec.torch_backend as tb
import torch

MODEL = randomize(MLPBlock())
compiles = count_compiles()


def run(test):
    print(f"TEST: {test.__name__}", flush=True)
    torch._dynamo.reset()
    tb._memory.clear()
    tb.reports.clear()
    compiles.clear()
    test()
    return test


def calls(fn, counts):
    with torch.no_grad():
        ok = all([close(fn(x), MODEL(x)) for x in (torch.randn(rows, 64) for rows in counts)])
    print("rows:", " ".join(map(str, counts)), "match eager:", ok)


def dynamic_regions():
    return [r for report in tb.reports for r in report.fusec_regions if "symbols" in r.compiled.manifest]


# The first call compiles static regions, the second (another batch) dynamic ones; the other batch
# sizes reuse them. Each graph has two regions (LayerNorm + GELU, and the residual add).
# CHECK-LABEL: TEST: automatic_dynamic
# CHECK-NEXT:  rows: 8 16 5 33 300 match eager: True
# CHECK-NEXT:  graphs: 2, fusec compiles: 4
# CHECK-NEXT:  dynamic regions: 2, symbols: ['rows0'], first input: ['rows0', 128]
# CHECK-NEXT:  fusec: graph 1: 7 ATen ops -> 2 fusec regions (2 kernels, cpu), 4 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  native_layer_norm, gelu -> main_kernel_0, rows0 dynamic [compiled
@run
def automatic_dynamic():
    calls(torch.compile(MODEL, backend="fusec"), (8, 16, 5, 33, 300))
    print(f"graphs: {len(tb.reports)}, fusec compiles: {len(compiles)}")
    regions = dynamic_regions()
    manifest = regions[0].compiled.manifest
    print(f"dynamic regions: {len(regions)}, symbols: {manifest['symbols']}, first input: {manifest['inputs'][0]['shape']}")
    print("\n".join(tb.reports[-1].lines()[:2]))


# The same regions again: from the disk cache (the key names the symbols by position, rows0).
# CHECK-LABEL: TEST: marked_dynamic
# CHECK-NEXT:  rows: 8 3 64 match eager: True
# CHECK-NEXT:  graphs: 1, fusec compiles: 0, dynamic regions: 2 (from the disk cache)
@run
def marked_dynamic():
    fn = torch.compile(MODEL, backend="fusec")
    x = torch.randn(8, 64)
    torch._dynamo.mark_dynamic(x, 0)
    with torch.no_grad():
        fn(x)
    calls(fn, (8, 3, 64))
    regions = dynamic_regions()
    print(f"graphs: {len(tb.reports)}, fusec compiles: {len(compiles)}, dynamic regions: {len(regions)} "
          f"({'from the disk cache' if all(r.status == 'cache' for r in regions) else 'compiled'})")


# CHECK-LABEL: TEST: dynamic_true_module
# CHECK-NEXT:  rows: 8 16 match eager: True
# CHECK-NEXT:  graphs: 1, dynamic regions: 2
@run
def dynamic_true_module():
    calls(torch.compile(MODEL, backend="fusec", dynamic=True), (8, 16))
    print(f"graphs: {len(tb.reports)}, dynamic regions: {len(dynamic_regions())}")


def rmsnorm_gelu(x, w):
    return torch.nn.functional.gelu(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)


# CHECK-LABEL: TEST: every_dim_dynamic
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec regions: ['aten.pow: compiled', 'aten.gelu: compiled', 'aten.mean, aten.add, aten.rsqrt, aten.mul, aten.mul: per-shape']
@run
def every_dim_dynamic():
    x, w = torch.randn(8, 64), torch.randn(64)
    print("matches eager:", close(torch.compile(rmsnorm_gelu, backend="fusec", dynamic=True)(x, w), rmsnorm_gelu(x, w)))
    report = tb.reports[-1]
    # x is [s0, s1]: its elementwise ops are flattened into rows (flatten_rows.py); the mean over s1,
    # and the ops on w ([s1], not the graph's leading dims), are a region compiled per shape
    print("fusec regions:", [f"{', '.join(r.ops)}: {r.status}" for r in report.fusec_regions])
