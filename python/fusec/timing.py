"""GPU time of a callable, as `fusec bench` and `fusec tune` measure it (bench/README.md's rules).

GPU time from CUDA events, the median of `repeat` runs after a warm-up. The calls are captured in a
CUDA graph and each timed run replays it, after a busy-wait kernel, so the host's launch work
(Python, dynamo guards) is not timed. A device-to-device copy, timed the same way in the same run,
is the bandwidth a memory-bound kernel is compared with.
"""

from __future__ import annotations

import statistics
import warnings

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

__all__ = ["MIN_WORKING_SET", "COPY_BYTES", "LATENCY_CALLS", "LARGE_CALLS", "WARMUP", "DEVICE", "SLEEP_CYCLES",
           "WARM_UP_US", "warm_up", "gpu_time_us", "count_kernels", "device_copy_GBs", "calls_per_replay",
           "time_call"]

MIN_WORKING_SET = 240e6  # bytes: 4x L2; below this the data stay in L2 between runs
COPY_BYTES = 1 << 30  # the device copy's source tensor
LATENCY_CALLS = 20  # calls per CUDA graph for entries below MIN_WORKING_SET
# Calls per CUDA graph for the large entries. A replay costs the GPU about 2 µs of its own before the
# first kernel runs (measured on the H200: bf16 LayerNorm 4096x32768, 140.8 µs a replay of one call,
# 139.0 µs a call in replays of ten; ncu times the kernel alone at 138.8 µs); the device copy, which
# a graph would hand to the copy engines, is timed without one and pays no such cost. Ten calls a
# replay spread it to 0.2 µs a call, so that the kernels and the copy are compared alike.
LARGE_CALLS = 10
WARMUP = 10  # replays before the timed runs
DEVICE = "cuda"
SLEEP_CYCLES = 200_000  # busy-wait before each timed run (~0.1 ms): the host enqueues while the GPU waits
WARM_UP_US = 100_000  # GPU time a kernel runs, untimed, before it is timed


def warm_up(fn, calls: int) -> None:
    """Run `fn` for about WARM_UP_US of GPU time and discard the timing. On the H200 a first timing
    after other work (the float64 reference, another schedule's timing) ran up to 10% slow, and a
    short discarded timing (5 replays, ~1.5 ms at 1 GB) did not always absorb it: the same untuned
    kernel timed twice in a row differed by up to 10% on the largest bf16 entries."""
    us, _ = gpu_time_us(fn, 5, calls)
    gpu_time_us(fn, max(5, min(1000, int(WARM_UP_US / max(us * calls, 1e-3)))), calls)


def gpu_time_us(fn, repeat: int, calls: int, graph: bool = True) -> tuple[float, str]:
    """Median GPU time of one call of `fn` in µs, and how it was timed.

    `calls` calls are captured in one CUDA graph; each timed run is one replay between two CUDA
    events, preceded by a busy-wait kernel so that the replay is already queued when the start event
    fires. Should capture fail, the calls themselves are timed (host overhead then shows)."""
    def calls_of_fn():
        for _ in range(calls):
            fn()

    for _ in range(3):
        fn()
    run, how = calls_of_fn, "no CUDA graph (asked)"
    if graph:
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                calls_of_fn()
            run, how = graph.replay, "graph"
        except Exception as err:  # noqa: BLE001 - any capture failure: fall back, and say so
            torch.cuda.synchronize()
            graph, run, how = None, calls_of_fn, f"no CUDA graph ({type(err).__name__})"
    else:
        graph = None
    for _ in range(WARMUP):
        run()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeat)]
    for start, end in events:
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    us = statistics.median(s.elapsed_time(e) for s, e in events) * 1e3 / calls
    if graph is not None:
        graph.reset()  # give its memory pool back now
    return us, how


def quiet_profiler() -> None:
    """Inside `warnings.catch_warnings()`: torch 2.11's "Profiler clears events at the end of each
    cycle" on reading a profile is about a scheduler's cycles, which a one-shot profile has none of."""
    warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)


def count_kernels(fn) -> int | None:
    """GPU operations (kernels, copies, fills) one call of `fn` runs, as the PyTorch profiler sees them."""
    try:
        with warnings.catch_warnings():
            quiet_profiler()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            return sum(e.device_type == DeviceType.CUDA for e in prof.events())
    except Exception:  # noqa: BLE001 - a count is a nicety; the timing does not depend on it
        return None


def device_copy_GBs(repeat: int) -> float:
    src = torch.empty(COPY_BYTES // 4, device=DEVICE).normal_()
    dst = torch.empty_like(src)
    # Not in a CUDA graph: there a device-to-device copy becomes a memcpy node served by the copy
    # engines (~2.8 TB/s on the H200), not the SM copy kernel eager uses (~4.2 TB/s).
    us, _ = gpu_time_us(lambda: dst.copy_(src), repeat, calls=1, graph=False)
    return 2 * COPY_BYTES / us / 1e3


def calls_per_replay(latency: bool) -> int:
    """How many calls one timed CUDA-graph replay holds: LATENCY_CALLS for a working set that stays in
    L2, LARGE_CALLS otherwise."""
    return LATENCY_CALLS if latency else LARGE_CALLS


def time_call(fn, inputs, repeat: int, calls: int) -> float:
    """GPU µs of one call `fn(*inputs)`, as fusec bench times it, after the same warm-up."""
    fn(*inputs)
    warm_up(lambda: fn(*inputs), calls)
    return gpu_time_us(lambda: fn(*inputs), repeat, calls)[0]
