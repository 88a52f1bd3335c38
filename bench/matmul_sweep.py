"""The `wgmma` kernel's knobs (issue 26) at any shapes: for each bf16 `x @ w.T` (w [N, K], nn.Linear's
layout; "+gelu" adds a bias and GELU as its epilogue), the heuristic's kernel and each knob setting
given, against `torch.mm` alone and eager, on the GPU.

Each setting is the matmul kernel's knobs (`--schedule`'s per-kernel knobs: mma_tile_n, mma_stages,
mma_persistent) as KNOB=VALUE,...; every kernel is checked against eager in float32 first (a wrong
one is reported WRONG and not timed), then timed under bench/README.md's rules (CUDA events, the
median of `--repeat` CUDA-graph replays of 10 calls). For bandwidth-bound shapes (decode) mind the
working set: M = 64 reads the 32 MB weight, less than 4x L2.

    python bench/matmul_sweep.py [--shapes 8192x3072x768+gelu,4096x4096x4096] [--repeat 10] \\
        [--knobs 'mma_tile_n=128,mma_stages=3' --knobs 'mma_persistent=1' ...]
"""

from __future__ import annotations

import argparse
import sys

import torch

import fusec
from fusec.timing import LARGE_CALLS, gpu_time_us

F = torch.nn.functional
SHAPES = "8192x3072x768,8192x3072x768+gelu,8192x768x3072+gelu,8192x11008x4096+gelu,4096x4096x4096,2000x3000x1000+gelu,64x4096x4096+gelu"
KNOBS = ["mma_tile_n=128,mma_stages=3", "mma_tile_n=128,mma_stages=6", "mma_tile_n=64,mma_stages=6",
         "mma_tile_n=128,mma_stages=3,mma_persistent=2", "mma_persistent=1"]


def matmul(x, w):
    return x @ w.T


def linear_gelu(x, w, b):
    return F.gelu(x @ w.T + b)


def _row(label, compiled, fn, inputs, want, repeat, mm, eager) -> str:
    got = compiled(*inputs).float()
    err = ((got - want).abs().max() / want.abs().max()).item()
    kernel = next((s for s in compiled.compilation.schedules if s.get("schedule") == "wgmma"), None)
    what = f"{kernel['tile']}, {kernel['stages']} stages" + (f", {kernel['blocks']} blocks" if "blocks" in kernel else "") \
        if kernel else "not wgmma"
    if not err < 2e-2:
        return f"  {label:<45} {what:<34} WRONG (relative error {err:.1e})"
    us = gpu_time_us(lambda: compiled(*inputs), repeat, LARGE_CALLS)[0]
    return f"  {label:<45} {what:<34} {us:9.1f} µs  {mm / us:.2f}x mm  {eager / us:.2f}x eager"


def sweep(shapes: list[str], knobs: list[str], repeat: int) -> None:
    print(torch.cuda.get_device_name(), flush=True)
    for shape in shapes:
        size, _, epilogue = shape.partition("+")
        m, n, k = map(int, size.split("x"))
        torch.manual_seed(0)
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        fn = linear_gelu if epilogue else matmul
        inputs = (x, w) + ((torch.randn(n, device="cuda", dtype=torch.bfloat16),) if epilogue else ())
        want = fn(*(t.float() for t in inputs))
        mm = gpu_time_us(lambda: x @ w.T, repeat, LARGE_CALLS)[0]
        eager = gpu_time_us(lambda: fn(*inputs), repeat, LARGE_CALLS)[0]
        print(f"{shape}: torch.mm alone {mm:.1f} µs, eager {eager:.1f} µs", flush=True)
        heuristic = fusec.compile(fn, inputs, wgmma=True)
        group = next((s["group"] for s in heuristic.compilation.schedules if s.get("schedule") == "wgmma"), None)
        print(_row("heuristic", heuristic, fn, inputs, want, repeat, mm, eager), flush=True)
        for setting in knobs if group is not None else []:
            try:
                compiled = fusec.compile(fn, inputs, wgmma=True, schedule=",".join(f"{group}.{kv}" for kv in setting.split(",")))
                print(_row(setting, compiled, fn, inputs, want, repeat, mm, eager), flush=True)
            except Exception as e:  # noqa: BLE001 (the line says what failed; the sweep goes on)
                print(f"  {setting:<45} FAIL {type(e).__name__}: {str(e).splitlines()[0][:120]}", flush=True)
        del x, w, inputs, want
        torch.cuda.empty_cache()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default=SHAPES, help="MxNxK[+gelu],... (default: %(default)s)")
    p.add_argument("--knobs", action="append", help="a knob setting to time, KNOB=VALUE,... (repeatable; "
                   "default: " + "; ".join(KNOBS) + ")")
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("matmul_sweep.py: no CUDA GPU", file=sys.stderr)
        return 1
    sweep(args.shapes.split(","), args.knobs or KNOBS, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
