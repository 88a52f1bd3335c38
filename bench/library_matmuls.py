"""Library matmuls (`--fusec-library-matmuls`) against the loop lowering and the tensor cores' kernel:
`gelu(F.linear(x, w, b))` at MLP shapes, fp32 and bf16, on the GPU. For each shape: eager, `torch.mm`
alone, and fusec compiled three ways: the matmul a library call (torch.mm: cuBLAS; the default), the
tensor cores' kernel with its epilogue (bf16 on sm_90a), and the generic loop lowering
(`library_matmuls=False`, only where it finishes in reasonable time). Each kernel is checked against
eager in float32 first (relative error printed), then timed under bench/README.md's rules (CUDA events,
the median of `--repeat` CUDA-graph replays of 10 calls).

    python bench/library_matmuls.py [--repeat 10] [--no-loops]
"""

from __future__ import annotations

import argparse

import torch

import fusec
from fusec.timing import LARGE_CALLS, gpu_time_us

F = torch.nn.functional
SHAPES = [(8192, 3072, 768, torch.float32), (4096, 4096, 4096, torch.float32), (2000, 3000, 1000, torch.float32),
          (8192, 3072, 768, torch.bfloat16), (8192, 768, 3072, torch.bfloat16), (8192, 11008, 4096, torch.bfloat16),
          (4096, 4096, 4096, torch.bfloat16), (2000, 3000, 1000, torch.bfloat16), (64, 4096, 4096, torch.bfloat16),
          (1, 4096, 4096, torch.bfloat16)]
WAYS = [("library", {}), ("wgmma", dict(wgmma=True)), ("loops", dict(library_matmuls=False, wgmma=False))]


def linear_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--no-loops", action="store_true", help="leave out the loop lowering (slow to time)")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), torch.__version__)
    for m, n, k, dtype in SHAPES:
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        w = torch.randn(n, k, device="cuda", dtype=dtype) / k ** 0.5
        b = torch.randn(n, device="cuda", dtype=dtype)
        want = linear_gelu(x.float(), w.float(), b.float())
        eager = gpu_time_us(lambda: linear_gelu(x, w, b), args.repeat, LARGE_CALLS)[0]
        mm = gpu_time_us(lambda: x @ w.T, args.repeat, LARGE_CALLS)[0]
        row = f"{m}x{n}x{k} {str(dtype)[6:]}: eager {eager:.1f} mm {mm:.1f}"
        for label, options in WAYS:
            if (label == "wgmma" and dtype == torch.float32) or (label == "loops" and (m * n * k > 3e10 or args.no_loops)):
                continue
            compiled = fusec.compile(linear_gelu, (x, w, b), **options)
            got = compiled(x, w, b).float()
            err = ((got - want).abs().max() / want.abs().max()).item()
            us = gpu_time_us(lambda: compiled(x, w, b), args.repeat, LARGE_CALLS)[0]
            row += f" | {label} {us:.1f} ({eager / us:.2f}x eager, err {err:.1e})"
        print(row, flush=True)


if __name__ == "__main__":
    main()
