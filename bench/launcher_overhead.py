"""The launcher's host cost per call and per kernel, where the kernels themselves cost next to nothing.

    python bench/launcher_overhead.py                  # the cpu target (no GPU needed)
    python bench/launcher_overhead.py --device cuda    # the GPU: the per-kernel cost issue 23 measured

A chain of `--kernels` pointwise ops on a 4x16 tensor, compiled with fusion off (`fusion="none"`:
one kernel per op), is called `--iters` times by `fusec.compile`'s callable. Per call it reports the
host time in µs (wall and this process's CPU time) and that time per kernel, next to an empty Python call and eager's own ops. On the
cpu target a kernel over 64 floats takes well under a µs, so what is measured is the launcher's
work (input checks, buffers, argument packing, the call into the JIT's function); on the GPU the
calls are issued without a synchronize until the end, so it is the host's issuing cost while the
GPU keeps up.

Issue 23 measured ~70 µs of host time per kernel through torch.compile(backend="fusec") on the H200.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch


def chain(n: int):
    """x -> n pointwise ops, alternating so that none folds away."""
    def fn(x):
        for i in range(n):
            x = torch.sigmoid(x) if i % 2 else x * 1.5
        return x
    return fn


def per_call_us(fn, args, iters: int, device) -> tuple[float, float]:
    """(wall, CPU) µs per call: the medians over 5 rounds of `iters` calls. The CPU time (this
    process's) is the steadier figure on a machine shared with other work."""
    for _ in range(20):
        fn(*args)
    wall, cpu = [], []
    for _ in range(5):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(iters):
            fn(*args)
        wall.append((time.perf_counter() - start) / iters * 1e6)
        cpu.append((time.process_time() - start_cpu) / iters * 1e6)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return statistics.median(wall), statistics.median(cpu)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--kernels", type=int, default=8, help="kernels per call (default 8)")
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--rows", type=int, default=4)
    p.add_argument("--cols", type=int, default=16, help="the tensor is ROWS x COLS (default 4 x 16: kernels that cost next to nothing)")
    args = p.parse_args(argv)
    import fusec

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA GPU: run with --device cpu")
    fn, x = chain(args.kernels), torch.randn(args.rows, args.cols, device=device)
    compiled = fusec.compile(fn, (x.cpu(),), target="cuda" if device.type == "cuda" else "cpu", fusion="none")
    n = sum(1 for s in compiled.manifest["steps"] if s["op"] == "launch")
    torch.testing.assert_close(compiled(x), fn(x))
    print(f"# launcher host cost, {device.type}, torch {torch.__version__}, {n} kernels a call, {args.iters} calls")
    print("| implementation | µs a call | µs a kernel | CPU µs a call | CPU µs a kernel |")
    print("|---|--:|--:|--:|--:|")
    for name, f in [("empty Python call", lambda t: t), ("eager", fn), ("fusec.compile launcher", compiled)]:
        us, cpu = per_call_us(f, (x,), args.iters, device)
        print(f"| {name} | {us:.1f} | {us / n:.2f} | {cpu:.1f} | {cpu / n:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
