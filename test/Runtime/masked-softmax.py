# Softmax over rows holding -inf (a causal or padding mask, by masked_fill and by where) matches eager
# at few rows and many, odd widths and long rows, fp32 and bf16, on inputs made on the GPU (the
# model is traced on CUDA tensors); a bool output is right too. It was wrong in every row at 64 rows
# or fewer (the few-rows schedule vectorizes the mask's bytes: a vector<16xi1> load read 16 bits).
# A fully masked row is NaN in eager and here (zeros with _safe_softmax, attention's math path).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)


def by_masked_fill(x, mask):
    return torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)


def by_where(x, mask):
    return torch.softmax(torch.where(mask, float("-inf"), x), dim=-1)


def by_full_like(x, mask):
    return torch.softmax(torch.where(mask, torch.full_like(x, float("-inf")), x), dim=-1)


def by_safe_softmax(x, mask):
    """Attention's math path: a fully masked row gives zeros (its `any` over the row is a boolean
    reduction, which crossed the warp shuffles as i1 and failed in LLVM's NVVM lowering)."""
    return torch.ops.aten._safe_softmax(x.masked_fill(mask, float("-inf")), -1)


def with_bool_output(x, mask):
    probs = torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)
    return probs, probs > 1.0 / x.shape[-1]


wrong = 0
for rows, width in [(1, 4096), (8, 4096), (64, 2048), (65, 2048), (128, 1024), (8, 1000), (33, 77), (4, 32768)]:
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(rows, width, device="cuda", dtype=dtype)
        cols, row_ids = torch.arange(width, device="cuda"), torch.arange(rows, device="cuda")
        causal = cols[None, :] > row_ids[:, None] * (width // rows)
        mask = causal | (torch.rand(rows, width, device="cuda") < 0.3)
        mask[:, 0] = False
        if rows > 1:
            mask[-1] = True  # a fully masked row
        for model in (by_masked_fill, by_where, by_full_like, by_safe_softmax, with_bool_output):
            outs = fusec.compile(model, (x, mask))(x, mask)
            refs = model(x.double(), mask)
            outs, refs = (outs, refs) if isinstance(outs, tuple) else ((outs,), (refs,))
            for out, ref in zip(outs, refs):
                if ref.dtype == torch.bool:
                    bad = (out != ref).sum().item() > 0.001 * ref.numel()  # probabilities at the threshold may round
                else:
                    ref = ref.to(dtype)
                    nan_ok = torch.equal(out.isnan(), ref.isnan())
                    err = (out.double() - ref.double()).nan_to_num().abs().max().item()
                    bad = not nan_ok or err > (1e-5 if dtype == torch.float32 else 1e-2)
                if bad:
                    wrong += 1
                    print(f"WRONG {model.__name__} {rows}x{width} {dtype}")
print(f"wrong: {wrong}")
# CHECK-NOT: WRONG
# CHECK: wrong: 0
