# torch.compile(backend="fusec") on CUDA tensors: the MLP block and the transformer block match
# eager (fp32 and bf16); regions are compiled for the GPU's own architecture; after the first call
# a forward makes no host synchronization (no device-to-host round trip); with
# options={"cuda_graphs": True} the forward replays as one CUDA graph, still matches eager, and a
# result stays valid after the next call.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, TransformerBlock, close, private_cache, randomize, run

private_cache()
import fusec.torch_backend as tb
import torch

CUDA = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False  # eager and PyTorch's side of fusec: the same matmuls


def arch() -> str:  # the compute capability, with Hopper's wgmma features (sm_90a) on a 9.0 GPU
    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


# CHECK-LABEL: TEST: mlp
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  no host sync: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 7 ATen ops -> 2 fusec regions (2 kernels, cuda), 4 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cuda  native_layer_norm, gelu -> main_kernel_0 [compiled
# CHECK-NEXT:    fusec   fusec_region_1  cuda  add -> main_kernel_0 [compiled
# CHECK-NEXT:  compiled for this GPU: True
@run
def mlp():
    model = randomize(MLPBlock()).to(CUDA)
    compiled = torch.compile(model, backend="fusec")
    with torch.no_grad():
        x1, x2 = torch.randn(8, 64, device=CUDA), torch.randn(8, 64, device=CUDA)
        print("matches eager:", close(compiled(x1), model(x1), 1e-4), close(compiled(x2), model(x2), 1e-4))
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")  # any synchronizing call in the forward raises
        try:
            compiled(x1)
            print("no host sync:", True)
        except RuntimeError as err:
            print("no host sync: False:", err)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    print(tb.reports[-1].lines()[0])
    print("\n".join(tb.reports[-1].lines()[1:3]))
    print("compiled for this GPU:", all(r.compiled.manifest["arch"] == arch() for r in tb.reports[-1].fusec_regions))


# CHECK-LABEL: TEST: transformer
# CHECK-NEXT:  fp32 matches eager: True
# CHECK-NEXT:  bf16 matches eager: True
# CHECK-NEXT:  fusec regions: 4 cuda
# CHECK-NEXT:  attention in PyTorch: True
@run
def transformer():
    model = randomize(TransformerBlock()).to(CUDA)
    x = torch.randn(2, 16, 64, device=CUDA)
    with torch.no_grad():
        print("fp32 matches eager:", close(torch.compile(model, backend="fusec")(x), model(x), 1e-4))
        torch._dynamo.reset()
        low = randomize(TransformerBlock()).to(CUDA, torch.bfloat16)
        xb = x.to(torch.bfloat16)
        got, eager, exact = torch.compile(low, backend="fusec")(xb), low(xb), low.float()(x.to(torch.bfloat16).float())
    err, eager_err = (got.float() - exact).abs().max().item(), (eager.float() - exact).abs().max().item()
    print("bf16 matches eager:", got.dtype == torch.bfloat16 and err <= 2 * eager_err + 1e-2)
    report = tb.reports[-1]
    print("fusec regions:", len(report.fusec_regions), " ".join(sorted({r.target for r in report.fusec_regions})))
    print("attention in PyTorch:", any("attention" in why for (_, why) in report.pytorch_ops))


# CHECK-LABEL: TEST: cuda_graphs
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  first result kept: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 4 fusec regions (4 kernels, cuda), {{[0-9]+}} ops in PyTorch, replayed as a CUDA graph
@run
def cuda_graphs():
    model = randomize(TransformerBlock()).to(CUDA)
    compiled = torch.compile(model, backend="fusec", options={"cuda_graphs": True})
    with torch.no_grad():
        x1, x2 = torch.randn(2, 16, 64, device=CUDA), torch.randn(2, 16, 64, device=CUDA)
        y1 = compiled(x1)
        kept = y1.clone()
        y2 = compiled(x2)
        print("matches eager:", close(y1, model(x1), 1e-4), close(y2, model(x2), 1e-4))
        print("first result kept:", torch.equal(y1, kept))
    print(tb.reports[-1].summary())


# Dynamic rows on the GPU: a new batch size recompiles the graph with a symbolic dim 0 and fusec
# compiles its regions once, with dynamic rows; with cuda_graphs, one CUDA graph per batch size
# (a size seen before replays its own graph; a result stays valid after later calls).
# CHECK-LABEL: TEST: dynamic_rows
# CHECK-NEXT:  rows: 8 16 5 4099 16 match eager: True
# CHECK-NEXT:  dynamic regions: 2, kernels of the last graph: 2
# CHECK-LABEL: TEST: dynamic_rows_cuda_graphs
# CHECK-NEXT:  rows: 8 16 5 16 match eager: True
# CHECK-NEXT:  first 16-row result kept: True
def rows_match(compiled, model, counts):
    results, ok = {}, True
    with torch.no_grad():
        for rows in counts:
            x = torch.randn(rows, 64, device=CUDA)
            y = compiled(x)
            ok = ok and close(y, model(x), 1e-4)
            results.setdefault(rows, (y, y.clone()))
    print("rows:", " ".join(map(str, counts)), "match eager:", ok)
    return results


@run
def dynamic_rows():
    model = randomize(MLPBlock()).to(CUDA)
    rows_match(torch.compile(model, backend="fusec"), model, (8, 16, 5, 4099, 16))
    regions = [r for r in tb.reports[-1].fusec_regions if "symbols" in r.compiled.manifest]
    print(f"dynamic regions: {len(regions)}, kernels of the last graph: {sum(len(r.kernels) for r in tb.reports[-1].fusec_regions)}")


@run
def dynamic_rows_cuda_graphs():
    model = randomize(MLPBlock()).to(CUDA)
    results = rows_match(torch.compile(model, backend="fusec", options={"cuda_graphs": True}), model, (8, 16, 5, 16))
    first, kept = results[16]
    print("first 16-row result kept:", torch.equal(first, kept))
