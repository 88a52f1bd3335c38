"""Two compiled versions of one zoo model, timed in turns in one process (a host-cost A/B).

    python bench/backend_ab.py gpt2/prefill/4x512 --b fusec:fast_views=False
    python bench/backend_ab.py gpt2/prefill/4x512 --a fusec:cuda_graphs=True --b inductor-ro

A version is an implementation of `fusec bench --models` (eager, inductor, inductor-ro, fusec,
fusec-graphs), a fusec one with backend options after a colon (`fusec:cuda_graphs=True,fast_views=False`).

The host time of a forward is noisy on a shared machine (the same GPT-2 forward measured 1490-2000 µs
in four runs of `fusec bench --models` within two minutes on the H100), so two versions timed in
separate runs cannot be compared to 10%. Here both are compiled in one process and measured in
alternating rounds; each round gives, per version:

- host µs: `--calls` forwards back to back, host time up to the last call's return (before the sync);
- latency µs: the median of single forwards from an idle GPU, by CUDA events (host work included).

The table is the median over rounds, and B/A. Entries are `fusec bench --models` ones
(`fusec.bench_zoo.ENTRIES`: bf16, real widths, random weights).
"""

from __future__ import annotations

import argparse
import ast
import statistics

import torch

from fusec.bench_zoo import ENTRIES, _build, _compiled, _logits, host_us, latency_us
from fusec.numerics import relative_error


def options(text: str) -> dict:
    """`a=1,b=False` -> {"a": 1, "b": False}."""
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        out[key] = ast.literal_eval(value)
    return out


def compiled(model, version: str):
    implementation, _, opts = version.partition(":")
    return _compiled(model, implementation, options(opts))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("entry", help="a `fusec bench --models` entry, e.g. gpt2/prefill/4x512")
    p.add_argument("--a", default="fusec", help="version A (default: fusec)")
    p.add_argument("--b", default="fusec:fast_views=False", help="version B (default: fusec:fast_views=False)")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=30)
    args = p.parse_args()
    entry = next(e for e in ENTRIES if e.name == args.entry)
    model, inputs = _build(entry)
    versions = {"A": args.a, "B": args.b}
    with torch.no_grad():
        want = model(**inputs)
        versions_fn = {}
        for name, version in versions.items():
            fn = compiled(model, version)
            error = relative_error(_logits(fn(**inputs)).float(), _logits(want).float(), rms=True)
            for _ in range(5):
                fn(**inputs)
            versions_fn[name] = fn
            print(f"{name}: {version}, relative error against eager {error:.1e}")
        samples = {name: {"host": [], "latency": []} for name in versions_fn}
        for _ in range(args.rounds):
            for name, fn in versions_fn.items():
                forward = lambda: fn(**inputs)  # noqa: E731
                samples[name]["host"].append(host_us(forward, args.calls))
                samples[name]["latency"].append(latency_us(forward, 10))
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.entry}, "
          f"{args.rounds} rounds of {args.calls} calls")
    print(f"{'':4} {'host us':>9} {'latency us':>11}")
    med = {n: {k: statistics.median(v) for k, v in s.items()} for n, s in samples.items()}
    for name in versions_fn:
        print(f"{name:4} {med[name]['host']:9.1f} {med[name]['latency']:11.1f}")
    print(f"{'B/A':4} {med['B']['host'] / med['A']['host']:9.3f} {med['B']['latency'] / med['A']['latency']:11.3f}")


if __name__ == "__main__":
    main()
