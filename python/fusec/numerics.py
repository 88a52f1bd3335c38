"""A compiled model's outputs against a reference's: the tolerances of `fusec run`, `fusec bench`
and the fuzzer's oracle (fusec.fuzz.oracle).

Tolerance: max abs error <= 1e-5 x max|ref| in fp32, 1e-2 x max|ref| in bf16/fp16.
"""

from __future__ import annotations

import torch

__all__ = ["TOLERANCE", "compare", "relative_error"]

TOLERANCE = {"float32": 1e-5, "float64": 1e-5, "bfloat16": 1e-2, "float16": 1e-2}  # x max|ref|, by dtype


def _compare_exact(out, ref) -> tuple[float, float, float]:
    """Integers and bools are compared exactly, in their own type: as float32 (the float path) two
    int64 values 1 apart past 2^24 read as equal. Differing integers differ by at least 1."""
    scale = float(ref.abs().max().double()) if ref.numel() and ref.dtype != torch.bool else float(ref.numel() > 0)
    if out.shape == ref.shape and torch.equal(out.to(ref.dtype), ref):
        return 0.0, scale, 0.0
    if out.shape != ref.shape:
        return float("inf"), scale, 0.0
    differ = out.to(ref.dtype) != ref
    diff = (out.double() - ref.double()).abs()[differ]
    return max(float(diff.max()), 1.0), scale, 0.0


def compare(out, ref) -> tuple[float, float, float]:
    """(max abs error, max|ref|, tolerance as abs error); NaNs must agree in position, infinities in
    position and sign (an error of inf otherwise); the rest is compared where the reference is finite."""
    if not (ref.dtype.is_floating_point or ref.dtype.is_complex):
        return _compare_exact(out, ref)
    out32, ref32 = out.float(), ref.float()
    nan_out, nan_ref = torch.isnan(out32), torch.isnan(ref32)
    if not torch.equal(nan_out, nan_ref):
        return float("inf"), 0.0, 0.0
    inf_out, inf_ref = torch.isinf(out32), torch.isinf(ref32)
    if not torch.equal(inf_out, inf_ref) or not torch.equal(out32[inf_ref], ref32[inf_ref]):
        return float("inf"), 0.0, 0.0
    finite = ~nan_ref & ~inf_ref
    diff = (out32 - ref32).abs()[finite]
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(ref32[finite].abs().max()) if diff.numel() else 0.0
    tol = TOLERANCE.get(str(ref.dtype)[6:], 0.0) * max(scale, 1e-30)
    return max_abs, scale, tol


def relative_error(got, want, rms: bool = False) -> float:
    """max|got - want| / max|want| (`rms`: the root-mean-square difference over max|want|;
    the difference alone where want is all zeros; inf for NaN or a missing tensor)."""
    if got is None or want is None:
        return 0.0 if got is want else float("inf")
    if not want.numel():
        return 0.0
    diff = got.double() - want.double()
    diff = diff.square().mean().sqrt().item() if rms else diff.abs().max().item()
    scale = want.double().abs().max().item()
    return float("inf") if diff != diff else diff / scale if scale else diff
