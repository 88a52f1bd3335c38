"""Per-call host overhead: fusec's launcher vs torch.compile, with and without CUDA graphs.

    python bench/host_overhead.py                       # all models, on the GPU
    python bench/host_overhead.py --model seed --iters 2000
    python bench/host_overhead.py --device cpu --skip inductor   # a smoke run without a GPU

At small shapes a kernel takes a few microseconds on the GPU, so what a call costs is the host's
work: Python, checks, allocation, one cuLaunchKernel per kernel. For each implementation this
prints, per call:

- host us:   CPU time to issue the call (N calls back to back, timed on the host, before the sync);
             the GPU runs behind, so this is the launch path alone as long as the GPU keeps up;
- wall us:   the same N calls up to and including the final synchronize (host or GPU, the slower);
- sync'd us: the median of single calls each followed by a synchronize (one call's latency);
- kernels:   fusec kernel launches per call (fusec's rows), and host us divided by them.

To compare two versions of the launcher (issue 23: "report before/after"), run this script in each
checkout on the same machine; `bench/launcher_overhead.py` isolates the launcher's per-kernel cost
(a chain of kernels that cost next to nothing), on the GPU or the cpu target.

Implementations: eager; `fusec.compile` called directly (the launcher, when fusec compiles the whole
model); torch.compile(backend="fusec") without and with options={"cuda_graphs": True}; torch.compile
with inductor, default and mode="reduce-overhead" (its CUDA graphs). A row that cannot run says why.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "Backend", "Inputs"))


class Seed(nn.Module):
    """The handbook's seed: RMSNorm then SiLU * up (examples/rmsnorm_silu_mul.py), 8 x 4096."""

    def __init__(self, n=4096):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(n) + 0.5)

    def forward(self, x, up):
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight
        return F.silu(h) * up


def models(device):
    from blocks import MLPBlock, TransformerBlock

    return {
        "seed": (Seed(), (torch.randn(8, 4096), torch.randn(8, 4096))),
        "mlp": (MLPBlock(), (torch.randn(8, 64),)),
        "transformer": (TransformerBlock(), (torch.randn(2, 16, 64),)),
    }


def implementations(model, inputs, device):
    """name -> a zero-argument factory of the callable (a factory: a failing compile is one row)."""
    import fusec

    cuda = device.type == "cuda"
    impls = {
        "eager": lambda: model,
        "fusec launcher (fusec.compile)": lambda: fusec.compile(model, inputs, target="cuda" if cuda else "cpu"),
        "torch.compile(backend=fusec)": lambda: torch.compile(model, backend="fusec"),
    }
    if cuda:
        impls["torch.compile(backend=fusec, cuda_graphs)"] = lambda: torch.compile(
            model, backend="fusec", options={"cuda_graphs": True})
    impls["torch.compile (inductor)"] = lambda: torch.compile(model)
    if cuda:
        impls["torch.compile (inductor, reduce-overhead)"] = lambda: torch.compile(model, mode="reduce-overhead")
    return impls


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(fn, inputs, device, iters: int, warmup: int) -> tuple[float, float, float]:
    """(host us, wall us, synchronized us) per call."""
    for _ in range(warmup):
        fn(*inputs)
    sync(device)
    start = time.perf_counter()
    for _ in range(iters):
        fn(*inputs)
    issued = time.perf_counter()
    sync(device)
    done = time.perf_counter()
    single = []
    for _ in range(min(iters, 200)):
        t = time.perf_counter()
        fn(*inputs)
        sync(device)
        single.append(time.perf_counter() - t)
    return ((issued - start) / iters * 1e6, (done - start) / iters * 1e6, statistics.median(single) * 1e6)


def fusec_launches(fn, first_report: int) -> int:
    """fusec kernel launches per call of `fn`: its manifest's (fusec.compile), else those of the
    fusec regions torch.compile(backend="fusec") compiled since report `first_report` (0: none)."""
    import fusec.torch_backend as tb

    def launches(manifest):
        return sum(1 for s in manifest["steps"] if s["op"] == "launch")

    if hasattr(fn, "manifest"):
        return launches(fn.manifest)
    return sum(launches(r.compiled.manifest) for rep in tb.reports[first_report:] for r in rep.fusec_regions
               if r.compiled is not None)


def run_model(name, model, inputs, device, args) -> list[str]:
    import fusec.torch_backend as tb

    model = model.to(device).eval()
    inputs = tuple(t.to(device) for t in inputs)
    rows = []
    with torch.no_grad():
        expected = model(*inputs)
        for impl, factory in implementations(model, inputs, device).items():
            if any(skip in impl for skip in args.skip):
                continue
            torch._dynamo.reset()
            first_report = len(tb.reports)
            try:
                fn = factory()
                got = fn(*inputs)
                if not torch.allclose(got, expected, rtol=1e-3, atol=1e-3):
                    raise RuntimeError(f"wrong result (max error {(got - expected).abs().max().item():.3g})")
                host, wall, single = measure(fn, inputs, device, args.iters, args.warmup)
                n = fusec_launches(fn, first_report) if "fusec" in impl else 0
                per = f"{n} ({host / n:.1f} us each)" if n else "-"
                rows.append(f"| {name} | {impl} | {host:.1f} | {wall:.1f} | {single:.1f} | {per} |")
            except Exception as err:  # noqa: BLE001 (one row per failure, the run goes on)
                message = str(err).strip().splitlines()[0][:100] if str(err).strip() else type(err).__name__
                rows.append(f"| {name} | {impl} | - | - | - | - | {type(err).__name__}: {message}")
            print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["seed", "mlp", "transformer", "all"], default="all")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--iters", type=int, default=1000, help="calls per timing (default 1000)")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--skip", nargs="*", default=[], help="skip implementations whose name contains any of these")
    args = p.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA GPU: run with --device cpu for a smoke run")
    torch.manual_seed(0)
    print(f"# host overhead per call, {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}, "
          f"torch {torch.__version__}, {args.iters} calls\n")
    print("| model | implementation | host us | wall us | sync'd us | kernels |")
    print("|---|---|---|---|---|---|")
    for name, (model, inputs) in models(device).items():
        if args.model in ("all", name):
            run_model(name, model, inputs, device, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
