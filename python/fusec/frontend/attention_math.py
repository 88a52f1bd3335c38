"""scaled_dot_product_attention's fused-kernel ops decomposed into its math, as PyTorch's math backend
computes it (`_scaled_dot_product_attention_math`): the scale's square root on q and on k, q @ kᵀ, the
causal or given mask, softmax, @ v; bf16 and fp16 computed in fp32 and rounded once at the end.

On CUDA tensors torch.export (torch 2.11) records `_scaled_dot_product_efficient_attention` or
`_scaled_dot_product_flash_attention` even under `sdpa_kernel(MATH)`. torch-mlir imports neither, so
`fusec.compile` of a transformer block with CUDA inputs failed (Runtime/attention-export.py). What
the decompositions cannot express (dropout, the log-sum-exp a backward reads) stays NotImplemented:
the import then names the op.
"""

from __future__ import annotations

import math

import torch

__all__ = ["ATTENTION_DECOMPOSITIONS"]

aten = torch.ops.aten
_LOW_PRECISION = (torch.bfloat16, torch.float16)


def attention_math(q, k, v, mask=None, is_causal=False, scale=None):
    """(softmax(q kᵀ · scale + mask) v in q's dtype, the rows' log-sum-exp in fp32), in PyTorch's
    math backend's order of operations. The log-sum-exp is what a backward reads; where nothing
    reads it, it is dead code."""
    dtype = q.dtype
    if dtype in _LOW_PRECISION:
        q, k, v = q.float(), k.float(), v.float()
    root = math.sqrt(scale if scale is not None else 1.0 / math.sqrt(q.size(-1)))
    scores = (q * root) @ (k * root).transpose(-2, -1)
    if is_causal:
        keep = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    if mask is not None:
        scores = (scores.masked_fill(mask.logical_not(), float("-inf")) if mask.dtype == torch.bool
                  else scores + mask.to(scores.dtype))
    return (torch.softmax(scores, -1) @ v).to(dtype), torch.logsumexp(scores, -1).float()


def _no_state(q):
    """The random-number state of a call without dropout (seed, offset): empty."""
    return torch.zeros((), dtype=torch.long, device=q.device), torch.zeros((), dtype=torch.long, device=q.device)


def _efficient(q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *, scale=None):
    if dropout_p:
        return NotImplemented
    out, lse = attention_math(q, k, v, attn_bias, is_causal, scale)
    # the kernel's log-sum-exp has its rows padded to a multiple of 32 (empty when not asked for)
    width = -(-q.size(-2) // 32) * 32 if compute_log_sumexp else 0
    lse = torch.nn.functional.pad(lse, (0, width - q.size(-2)), value=float("inf")) if width else lse[..., :0]
    return (out, lse, *_no_state(q))


def _flash(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    if dropout_p or return_debug_mask:
        return NotImplemented
    out, lse = attention_math(q, k, v, None, is_causal, scale)
    empty = q.new_empty((0,), dtype=torch.int32)
    return (out, lse, empty, empty, q.size(-2), k.size(-2), *_no_state(q), q.new_empty((0,)))


ATTENTION_DECOMPOSITIONS = {
    aten._scaled_dot_product_efficient_attention.default: _efficient,
    aten._scaled_dot_product_flash_attention.default: _flash,
}
