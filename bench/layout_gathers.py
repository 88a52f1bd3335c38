"""Layout ops and gathers inside fused kernels, on the GPU, at transformer shapes (issue 25): rotary
embeddings (Llama's rotate_half: slices, neg, cat), SwiGLU over `x.chunk(2, -1)`, GPT-2's split of
the packed qkv into scaled heads, BERT's word + position + token-type embeddings and LayerNorm,
T5's relative position buckets with their bias added to the scores, cross-entropy (mean, over a
GPT-2 and a Llama-3 vocabulary, ignored targets included), NLL of log_softmax, and poolings (a
window's reads are gathers too).

Each entry is checked against eager in float64 (fusec's tolerances), then fusec, eager and
torch.compile(dynamic=False, fresh per entry) are timed under the rules of bench/README.md: CUDA
events, the median of `--repeat` CUDA-graph replays, GB/s from minimal bytes (each input read once,
a gather's table counted for the rows it reads, each output written once), % of a device copy
timed in the same run. Working sets are >= 240 MB except where marked `*`.

    python bench/layout_gathers.py [--repeat 50] [--filter REGEX] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import copy
import datetime
import math
import os
import re
import sys

import torch

import fusec
from fusec.numerics import compare
from fusec.timing import LARGE_CALLS, LATENCY_CALLS, MIN_WORKING_SET, device_copy_GBs, gpu_time_us

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "CPU", "Inputs"))
from bert_embeddings import BertEmbeddings  # noqa: E402
from t5_buckets import T5Bias  # noqa: E402 (transformers' own bucket code, as the tests use it)

F = torch.nn.functional
CUDA = "cuda"


def rotate_half(x):
    return torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)


def rope(q, cos, sin):  # test/Fusion/Inputs/rope.py
    return q * cos + rotate_half(q) * sin


def swiglu(x):  # test/Fusion/Inputs/chunked_swiglu.py
    a, b = x.chunk(2, -1)
    return F.silu(a) * b


def split_heads(heads, width):
    """GPT-2's attention prologue (test/Fusion/Inputs/split_heads.py), at `heads` x `width`."""
    def fn(qkv):
        b, t, _ = qkv.shape
        q, k, v = qkv.split(heads * width, dim=-1)
        parts = [z.view(b, t, heads, width).transpose(1, 2) for z in (q, k, v)]
        scale = width ** -0.25
        return parts[0] * scale, parts[1] * scale, parts[2] + 0
    return fn


def cross_entropy(x, t):
    return F.cross_entropy(x, t)


def nll_of_log_softmax(x, t):
    return F.nll_loss(F.log_softmax(x.float(), -1), t)


def _ids(high, *shape):
    return torch.randint(0, high, shape, device=CUDA)


def _targets(rows, vocab):
    t = _ids(vocab, rows)
    t[::97] = -100  # ignored
    return t


