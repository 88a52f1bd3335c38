"""Where a zoo model's forward spends host time through torch.compile(backend="fusec"), on a GPU.

    python bench/profile_forward.py llama      # real-width config, bf16, batch 1 x 1 token (decode)

Prints the host time of 100 back-to-back forwards (before the synchronize) for eager, fusec and
Inductor, then cProfile's table of a fusec forward, by own time and by cumulative time.
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import torch

from fusec.zoo import MODELS


def host_us(fn, inputs: dict, calls: int = 100) -> float:
    """Host µs per call of `calls` back-to-back forwards, after 5 warm-up calls."""
    with torch.no_grad():
        for _ in range(5):
            fn(**inputs)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn(**inputs)
        elapsed = time.perf_counter() - start
        torch.cuda.synchronize()
    return elapsed / calls * 1e6


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "llama"
    torch.manual_seed(0)
    model, inputs = MODELS[name].build("real")
    model = model.eval().cuda().to(torch.bfloat16)
    inputs = {k: v[:1, :1].cuda() for k, v in inputs.items()}
    print("eager host us", host_us(model, inputs))
    fusec = torch.compile(model, backend="fusec")
    print("fusec host us", host_us(fusec, inputs))
    print("inductor host us", host_us(torch.compile(model), inputs))
    profile = cProfile.Profile()
    profile.enable()
    host_us(fusec, inputs)
    profile.disable()
    stats = pstats.Stats(profile)
    stats.sort_stats("tottime").print_stats(35)
    stats.sort_stats("cumulative").print_stats(35)


if __name__ == "__main__":
    main()
