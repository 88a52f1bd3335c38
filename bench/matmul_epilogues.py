"""Matmuls on Hopper's tensor cores with fused epilogues (issue 26), on the GPU, bf16.

Each entry is nn.Linear's form, `x @ w.T` with w [N, K] as nn.Linear keeps it: the matmul alone
(out bf16) at 4096^3 and 8192^3, and matmul + bias + GELU at MLP shapes (M = 8192). fusec compiles
it for the inputs' GPU (sm_90a on Hopper: the `wgmma` schedule, the epilogue on the accumulators).
Each is checked against eager in float32 first, then fusec, eager (cuBLAS, and PyTorch's own
kernels for the epilogue), `torch.mm` alone and torch.compile(dynamic=False, fresh per entry) are
timed under the rules of bench/README.md (CUDA events, the median of `--repeat` CUDA-graph
replays, 10 calls a replay).

    python bench/matmul_epilogues.py [--repeat 30] [--filter REGEX] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys

import torch

import fusec
from fusec.timing import LARGE_CALLS, gpu_time_us

F = torch.nn.functional


def matmul(x, w):
    return x @ w.T


def linear_gelu(x, w, b):
    return F.gelu(x @ w.T + b)


def entries():
    for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192)):
        yield f"matmul {m}x{n}x{k}", matmul, (m, n, k), False
    for m, n, k in ((8192, 11008, 4096), (8192, 3072, 768), (8192, 768, 3072), (8192, 4096, 4096)):
        yield f"matmul+bias+gelu {m}x{n}x{k}", linear_gelu, (m, n, k), True


def run(repeat: int, pattern: str | None) -> list[str]:
    lines = [f"# Matmuls with fused epilogues, {torch.cuda.get_device_name()}, {datetime.date.today()}", "",
             f"bf16, x @ w.T (w [N, K]); median of {repeat} CUDA-graph replays; command: "
             f"`python bench/matmul_epilogues.py --repeat {repeat}`", "",
             "| entry | fusec kernels | fusec µs | TFLOP/s | eager µs | torch.mm alone µs | torch.compile µs | "
             "fusec / eager | fusec / mm alone | fusec / torch.compile | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, fn, (m, n, k), bias in entries():
        if pattern and not re.search(pattern, name):
            continue
        torch.manual_seed(0)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        inputs = (x, w) + ((torch.randn(n, device="cuda", dtype=torch.bfloat16),) if bias else ())
        try:
            compiled = fusec.compile(fn, inputs, wgmma=True)
            got = compiled(*inputs).float()
            want = fn(*(t.float() for t in inputs))
            err = ((got - want).abs().max() / want.abs().max()).item()
            if not err < 2e-2:
                raise AssertionError(f"fusec is off: relative error {err:.2e}")
            torch._dynamo.reset()
            inductor = torch.compile(fn, dynamic=False)
            inductor(*inputs)
            us = {key: gpu_time_us(lambda f=f: f(*inputs), repeat, LARGE_CALLS)[0]
                  for key, f in (("fusec", compiled), ("eager", fn), ("mm", lambda *a: a[0] @ a[1].T),
                                 ("inductor", inductor))}
        except Exception as e:  # noqa: BLE001 (the row says what failed; the run goes on)
            lines.append(f"| {name} | FAIL: {type(e).__name__}: {str(e).splitlines()[0][:150]} |")
            print(lines[-1], flush=True)
            continue
        tflops = 2 * m * n * k / us["fusec"] / 1e6
        lines.append(f"| {name} | {len(compiled.manifest['kernels'])} | {us['fusec']:.1f} | {tflops:.0f} | "
                     f"{us['eager']:.1f} | {us['mm']:.1f} | {us['inductor']:.1f} | {us['eager'] / us['fusec']:.2f}x | "
                     f"{us['mm'] / us['fusec']:.2f}x | {us['inductor'] / us['fusec']:.2f}x | {err:.1e} |")
        print(lines[-1], flush=True)
        del compiled, inductor, inputs, x, w
        torch.cuda.empty_cache()
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--filter", help="only the entries whose name matches this regex")
    p.add_argument("--markdown", help="also write the table to this file")
    args = p.parse_args()
    lines = run(args.repeat, args.filter)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