def entries():
    """(name, model, inputs, minimal bytes) of each entry; built lazily, one at a time."""
    bf16 = torch.bfloat16

    def randn(*shape, dtype=bf16):
        return torch.randn(shape, device=CUDA, dtype=dtype)

    def nbytes(*tensors):
        return sum(t.numel() * t.element_size() for t in tensors)

    def rope_entry(b, h, s, d, dtype):
        q, cos, sin = randn(b, h, s, d, dtype=dtype), randn(s, d, dtype=dtype), randn(s, d, dtype=dtype)
        return rope, (q, cos, sin), nbytes(q, cos, sin) + nbytes(q)

    yield "rope 16x32x2048x128 bf16", lambda: rope_entry(16, 32, 2048, 128, bf16)
    yield "rope 8x40x1000x128 bf16", lambda: rope_entry(8, 40, 1000, 128, bf16)
    yield "rope 4x32x4096x64 fp32", lambda: rope_entry(4, 32, 4096, 64, torch.float32)

    def swiglu_entry(m, n, dtype):
        x = randn(m, n, dtype=dtype)
        return swiglu, (x,), nbytes(x) * 3 // 2

    yield "swiglu 16384x22016 bf16", lambda: swiglu_entry(16384, 22016, bf16)
    yield "swiglu 8192x28672 bf16", lambda: swiglu_entry(8192, 28672, bf16)
    yield "swiglu 9001x11010 fp32", lambda: swiglu_entry(9001, 11010, torch.float32)

    def heads_entry(b, t, h, d, dtype):
        qkv = randn(b, t, 3 * h * d, dtype=dtype)
        return split_heads(h, d), (qkv,), 2 * nbytes(qkv)

    yield "split_heads gpt2 32x1024x(12x64) bf16", lambda: heads_entry(32, 1024, 12, 64, bf16)
    yield "split_heads 16x2048x(16x128) bf16", lambda: heads_entry(16, 2048, 16, 128, bf16)

    def bert_entry(b, s, vocab, width, dtype):
        torch.manual_seed(0)
        model = BertEmbeddings(vocab, width, s).to(CUDA, dtype)
        ids, types = _ids(vocab, b, s), _ids(2, b, s)
        size = model.word.weight.element_size()
        # The word rows read and the output written; the position table and the token-type rows are
        # read once (every sequence reads the same ones); LayerNorm's weight and bias.
        rows = b * s * width * size
        return model, (ids, types), nbytes(ids, types) + 2 * rows + (s + 2 + 2) * width * size

    yield "bert embeddings+layernorm 128x512x1024 bf16", lambda: bert_entry(128, 512, 30522, 1024, bf16)
    yield "bert embeddings+layernorm 64x512x768 fp32", lambda: bert_entry(64, 512, 30522, 768, torch.float32)

    def t5_entry(b, h, s, dtype):
        torch.manual_seed(0)
        model = T5Bias(h).to(CUDA, dtype)
        scores = randn(b, h, s, s, dtype=dtype)
        return model, (scores,), 2 * nbytes(scores)

    yield "t5 bias 8x8x2048x2048 bf16", lambda: t5_entry(8, 8, 2048, bf16)
    yield "t5 bias 4x12x1000x1000 fp32", lambda: t5_entry(4, 12, 1000, torch.float32)

    def pool_entry(fn, shape, dtype):
        x = randn(*shape, dtype=dtype)
        with torch.no_grad():
            out = fn(x)
        return fn, (x,), nbytes(x, *(out if isinstance(out, tuple) else (out,)))

    def stem_pool(x):  # ResNet's stem pool after its ReLU: 3x3, stride 2, padding 1
        return F.max_pool2d(x.relu(), 3, 2, 1)

    # Poolings (window gathers: codegen/strided_gathers.py), at shapes beside the reductions suite's
    # resnet_stem_maxpool (64x64x112x112): odd widths (a scalar kernel), stride 1 averages, no padding, 1-D.
    yield "maxpool resnet stem 128x64x112x112 bf16", lambda: pool_entry(stem_pool, (128, 64, 112, 112), bf16)
    yield "maxpool resnet stem 64x64x112x112 fp32", lambda: pool_entry(stem_pool, (64, 64, 112, 112), torch.float32)
    yield "maxpool 3x3/2 odd 256x96x75x75 bf16", lambda: pool_entry(stem_pool, (256, 96, 75, 75), bf16)
    yield "avgpool 3x3/1 inception 48x192x64x64 fp32", lambda: pool_entry(
        lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False), (48, 192, 64, 64), torch.float32)
    yield "avgpool 2x2/2 densenet 128x256x56x56 bf16", lambda: pool_entry(lambda x: F.avg_pool2d(x, 2),
                                                                          (128, 256, 56, 56), bf16)
    yield "maxpool1d 3/2 256x512x1024 bf16", lambda: pool_entry(lambda x: F.max_pool1d(x, 3, 2, 1),
                                                                 (256, 512, 1024), bf16)

    def ce_entry(fn, rows, vocab, dtype):
        x, t = randn(rows, vocab, dtype=dtype), _targets(rows, vocab)
        return fn, (x, t), nbytes(x, t) + 4

    yield "cross_entropy gpt2 4096x50257 bf16", lambda: ce_entry(cross_entropy, 4096, 50257, bf16)
    yield "cross_entropy llama3 2048x128256 bf16", lambda: ce_entry(cross_entropy, 2048, 128256, bf16)
    yield "cross_entropy 8192x32000 fp32", lambda: ce_entry(cross_entropy, 8192, 32000, torch.float32)
    yield "nll_of_log_softmax 4096x50257 bf16", lambda: ce_entry(nll_of_log_softmax, 4096, 50257, bf16)
    yield "cross_entropy 256x50257 bf16", lambda: ce_entry(cross_entropy, 256, 50257, bf16)


