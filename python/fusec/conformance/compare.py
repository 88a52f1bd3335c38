"""The verdict on one case: fusec's outputs against PyTorch eager's.

Every output must have eager's shape and dtype. Then, element by element:

- NaN exactly where eager has NaN (no tolerance: a NaN lost or made is a semantic difference).
- An infinity, or a non-float value (bool, integer), equal to eager's, or to the float64 reference's.
- A signed zero where eager has the other sign is a difference too ("-0.0"): 1 / x tells them apart.
- A finite float within  atol + rtol * |ref| + 8 * |eager32 - ref64|  of eager, or of the float64
  reference rounded to the output dtype:
  - rtol is 1e-5 for float32 (fusec's own fp32 tolerance: libm's transcendentals against
    PyTorch's vectorised ones, a few ulp), 1e-2 for bfloat16 (~2.5 ulp) and 2e-3 for float16 (~2 ulp):
    fusec computes bf16/fp16 ops in fp32 and rounds once, so a value is an ulp from eager at most
    where eager too computes in fp32; reductions and norms also get rtol * max|ref| of their output,
    a sum of terms larger than the result (fusec's summation order is not PyTorch's);
  - atol is the dtype's smallest normal number: a subnormal flushed to zero is not reported;
  - 8 * |eager32 - ref64| is eager's own float32 error on this element (the case's conditioning),
    as in fusec's fuzz oracle (python/fusec/fuzz/oracle.py): within a small factor of it is fine.
  The float64 reference is there because eager bf16/fp16 sometimes rounds an intermediate to the
  output dtype where fusec keeps fp32 (bf16 `div(rounding_mode="trunc")` on CPU rounds the quotient
  to bf16 before truncating it: 7.99 rounds to 8.0, truncates to 8, not 7): fusec's result is then
  the exactly rounded one, which the fp64 reference gives.
"""

from __future__ import annotations

__all__ = ["RTOL", "compare", "reference"]

RTOL = {"float32": 1e-5, "float64": 1e-5, "bfloat16": 1e-2, "float16": 2e-3}
_ERR_FACTOR = 8


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def reference(fn, tensors, dtype):
    """fn's outputs with every floating tensor cast to `dtype` (None when eager raises on them)."""
    ts = tuple(t.to(dtype) if t.dtype.is_floating_point else t for t in tensors)
    try:
        return _as_tuple(fn(*ts))
    except Exception:  # noqa: BLE001 - some ops have no fp64 kernel for an argument mix: no reference
        return None


def _first(mask) -> tuple:
    """The index of the first True element of `mask` (() for a 0-d tensor)."""
    import torch

    idx = torch.nonzero(mask, as_tuple=False)
    return tuple(idx[0].tolist()) if idx.numel() else ()


def _compare_one(o, e, e32, r64, scaled: bool) -> str | None:
    import torch

    if o.dtype != e.dtype or tuple(o.shape) != tuple(e.shape):
        return f"fusec gives {str(o.dtype)[6:]}{list(o.shape)}, eager {str(e.dtype)[6:]}{list(e.shape)}"
    if o.numel() == 0:
        return None
    alt = r64.to(e.dtype) if r64 is not None else e
    if not e.dtype.is_floating_point:
        bad = (o != e) & (o != alt)
        if bad.any():
            i = _first(bad)
            return f"value: fusec {o[i].item()!r} where eager {e[i].item()!r} at {i}"
        return None
    of, ef, af = o.double(), e.double(), alt.double()
    nan_o, nan_e = torch.isnan(of), torch.isnan(ef)
    if not torch.equal(nan_o, nan_e):
        made = nan_o & ~nan_e
        i = _first(made if made.any() else nan_e & ~nan_o)
        return (f"NaN: fusec {of[i].item()!r} where eager {ef[i].item()!r} at {i} "
                f"({int(made.sum())} NaN made, {int((nan_e & ~nan_o).sum())} lost)")
    inf = (torch.isinf(ef) | torch.isinf(af) | torch.isinf(of)) & ~nan_e
    bad_inf = inf & (of != ef) & (of != af)
    if bad_inf.any():
        i = _first(bad_inf)
        return f"inf: fusec {of[i].item()!r} where eager {ef[i].item()!r} at {i}"
    zero = (of == 0) & (ef == 0) & (af == 0) & (torch.signbit(of) != torch.signbit(ef)) & \
        (torch.signbit(of) != torch.signbit(af))
    if zero.any():
        i = _first(zero)
        return f"-0.0: fusec {of[i].item()!r} where eager {ef[i].item()!r} at {i}"
    finite = ~nan_e & ~inf
    name = str(e.dtype)[6:]
    rtol, atol = RTOL[name], torch.finfo(e.dtype).tiny
    cond = (e32.double() - r64.double()).abs() if e32 is not None and r64 is not None else torch.zeros_like(ef)
    cond = torch.nan_to_num(cond, nan=0.0, posinf=0.0)
    scale = float(ef[finite].abs().max()) if scaled and finite.any() else 0.0
    tol = atol + rtol * scale + _ERR_FACTOR * cond
    err_e, err_a = (of - ef).abs(), (of - af).abs()
    bad = finite & (err_e > tol + rtol * ef.abs()) & (err_a > tol + rtol * af.abs())
    if bad.any():
        err = torch.where(bad, torch.minimum(err_e, err_a), torch.zeros_like(err_e))
        i = _first(err == err.max())
        return (f"accuracy: max error {float(err.max()):.3e} at {i}: fusec {of[i].item()!r}, eager "
                f"{ef[i].item()!r}, fp64 {af[i].item()!r} ({int(bad.sum())} of {e.numel()} elements off)")
    return None


def compare(outs, eager, eager32, ref64, *, scaled: bool) -> str | None:
    """None when fusec's `outs` match; else what differs first (one line). `eager32`/`ref64`: the
    op on the inputs cast to float32/float64 (None where eager has no such kernel)."""
    outs, eager = _as_tuple(outs), _as_tuple(eager)
    if len(outs) != len(eager):
        return f"fusec returns {len(outs)} outputs, eager {len(eager)}"
    for k, (o, e) in enumerate(zip(outs, eager)):
        e32 = eager32[k] if eager32 is not None else None
        r64 = ref64[k] if ref64 is not None else None
        what = _compare_one(o.cpu(), e.cpu(), None if e32 is None else e32.cpu(), None if r64 is None else r64.cpu(),
                            scaled)
        if what is not None:
            return f"output {k}: {what}" if len(eager) > 1 else what
    return None
