"""`fusec bench --models`: the model zoo end to end on the GPU, fusec against eager and Inductor.

Each entry is one zoo model (fusec.zoo.models, real widths, 2 layers or stages, random weights) in
bfloat16 inference at one input shape: `prefill` (4 x 512 tokens; BERT and T5 8 x 256; 8 images of
224 x 224) or `decode` (one forward of 1 x 1 token, no KV cache: the latency case, where the host
decides). Every implementation is compiled in the same process (`dynamic=False`; dynamo keeps one
cache entry per backend, each found by its backend first) and all of them are then timed in turns:

    eager         the model as it is
    inductor      torch.compile(model)
    inductor-ro   torch.compile(model, mode="reduce-overhead")   (Inductor with CUDA graphs)
    fusec         torch.compile(model, backend="fusec")
    fusec-graphs  torch.compile(model, backend="fusec", options={"cuda_graphs": True})

Timing in turns: the host time of a forward drifts on a shared machine (the same fusec GPT-2 forward
took 1490 to 2000 µs in four runs within two minutes on the H100, 2026-12-06), so implementations
timed one after another were compared across that drift (fusec-graphs at 0.84x Inductor
reduce-overhead that way, 1.05x timed in turns). `ROUNDS` rounds each time every implementation.

What each row holds:
- `us`: µs per forward, the median of `repeat` forwards (spread over the rounds), each started from an
  idle GPU (synchronize, CUDA event, forward, CUDA event): what a caller waits for, host work included;
- `host_us`: CPU µs to issue one forward (the median over the rounds of 20 forwards issued back to
  back, timed before the synchronize; where the GPU is the slower, a full launch queue makes the
  host wait too, and this is an upper bound);
- `gpu`: GPU µs per forward by kind of kernel, from torch.profiler over 5 forwards: `fusec` (fusec's
  kernels), `triton` (Inductor's), `gemm` (cuBLAS, CUTLASS), `attention` (flash / memory-efficient
  attention), `other` (PyTorch's own kernels: copies, elementwise, reductions), and `kernels`, the
  launches per forward;
  `top` names the 8 kernels (by name) that take the most GPU time per forward;
- `error`: the output's RMS error against eager's, over max |eager|; the zoo (`fusec zoo`) is
  where numerics are judged, this only shows that the timed model computed the same thing.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
import time
import traceback
import warnings

import torch

from .numerics import relative_error
from .timing import quiet_profiler

__all__ = ["IMPLEMENTATIONS", "ENTRIES", "Entry", "entries", "run_entry"]

IMPLEMENTATIONS = ("eager", "inductor", "inductor-ro", "fusec", "fusec-graphs")


@dataclasses.dataclass(frozen=True)
class Entry:
    model: str  # a zoo model
    shape: str  # prefill | decode
    tokens: tuple | None  # (batch, sequence) of a language model; None for images
    images: int = 0  # batch of a vision model

    @property
    def name(self) -> str:
        what = f"{self.tokens[0]}x{self.tokens[1]}" if self.tokens else f"{self.images}x3x224x224"
        return f"{self.model}/{self.shape}/{what}"


ENTRIES = [
    Entry("llama", "prefill", (4, 512)), Entry("llama", "decode", (1, 1)),
    Entry("gpt2", "prefill", (4, 512)), Entry("gpt2", "decode", (1, 1)),
    Entry("mistral", "decode", (1, 1)), Entry("qwen2", "prefill", (4, 512)),
    Entry("bert", "prefill", (8, 256)), Entry("t5", "prefill", (8, 256)),
    Entry("vit", "prefill", None, 8), Entry("resnet-hf", "prefill", None, 8),
    Entry("convnext-hf", "prefill", None, 8),
]


def entries(pattern: str | None) -> list[Entry]:
    return [e for e in ENTRIES if pattern is None or re.search(pattern, e.name)]


def _build(entry: Entry):
    from .zoo import models
    from .zoo.harness import randomize_constants

    torch.manual_seed(0)
    saved = models.TOKENS
    models.TOKENS = entry.tokens
    try:
        model, inputs = models.MODELS[entry.model].build("real")
    finally:
        models.TOKENS = saved
    randomize_constants(model)
    if entry.images:
        inputs = {k: torch.randn(entry.images, *v.shape[1:]) for k, v in inputs.items()}
    model = model.to("cuda", torch.bfloat16).eval()
    inputs = {k: v.to("cuda", torch.bfloat16 if v.is_floating_point() else v.dtype) for k, v in inputs.items()}
    return model, inputs


def _compiled(model, implementation: str, options: dict | None = None):
    """`model` as `implementation` runs it (one of IMPLEMENTATIONS); `options`: more fusec backend
    options."""
    if implementation == "eager":
        return model
    if implementation.startswith("inductor"):
        mode = "reduce-overhead" if implementation == "inductor-ro" else None
        return torch.compile(model, mode=mode, dynamic=False)
    if implementation not in ("fusec", "fusec-graphs"):
        raise ValueError(f"unknown implementation {implementation!r}: one of {', '.join(IMPLEMENTATIONS)}")
    graphs = {"cuda_graphs": True} if implementation == "fusec-graphs" else {}
    return torch.compile(model, backend="fusec", options={**graphs, **(options or {})}, dynamic=False)


def _logits(out) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    return out["logits"] if "logits" in out else out[0]


def latency_us(forward, repeat: int) -> float:
    """Median µs of one forward from an idle GPU, host work included."""
    return statistics.median(latency_samples(forward, repeat))


def latency_samples(forward, repeat: int) -> list[float]:
    """µs of each of `repeat` forwards, each from an idle GPU, host work included."""
    events = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        forward()
        end.record()
        events.append((start, end))
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e3 for s, e in events]


def host_us(forward, calls: int = 20) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        forward()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


_KINDS = [("fusec", re.compile(r"^main_kernel")), ("triton", re.compile(r"^triton")),
          ("attention", re.compile(r"flash|fmha|attention|attn", re.I)),
          ("gemm", re.compile(r"gemm|cutlass|xmma|cublas|sm\d+_.*_tn|nvjet|matmul", re.I))]


def kernel_kind(name: str) -> str:
    """fusec | triton | attention | gemm | other, from a GPU kernel's name."""
    for kind, pattern in _KINDS:
        if pattern.search(name):
            return kind
    return "other"


