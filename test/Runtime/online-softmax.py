# The online (max, sum of exp) pass on the GPU (codegen/online_softmax.py, row_loop's `_online_pass`):
# read-only rows whose reductions are a max and a sum of exp(x - max) stream once, each thread
# keeping a running max and a sum rescaled when the max rises, the block merging the pairs.
# Cross-entropy (GPT-2's and Llama 3's vocabularies, ignored targets, fp32 and bf16, odd widths,
# few rows: 1024 threads a row; rows of 100, under the rule's 2048: two rounds), NLL of
# log_softmax, and logsumexp (its `c` is the max with infinities replaced by 0: the sum is rescaled
# by exp(max - c) at the end).
# Rows of -inf, rows with +inf, NaN and masked (-inf) logits must come out as eager's: compared
# against eager in float64 (NaN and infinities in the same places) and against the same compile
# with `online_softmax=False` (the row schedules' two rounds).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import math

import torch
import torch.nn.functional as F

import fusec
from fusec.numerics import compare

torch.manual_seed(0)
cuda = torch.device("cuda")


def run(name, fn, args):
    online = fusec.compile(fn, args)
    rounds = fusec.compile(fn, args, online_softmax=False)
    kernels = online.compilation.schedules
    got, other = online(*args), rounds(*args)
    ref = fn(*(a.double() if a.is_floating_point() else a for a in args))
    results = []
    for out in (got, other):
        max_abs, scale, _ = compare(out.double().cpu(), ref.double().cpu())
        tol = (2e-5 if args[0].dtype == torch.float32 else 2 ** -7) * max(scale, 1.0)
        results.append("ok" if max_abs <= tol else f"WRONG ({max_abs:.3g} > {tol:.3g})")
    schedules = [(k["schedule"], k["threads"], k.get("online", "")[:8]) for k in kernels]
    print(f"{name}: {results[0]} two_rounds={results[1]} kernels={len(kernels)} {schedules[0]}")


def targets(rows, vocab):
    t = torch.randint(0, vocab, (rows,), device=cuda)
    t[::97] = -100
    return t


for rows, vocab, dtype in ((512, 50257, torch.bfloat16), (64, 128256, torch.bfloat16), (1000, 32003, torch.float32),
                           (3000, 100, torch.float32), (7, 4099, torch.bfloat16)):
    x = torch.randn(rows, vocab, device=cuda, dtype=dtype) * 4
    run(f"cross_entropy {rows}x{vocab} {str(dtype)[6:]}", lambda x, t: F.cross_entropy(x, t), (x, targets(rows, vocab)))
x = torch.randn(512, 50257, device=cuda, dtype=torch.bfloat16)
run("nll of log_softmax 512x50257 bfloat16", lambda x, t: F.nll_loss(F.log_softmax(x.float(), -1), t),
    (x, targets(512, 50257)))
run("cross_entropy per row 512x50257 bfloat16", lambda x, t: F.cross_entropy(x, t, reduction="none"),
    (x, targets(512, 50257)))

# Special values: a masked vocabulary (-inf logits), rows of -inf, a row with +inf, a row with NaN.
special = torch.randn(300, 5003, device=cuda)
special[:, 4000:] = -math.inf  # a masked vocabulary: finite results
special[10] = -math.inf  # logsumexp -inf; cross-entropy NaN (-inf - -inf)
special[11, 17] = math.inf
special[12, 4999] = math.nan
special[13, :4000] = -math.inf
special[13, 2500] = 1e30  # one finite value among -inf
special[14] = -1e30  # very negative, all equal
run("logsumexp 300x5003 special values", lambda x: torch.logsumexp(x, -1), (special,))
run("cross_entropy 300x5003 special values", lambda x, t: F.cross_entropy(x, t, reduction="none"),
    (special, torch.randint(0, 4000, (300,), device=cuda)))
run("logsumexp 2048x32000 float32", lambda x: torch.logsumexp(x, -1), (torch.randn(2048, 32000, device=cuda) * 10,))
run("logsumexp 256x65536 bfloat16", lambda x: torch.logsumexp(x.float(), -1),
    (torch.randn(256, 65536, device=cuda, dtype=torch.bfloat16),))
# CHECK-NOT: WRONG
# CHECK: cross_entropy 512x50257 bfloat16: ok two_rounds=ok kernels=2 ('row_loop', 256, 'max and ')
# CHECK: cross_entropy 64x128256 bfloat16: ok two_rounds=ok kernels=2 ('row_loop', 1024, 'max and ')
# CHECK: cross_entropy 1000x32003 float32: ok two_rounds=ok kernels=2 ('row_loop', 256, 'max and ')
# CHECK: cross_entropy 3000x100 float32: ok two_rounds=ok kernels=2 ('row_registers', 32, '')
# CHECK: cross_entropy 7x4099 bfloat16: ok two_rounds=ok kernels=2 ('row_loop', {{[0-9]+}}, 'max and ')
# CHECK: nll of log_softmax 512x50257 bfloat16: ok two_rounds=ok kernels=2 ('row_loop', 256, 'max and ')
# CHECK: cross_entropy per row 512x50257 bfloat16: ok two_rounds=ok kernels=1 ('row_loop', 256, 'max and ')
# CHECK: logsumexp 300x5003 special values: ok two_rounds=ok kernels=1 ('row_loop', {{[0-9]+}}, 'max and ')
# CHECK: cross_entropy 300x5003 special values: ok two_rounds=ok kernels=1 ('row_loop', {{[0-9]+}}, 'max and ')
# CHECK: logsumexp 2048x32000 float32: ok two_rounds=ok kernels=1 ('row_loop', 256, 'max and ')
# CHECK: logsumexp 256x65536 bfloat16: ok two_rounds=ok kernels=1 ('row_loop', 512, 'max and ')
