"""The online (max, sum of exp) pass against the row schedules' two rounds, at shapes of your choice
(GPU): cross-entropy (`ce`), logsumexp (`lse`) and softmax (`softmax`, which writes its rows: the
`force` variants make it take the online pass anyway, its second read from L2).

Every variant is compiled by fusec in the same process, checked against eager (1e-3) and timed under
bench/README.md's rules: CUDA events, the median of `--repeat` CUDA-graph replays, % of a device copy
timed in the same run from minimal bytes (the logits read once; softmax's rows also written once).
The rule's row length (`_ONLINE_ELEMENTS`) is set to 0 here, so that short rows can take the pass.

    python bench/online_sweep.py --kind ce --dtype bf16 --shapes 4096x50257,65536x2048 \
        --variants rounds,online [--compile]
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

import fusec
import fusec.codegen.plan as plan
from fusec.timing import device_copy_GBs, gpu_time_us

KINDS = {"ce": lambda x, t: F.cross_entropy(x, t), "lse": lambda x: torch.logsumexp(x.float(), -1),
         "softmax": lambda x: torch.softmax(x, -1)}
VARIANTS = {"rounds": dict(online_softmax=False), "online": {}, "t128": dict(threads_per_block=128),
            "t512": dict(threads_per_block=512), "u8": dict(row_unroll=8), "u2": dict(row_unroll=2),
            # a knob the row loop does not read: a compile of its own (the cache keys on the options)
            "force": dict(one_barrier_rows=65), "force512": dict(one_barrier_rows=65, threads_per_block=512)}
_RULE = plan._online


def _forced(facts, knobs):
    """The online pass for every paired group, rows written or not."""
    paired = {i for pair in facts.online for i in pair}
    return knobs.online_softmax and bool(paired) and paired == set(range(facts.reductions))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", choices=sorted(KINDS), required=True)
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16")
    p.add_argument("--shapes", required=True, help="ROWSxWIDTH,...")
    p.add_argument("--variants", default="rounds,online", help=",".join(VARIANTS))
    p.add_argument("--repeat", type=int, default=20)
    p.add_argument("--compile", action="store_true", help="also time torch.compile(dynamic=False)")
    args = p.parse_args()
    plan._ONLINE_ELEMENTS = 0
    fn, dtype = KINDS[args.kind], {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    copy = device_copy_GBs(args.repeat)
    print(f"device copy {copy:.0f} GB/s, {torch.cuda.get_device_name()}", flush=True)
    for rows, n in (tuple(map(int, s.split("x"))) for s in args.shapes.split(",")):
        x = torch.randn(rows, n, device="cuda", dtype=dtype)
        inputs = (x, torch.randint(0, n, (rows,), device="cuda")) if args.kind == "ce" else (x,)
        nbytes = x.numel() * x.element_size() * (2 if args.kind == "softmax" else 1)
        ref = fn(*inputs)
        cells = []
        for label in args.variants.split(","):
            plan._online = _forced if label.startswith("force") else _RULE
            f = fusec.compile(fn, inputs, **VARIANTS[label])
            ok = torch.allclose(f(*inputs).float(), ref.float(), rtol=1e-3, atol=1e-3)
            us = gpu_time_us(lambda: f(*inputs), args.repeat, 20)[0]
            kernel = f.compilation.schedules[0]
            cells.append(f"{label} {100 * nbytes / us / 1e3 / copy:.1f}%{'' if ok else ' WRONG'} "
                         f"[{kernel['schedule'][:8]} {kernel['threads']}]")
        if args.compile:
            torch._dynamo.reset()
            compiled = torch.compile(fn, dynamic=False)
            compiled(*inputs)
            us = gpu_time_us(lambda: compiled(*inputs), args.repeat, 20)[0]
            cells.append(f"torch.compile {100 * nbytes / us / 1e3 / copy:.1f}%")
        print(f"{args.kind} {rows}x{n} {args.dtype} ({nbytes / 1e6:.0f} MB): " + " | ".join(cells), flush=True)
        del x, inputs
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