def gpu_breakdown(forward, calls: int = 5) -> dict:
    """GPU µs per forward by kind of kernel (kernel_kind), and kernels per forward."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with warnings.catch_warnings():
        quiet_profiler()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                forward()
            torch.cuda.synchronize()
        events = prof.events()
    totals = {kind: 0.0 for kind, _ in _KINDS} | {"other": 0.0}
    by_name: dict = {}
    kernels = 0
    for e in events:
        if e.device_type == DeviceType.CUDA:
            totals[kernel_kind(e.name)] += e.device_time / calls
            by_name[e.name] = by_name.get(e.name, 0.0) + e.device_time / calls
            kernels += 1
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:8]
    return {**{k: round(v, 1) for k, v in totals.items()}, "kernels": kernels / calls,
            "top": [(name[:100], round(us, 1)) for name, us in top]}


def _reports() -> list:
    import fusec.torch_backend as tb

    return tb.reports


ROUNDS = 5


def run_entry(entry: Entry, implementations=IMPLEMENTATIONS, repeat: int = 50, warmup: int = 5) -> list[dict]:
    """One row per implementation of `entry` (a row whose implementation failed holds `error_text`).
    All are compiled first, then timed in `ROUNDS` alternating rounds."""
    rows, ready = [], {}
    torch._dynamo.reset()
    model, inputs = _build(entry)
    with torch.no_grad():
        want = _logits(model(**inputs)).float()
        for implementation in implementations:
            row = {"entry": entry.name, "model": entry.model, "shape": entry.shape, "implementation": implementation}
            first = len(_reports())
            try:
                fn = _compiled(model, implementation)
                t0 = time.perf_counter()
                got = _logits(fn(**inputs)).float()
                row["compile_s"] = round(time.perf_counter() - t0, 1)
                row["error"] = relative_error(got, want, rms=True)
                del got
                for _ in range(warmup):
                    fn(**inputs)
                if implementation.startswith("fusec"):
                    row["fusec"] = _fusec_counts(_reports()[first:])
                ready[implementation] = (row, lambda fn=fn: fn(**inputs))
            except Exception as err:  # noqa: BLE001 (a failure is a row of the table, not the end of the run)
                _failed(row, err)
            rows.append(row)
        latencies = {name: [] for name in ready}
        hosts = {name: [] for name in ready}
        for _ in range(ROUNDS):
            for name, (row, forward) in ready.items():
                if "error_text" in row:
                    continue
                try:
                    latencies[name] += latency_samples(forward, max(1, -(-repeat // ROUNDS)))
                    hosts[name].append(host_us(forward))
                except Exception as err:  # noqa: BLE001
                    _failed(row, err)
        for name, (row, forward) in ready.items():
            if "error_text" in row:
                continue
            row["us"] = round(statistics.median(latencies[name]), 1)
            row["host_us"] = round(statistics.median(hosts[name]), 1)
            try:
                row["gpu"] = gpu_breakdown(forward)
            except Exception as err:  # noqa: BLE001
                _failed(row, err)
    ready.clear()
    torch._dynamo.reset()
    return rows


def _failed(row: dict, err: BaseException) -> None:
    row["error_text"] = f"{type(err).__name__}: {str(err).strip().splitlines()[0][:300] if str(err) else ''}"
    row["traceback"] = traceback.format_exc(limit=4)


def _fusec_counts(reports) -> dict:
    """Regions that launch kernels, kernels, and the ATen ops left in PyTorch by kind, over `reports`."""
    from .zoo.harness import count_reports

    counts = count_reports(reports)
    return {"regions": counts.regions, "kernels": counts.kernels, "ops": counts.ops, "in_pytorch": dict(counts.pytorch)}