def _check(model, inputs, outs):
    wide = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    with torch.no_grad():
        refs = wide(*(t.double() if t.is_floating_point() else t for t in inputs))
    refs = refs if isinstance(refs, tuple) else (refs,)
    outs = outs if isinstance(outs, tuple) else (outs,)
    worst = 0.0
    for out, ref in zip(outs, refs):
        max_abs, scale, tol = compare(out, ref.to(out.dtype))
        if not max_abs <= tol:
            raise AssertionError(f"fusec is off: max abs err {max_abs:.3e} > tolerance {tol:.3e}")
        worst = max(worst, max_abs / scale if scale else max_abs)
    return worst


def run(repeat: int, pattern: str | None = None) -> list[str]:
    copy_GBs = device_copy_GBs(repeat)
    lines = [f"# Layout ops and gathers in fused kernels, {torch.cuda.get_device_name()}, {datetime.date.today()}",
             "", f"device copy: {copy_GBs:.0f} GB/s; median of {repeat} CUDA-graph replays; command: "
             f"`python bench/layout_gathers.py --repeat {repeat}`", "",
             "| entry | MB | fusec kernels | fusec µs | % copy | torch.compile µs | % copy | eager µs | "
             "fusec / torch.compile | rel err |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []  # fusec / torch.compile of the entries >= 240 MB
    for name, build in entries():
        if pattern and not re.search(pattern, name):
            continue
        torch.manual_seed(0)
        model, inputs, nbytes = build()
        small = nbytes < MIN_WORKING_SET
        calls = LATENCY_CALLS if small else LARGE_CALLS
        label = name + (" *" if small else "")
        try:
            fn = fusec.compile(model, inputs)
            err = _check(model, inputs, fn(*inputs))
            torch._dynamo.reset()
            compiled = torch.compile(model, dynamic=False)
            with torch.no_grad():
                compiled(*inputs)
                us = {key: gpu_time_us(lambda f=f: f(*inputs), repeat, calls)[0]
                      for key, f in (("fusec", fn), ("inductor", compiled), ("eager", model))}
        except Exception as e:  # noqa: BLE001 (the row says what failed; the run goes on)
            lines.append(f"| {label} | {nbytes / 1e6:.0f} | FAIL: {type(e).__name__}: {str(e).splitlines()[0][:150]} |")
            print(lines[-1], flush=True)
            continue
        pct = {k: 100 * nbytes / us[k] / 1e3 / copy_GBs for k in us}
        lines.append(f"| {label} | {nbytes / 1e6:.0f} | {len(fn.manifest['kernels'])} | {us['fusec']:.1f} | "
                     f"{pct['fusec']:.1f}% | {us['inductor']:.1f} | {pct['inductor']:.1f}% | {us['eager']:.1f} | "
                     f"{us['inductor'] / us['fusec']:.2f}x | {err:.1e} |")
        print(lines[-1], flush=True)
        if not small:
            ratios.append(us["inductor"] / us["fusec"])
        del model, inputs, fn, compiled
        torch.cuda.empty_cache()
    if ratios:
        lines += ["", f"geomean fusec / torch.compile over the {len(ratios)} entries >= 240 MB: "
                  f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x"]
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--markdown", help="also write the table here")
    p.add_argument("--filter", help="only the entries whose name matches this regex")
    args = p.parse_args()
    lines = run(args.repeat, args.filter)
    print("\n".join(lines[-2:]))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
