"""Sums over a whole tensor (losses, norms of a tensor) and into few outputs, and column sums
(`x.sum(0)`, a bias gradient over [B, T, C]), on the GPU.

fusec used to give such a sum one block per output: `x.pow(2).mean()` over 32768x4096 ran in a
single block of 256 threads. With `split_sums` (the default, 1024) the sum is two kernels: partial
sums over rows of at most 4096 elements (fused with what they sum), then their sum. Column sums
take the columns schedule (a thread per vector of adjacent columns, coalesced), split into partial
column sums over blocks of rows (`--fusec-split-column-sums`; `--split-sums 0`: one column kernel
of C / lanes threads). This times fusec with and without it (`--split-sums 0`), fusec with sliced
column kernels (`column_slices=0`: the warps of a block share a column's rows, the split makes
longer blocks; off by default until this table says it should be on), eager and
torch.compile(dynamic=False, fresh per entry), under the rules of bench/README.md: CUDA events, the median of `--repeat` CUDA-graph
replays, GB/s from minimal bytes (each input read once; the outputs are a few floats), % of a
device copy timed in the same run. Working sets are >= 240 MB except where marked `*`.

    python bench/whole_sums.py [--repeat 50] [--filter REGEX] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import datetime
import math
import re

import torch

import fusec
from fusec.timing import LARGE_CALLS, LATENCY_CALLS, device_copy_GBs, gpu_time_us

F = torch.nn.functional
MIN_WORKING_SET = 240e6


def mean_of_squares(x):  # the loss of an RMS, a weight decay term
    return x.float().pow(2).mean()


def mse(a, b):  # F.mse_loss
    return F.mse_loss(a.float(), b.float())


def l1(a, b):
    return (a.float() - b.float()).abs().mean()


def total(x):
    return x.sum(dtype=torch.float32)


def few_row_sums(x):  # a sum into 8 outputs: one block each, before
    return x.float().sum(dim=-1)


def column_sums(x):  # a sum over rows: 4096 fp32 columns were a block each, its loads 16 KB apart
    return x.float().sum(0)


def column_means(x):
    return x.float().mean(0)


def bias_grad(g):  # a linear layer's bias gradient over [B, T, C]
    return g.float().sum(dim=(0, 1))


# (name, function, input shapes, dtype): the shapes of the first suite and others (odd widths, 1-D,
# a 4-D activation, few long rows).
ENTRIES = [
    ("mean_of_squares", mean_of_squares, [(32768, 4096)], torch.bfloat16),
    ("mean_of_squares", mean_of_squares, [(32768, 4096)], torch.float32),
    ("mean_of_squares", mean_of_squares, [(9001, 7001)], torch.float32),
    ("mean_of_squares", mean_of_squares, [(1 << 26,)], torch.float32),
    ("mse", mse, [(64, 3, 224, 224)] * 2, torch.float32),
    ("mse", mse, [(16384, 5120)] * 2, torch.bfloat16),
    ("l1", l1, [(4096, 11008)] * 2, torch.bfloat16),
    ("total", total, [(8, 1 << 24)], torch.float32),
    ("few_row_sums", few_row_sums, [(8, 1 << 24)], torch.float32),
    ("few_row_sums", few_row_sums, [(64, 1 << 20)], torch.bfloat16),
    ("mean_of_squares", mean_of_squares, [(256, 4096)], torch.float32),
    ("column_sums", column_sums, [(32768, 4096)], torch.float32),
    ("column_sums", column_sums, [(32768, 4096)], torch.bfloat16),
    ("column_sums", column_sums, [(3000, 1001)], torch.float32),
    ("column_means", column_means, [(16384, 8192)], torch.bfloat16),
    ("bias_grad", bias_grad, [(128, 512, 1024)], torch.float32),
    ("bias_grad", bias_grad, [(256, 512, 1024)], torch.bfloat16),
    ("bias_grad", bias_grad, [(64, 512, 768)], torch.float32),
    # Column sums off the shapes above: GPT-2's bias gradient (the reductions suite's), long and
    # short columns, odd and vocabulary widths, few rows.
    ("column_sums", column_sums, [(32768, 3072)], torch.bfloat16),
    ("column_sums", column_sums, [(131072, 768)], torch.float32),
    ("column_sums", column_sums, [(8192, 1001)], torch.bfloat16),
    ("column_sums", column_sums, [(4096, 50257)], torch.float32),
    ("column_sums", column_sums, [(1000, 4096)], torch.float32),
    ("column_sums", column_sums, [(64, 4096)], torch.bfloat16),
    ("bias_grad", bias_grad, [(16, 2048, 3072)], torch.bfloat16),
    ("bias_grad", bias_grad, [(32, 197, 768)], torch.float32),
]


def _check(got, ref, name):
    got, ref = got.double(), ref.double()
    err = float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
    if not err < 1e-5:
        raise AssertionError(f"{name}: fusec is {err:.2e} off (relative to fp64)")
    return err


def run(repeat: int, pattern: str | None = None) -> list[str]:
    copy = device_copy_GBs(repeat)
    gpu = torch.cuda.get_device_name()
    lines = [f"# Whole-tensor sums, {gpu}, {datetime.date.today()}",
             "", f"device copy: {copy:.0f} GB/s; median of {repeat} CUDA-graph replays; command: "
             f"`python bench/whole_sums.py --repeat {repeat}`", "",
             "| entry | MB | fusec µs | % copy | fusec, unsplit µs | fusec, sliced µs | % copy | torch.compile µs | eager µs | fusec / torch.compile | sliced / torch.compile | err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    torch.manual_seed(0)
    for name, fn, shapes, dtype in ENTRIES:
        if pattern and not re.search(pattern, name):
            continue
        inputs = tuple(torch.randn(s, device="cuda").to(dtype) for s in shapes)
        nbytes = sum(t.numel() * t.element_size() for t in inputs)
        small = nbytes < MIN_WORKING_SET
        calls = LATENCY_CALLS if small else LARGE_CALLS
        label = f"{name} {'+'.join('x'.join(map(str, s)) for s in shapes[:1])} {str(dtype)[6:]}{' *' if small else ''}"
        ref = fn(*(t.double() for t in inputs))
        split = fusec.compile(fn, inputs)
        err = _check(split(*inputs), ref, label)
        unsplit = fusec.compile(fn, inputs, split_sums=0)
        _check(unsplit(*inputs), ref, label + " (unsplit)")
        sliced = fusec.compile(fn, inputs, column_slices=0)
        _check(sliced(*inputs), ref, label + " (sliced)")
        torch._dynamo.reset()
        compiled = torch.compile(fn, dynamic=False)
        compiled(*inputs)
        us = {key: gpu_time_us(lambda f=f: f(*inputs), repeat, calls)[0]
              for key, f in (("split", split), ("unsplit", unsplit), ("sliced", sliced), ("inductor", compiled),
                             ("eager", fn))}
        pct = {key: 100 * nbytes / us[key] / 1e3 / copy for key in ("split", "sliced")}
        lines.append(f"| {label} | {nbytes / 1e6:.0f} | {us['split']:.1f} | {pct['split']:.1f}% | {us['unsplit']:.1f} | "
                     f"{us['sliced']:.1f} | {pct['sliced']:.1f}% | {us['inductor']:.1f} | {us['eager']:.1f} | "
                     f"{us['inductor'] / us['split']:.2f}x | {us['inductor'] / us['sliced']:.2f}x | {err:.1e} |")
        print(lines[-1], flush=True)
        del inputs, split, unsplit, sliced, compiled
        torch.cuda.empty_cache()
    large = [line for line in lines if line.startswith("| ") and " * " not in line.split("|")[1] and "entry" not in line]
    for column, what in ((10, "fusec"), (11, "fusec, sliced,")):
        ratios = [float(line.split("|")[column].strip()[:-1]) for line in large]
        if ratios:
            lines += ["", f"geomean {what} / torch.compile over the {len(ratios)} entries >= 240 MB: "
                      f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x"]
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--markdown", help="also write the table here")
    p.add_argument("--filter", help="only the entries whose name matches this regex")
    args = p.parse_args()
    lines = run(args.repeat, args.filter)
    print("\n".join(lines[-4:]))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
