"""The oracle of `fusec fuzz`: compile one MODEL.py with fusec, run it, compare with PyTorch eager.

`evaluate(path, ...)` returns a verdict (a dict, JSON-able): status "pass", "rejected" (fusec
refused the model with a FusecError about an unsupported construct) or "failed", with the kind of
failure, a one-line signature that groups failures of one cause, and the details.

The reference. For bf16/fp16 models fusec's documented semantics is "read and write tensors in their
own dtype, compute in fp32" (frontend.export._ComputeInFloat32), as PyTorch's own fused kernels do. So the
reference is PyTorch eager run on the inputs and weights upcast to fp32 (casts inside the model still
round where the model says), its outputs cast to the dtypes eager gives them.

The tolerance, per output, as an absolute error with scale = max|ref|:

    rel(narrowest) * max(1, sqrt(n / 1024)) * scale  +  max(8, sqrt(n)) * err32  +  2 * rounding

- rel(narrowest) is run.compare's tolerance for the narrowest float type the model touches (1e-5 for
  fp32; 1e-2 for bf16/fp16, ~2.5 ulp of the largest value): a value rounded to bf16 inside the model
  lands one ulp away when fusec's fp32 value before the rounding differs from PyTorch's in the last
  bit, and an output is rounded once more.
- sqrt(n / 1024), n the longest reduction of the model, for sums longer than 1024 terms: rounding
  errors of a sum grow like sqrt(n) (a random walk; Higham, Accuracy and Stability, 4.2), and fusec
  may sum a row in a different order from PyTorch's pairwise/vectorised sums.
- err32 = max|eager fp32 - eager fp64| on this model and input: PyTorch's own fp32 error, which
  measures the conditioning of the computation (exp chains, cancellation in x - mean, a softmax of
  large sums, divisions). A correct fp32 implementation with other libm/libdevice transcendentals
  and another evaluation order is within a small factor (8) of it; for sums the factor can reach
  sqrt(n): PyTorch sums pairwise (error growing like log n), a kernel that sums a row in sequence
  has an error growing like sqrt(n). A wrong result is off by far more than that. (torch.compile's
  tests accept a result against an fp64 reference the same way: within a multiple of eager's error.)
  One fp32 run can be lucky, so err32 is the larger of that and max|perturbed - fp64|, where the
  perturbed reference moves every op's fp64 result by up to an fp32 half-ulp: the sum of a
  LayerNorm's own output is 0 up to n/spread times the rounding of its mean, and eager fp32 hit
  2.3e-5 on one input where a mean off by half an ulp, as correctly rounded as fp32 allows, gives
  8e-4 (regressions/sum_of_layer_norm.py, cuda seed 201).
- scale is at least 1e-6 (_SCALE_FLOOR): an output whose every reference value is below that, from
  inputs of order 1, comes from saturation or cancellation, where the reference itself carries no
  relative accuracy. GELU of a log-softmax (-9) is 0 in eager fp32 and fp64 alike (tanh rounds to -1)
  while fusec's exact 1 + tanh(t) = 2 / (1 + exp(-2t)) gives the true ~1e-23
  (regressions/gelu_saturated_to_zero.py); a tolerance proportional to max|ref| = 0 called that wrong.
- rounding = max|fp64 reference - the same with the model's casts to bf16/fp16 not rounding|, times
  2 (_ROUNDING_FACTOR): what the model does to a half-ulp change of a value it rounds. fusec's fp32
  value before such a cast may differ from PyTorch's in the last bit and round the other way, a
  whole bf16 ulp (2^-8 near 1), and what follows can amplify that: a LayerNorm divides it by its
  row's spread (tanh(exp(x)) cast to bf16, then layer_norm over 17 values of spread 0.3: an error
  of 9.4e-3 where rel(bf16) * scale allowed 8.0e-3; --dynamic-rows seed 3). The largest of many
  half-ulp roundings is close to half an ulp, so a one-ulp flip there moves an output about twice
  as far (that model: roundings 2.0e-2, the flip 9.4e-3). Models without such casts get 0.
NaN positions and infinities must agree (numerics.compare; `specials=1`: inputs hold NaN, inf, huge
or tiny values), on cuda with eager on the GPU where the CPU's differ (`_eager_on_gpu`), or with
the fp64 reference: CPU eager's gelu(+inf) is NaN where the CPU has AVX-512 (its vectorised erf) and
inf elsewhere and in fp64 (regressions/gelu_of_infinity.py). A model with such values whose cuda
output is off from CPU eager passes when it is within the tolerance of eager on the GPU. Where eager
fp32 overflows (NaN or inf) and the fp64 reference does not, a `specials` model's output is not
judged (`_overflowed`): a LayerNorm of a LayerNorm with weights of 1e30 has a variance past fp32's
range; eager gives NaN on the CPU and the GPU, fusec 0 (rsqrt(inf)), fp64 the normalised row
(regressions/layer_norm_of_huge_rows.py)."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import subprocess
import sys
import tempfile
import time

from .references import as_tuple as _as_tuple, eager_on_gpu as _eager_on_gpu, references as _references

__all__ = ["evaluate", "signature"]

_ERR32_FACTOR = 8  # times eager's own fp32 error; sqrt(n) for longer reductions (see above)
_SCALE_FLOOR = 1e-6  # the least max|ref| a tolerance is relative to (see above)
_ROUNDING_FACTOR = 2  # times what the model's own bf16/fp16 roundings move its outputs (see above)
_HINTS = re.compile(r"^# fuzz-oracle: narrowest=(\w+) longest-reduction=(\d+)( specials=1)?", re.MULTILINE)
# FusecErrors that say "this construct is not supported": the model is rejected, not failed.
# Any other FusecError (a pass that fails, LLVM that cannot parse fusec's IR) is a fusec bug.
_UNSUPPORTED = re.compile(r"cannot compile|not supported|no linalg lowering|could not import|"
                          r"torch\.export failed|unsupported", re.IGNORECASE)


def signature(kind: str, message: str) -> str:
    """`kind: first line of message` with locations, numbers, SSA names and types blurred, so that
    two models that fail for one reason have one signature (and are shrunk once)."""
    first = (message.strip().splitlines() or [""])[0]
    first = re.sub(r"\S+\.(py|mlir):\d+:\d+:?\s*", "", first)
    first = re.sub(r"\b(tensor|memref|vector)<[^>]*>", r"\1<...>", first)
    first = re.sub(r"%[\w#]+", "%V", first)
    first = re.sub(r"0x[0-9a-fA-F]+|(?<![A-Za-wyz_\d])\d+", "N", first)  # 1x2xf32 -> NxNxf32
    return f"{kind}: {first.strip()}"[:200]


def _verdict(status: str, kind: str, message: str, details=()) -> dict:
    sig = "" if status == "pass" else "mismatch" if kind == "mismatch" else signature(kind, message)
    return {"status": status, "kind": kind, "signature": sig,
            "message": message.strip(), "details": list(details)}


def _hints(source: str, inputs) -> tuple[str, int]:
    m = _HINTS.search(source)
    if m:
        return m.group(1), int(m.group(2))
    # A model file without the generator's hints: the narrowest dtype it names, the largest input.
    narrowest = next((d for d in ("bfloat16", "float16") if f"torch.{d}" in source), "float32")
    return narrowest, max((t.numel() for t in inputs), default=1)


def _specials(source: str) -> bool:
    """Whether the model may hold NaN or inf by design (an input class or a -inf mask, see
    fusec.fuzz.model.VALUE_CLASSES): its non-finite outputs are compared by position and sign."""
    m = _HINTS.search(source)
    return bool(m and m.group(3))


def _finite_gap(a, b) -> float:
    """max |a - b| where both are finite (0.0 when nowhere)."""
    import torch

    both = torch.isfinite(a) & torch.isfinite(b)
    return float((a - b).abs()[both].max()) if bool(both.any()) else 0.0


def _overflowed(r32, r64):
    """Where eager fp32 is NaN or inf and the fp64 reference finite (a `specials` model's variance of
    1e30-sized values: fp32 holds no answer there, eager's NaN is as arbitrary as fusec's 0), as a
    mask; None when nowhere."""
    import torch

    if not (r32.is_floating_point() and r64.is_floating_point()):
        return None
    mask = ~torch.isfinite(r32) & torch.isfinite(r64)
    return mask if bool(mask.any()) else None


def _forget_module(spec) -> None:
    """load_model_file registers the model file as a module; drop it (and its tensors)."""
    import torch

    owner = type(spec.model) if isinstance(spec.model, torch.nn.Module) else spec.model
    name = getattr(owner, "__module__", None)
    if name and name.startswith("fusec_model_"):
        sys.modules.pop(name, None)


def evaluate(path: str, *, target: str, compile_only: bool, arch: str = "sm_90", dynamic_rows: bool = False) -> dict:
    """Compile and check one model file. Never raises for a problem of the model or of fusec.
    `dynamic_rows`: compile with dim 0 of the inputs symbolic and check at another row count."""
    import torch

    from .. import FusecError
    from ..frontend import load_model_file

    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        spec = load_model_file(path)  # as `fusec MODEL.py` loads it
    except FusecError as err:
        return _verdict("failed", "invalid", f"the model file does not load: {err}")
    try:
        return _check(spec, source, target=target, compile_only=compile_only, arch=arch, dynamic_rows=dynamic_rows)
    finally:
        _forget_module(spec)
        del spec
        if compile_only is False and target == "cuda" and torch.cuda.is_available():
            torch.cuda.empty_cache()


# --dynamic-rows: the row count the compiled model is checked at, past the example's
_OTHER_ROWS = 3


def _dynamic_rows(spec):
    """(`dynamic_shapes` making dim 0 of the inputs symbolic, the spec with inputs at another row
    count, {"rows": that count}), or None when the model has no rows to vary. The rows are dim 0 of the first input of rank
    2 or more; every input of rank 2 or more with that many rows shares the symbol (torch.export
    refuses a model whose rows cannot vary, and the verdict is then `rejected`)."""
    import torch

    ranked = [t for t in spec.example_inputs if t.dim() >= 2]
    if not ranked or ranked[0].shape[0] < 2:
        return None
    rows, dim = ranked[0].shape[0], torch.export.Dim("rows")
    marked = [t.dim() >= 2 and t.shape[0] == rows for t in spec.example_inputs]
    gen = torch.Generator().manual_seed(1)
    inputs = tuple(torch.randn((rows + _OTHER_ROWS, *t.shape[1:]), generator=gen).to(t.dtype) if m else t
                   for t, m in zip(spec.example_inputs, marked))
    return (tuple({0: dim} if m else None for m in marked), dataclasses.replace(spec, example_inputs=inputs),
            {"rows": rows + _OTHER_ROWS})


def _check(spec, source, *, target, compile_only, arch, dynamic_rows=False) -> dict:
    import torch

    import fusec
    from fusec import FusecError

    options = {"arch": arch}
    checked, symbols = spec, {}  # the inputs the compiled model is checked on, and their row count
    if dynamic_rows:
        dynamic = _dynamic_rows(spec)
        if dynamic is None:
            return _verdict("rejected", "no-rows", "no input of rank 2 or more with 2 rows or more to vary")
        options["dynamic_shapes"], checked, symbols = dynamic
    try:
        plain, ref32, *refs64 = _references(checked)
    except Exception as err:  # noqa: BLE001 - the generator made a model PyTorch itself rejects
        if checked is not spec:  # its rows meet a fixed size: they cannot vary
            return _verdict("rejected", "fixed-rows", f"eager raises at another row count: {type(err).__name__}: {err}")
        return _verdict("failed", "invalid", f"PyTorch eager raised {type(err).__name__}: {err}")
    if not _specials(source) and not all(bool(torch.isfinite(r).all()) for r in ref32):
        return _verdict("failed", "invalid", "the reference has inf or NaN (a generator bug: values are bounded)")
    if not compile_only:
        options["target"] = target
    try:
        compiled = fusec.compile(spec.model, spec.example_inputs, **options)
    except FusecError as err:
        text = str(err)
        if _UNSUPPORTED.search(err.message):
            return _verdict("rejected", "unsupported", text)
        return _verdict("failed", "error", text)
    except Exception as err:  # noqa: BLE001 - any other exception of fusec's is a failure
        return _verdict("failed", "exception", f"{type(err).__name__}: {err}", _traceback(err))
    if compile_only:
        return _check_compiled(compiled, plain, arch, symbols)
    return _run_and_compare(compiled, checked, plain, ref32, refs64, _hints(source, checked.example_inputs),
                            target, _specials(source))


def _traceback(err) -> list[str]:
    import traceback

    return "".join(traceback.format_exception(type(err), err, err.__traceback__)).splitlines()[-12:]


def _check_compiled(compiled, plain, arch, symbols: dict) -> dict:
    """Compile-only: the manifest's outputs are eager's (their sizes evaluated at `symbols`, the
    row count of eager's inputs), and ptxas (when found) accepts the PTX."""
    from ..manifest import evaluate

    outputs = compiled.manifest["outputs"]
    if len(outputs) != len(plain):
        return _verdict("failed", "wrong-output", f"the manifest lists {len(outputs)} outputs, eager returns {len(plain)}")
    for i, (o, r) in enumerate(zip(outputs, plain)):
        if [evaluate(d, symbols) for d in o["shape"]] != list(r.shape) or o.get("dtype", str(r.dtype)[6:]) != str(r.dtype)[6:]:
            return _verdict("failed", "wrong-output", f"output {i} is {o.get('dtype')}{o['shape']} in the manifest, "
                            f"{str(r.dtype)[6:]}{list(r.shape)} in eager")
    from ..backends.cuda_tools import ptxas_path

    ptxas = ptxas_path()
    if ptxas is None:
        return _verdict("pass", "", "")
    with tempfile.TemporaryDirectory(prefix="fusec-fuzz-") as tmp:
        ptx = os.path.join(tmp, "kernel.ptx")
        with open(ptx, "w", encoding="utf-8") as f:
            f.write(compiled.ptx)
        done = subprocess.run([ptxas, f"-arch={arch}", ptx, "-o", os.path.join(tmp, "kernel.cubin")],
                              check=False, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        return _verdict("failed", "ptxas", f"ptxas rejected the PTX: {done.stderr.strip()}")
    return _verdict("pass", "", "")


def _tolerance_factor(narrowest: str, longest: int) -> float:
    from ..numerics import TOLERANCE

    factor = TOLERANCE[narrowest]
    if narrowest == "float32" and longest > 1024:
        factor *= math.sqrt(longest / 1024)
    return factor


def _run_and_compare(compiled, spec, plain, ref32, refs64, hints, target, specials=False) -> dict:
    import torch

    from fusec import FusecError

    from ..numerics import compare

    device = torch.device("cuda") if target == "cuda" else torch.device("cpu")
    inputs = tuple(t.to(device) for t in spec.example_inputs)
    try:
        outs = _as_tuple(compiled(*inputs))
        if target == "cuda":
            torch.cuda.synchronize()
        again = _poisoned_run(compiled, inputs)
    except FusecError as err:
        return _verdict("failed", "error", f"the compiled model raised: {err}")
    except Exception as err:  # noqa: BLE001 - any other exception of fusec's is a failure
        return _verdict("failed", "exception", f"the compiled model raised {type(err).__name__}: {err}", _traceback(err))
    if len(outs) != len(plain):
        return _verdict("failed", "wrong-output", f"fusec returned {len(outs)} outputs, eager {len(plain)}")
    factor = _tolerance_factor(*hints)
    lines, bad = [], []
    on_gpu = []  # eager on the GPU: run once, if an output's NaN or inf differ from the CPU's
    for i, (o, p, r32, r64, smooth, moved) in enumerate(zip(outs, plain, ref32, *refs64)):
        what = f"output {i} {str(p.dtype)[6:]}{list(p.shape)}"
        if o.dtype != p.dtype or tuple(o.shape) != tuple(p.shape):
            return _verdict("failed", "wrong-output", f"{what}: fusec returned {str(o.dtype)[6:]}{list(o.shape)}")
        o = output = o.cpu()
        ref = r32.to(p.dtype)
        overflowed = _overflowed(r32, r64) if specials else None
        if overflowed is not None:  # no fp32 answer there to judge fusec's by
            o, ref = (torch.where(overflowed, r64.to(p.dtype), t) for t in (o, ref))
        max_abs, scale, _ = compare(o, ref)
        if math.isinf(max_abs) and target == "cuda":  # NaN/inf elsewhere: as eager on the GPU, then?
            on_gpu = on_gpu or list(_eager_on_gpu(spec))
            max_abs, scale, _ = compare(o, on_gpu[i].cpu().to(p.dtype))
        if math.isinf(max_abs):  # or as the fp64 reference (CPU eager's vectorised erf on AVX-512: gelu(inf) NaN)
            max_abs, scale, _ = compare(o, r64.to(p.dtype))
        err32 = _finite_gap(r32.double(), r64.double())
        if moved is not None:
            err32 = max(err32, _finite_gap(moved.double(), r64.double()))
        rounding = _finite_gap(r64.double(), smooth.double())
        tol = factor * max(scale, _SCALE_FLOOR) + max(_ERR32_FACTOR, math.sqrt(hints[1])) * err32 \
            + _ROUNDING_FACTOR * rounding
        ok = max_abs <= tol
        if not ok and target == "cuda" and specials:  # as eager on the GPU, then?
            on_gpu = on_gpu or list(_eager_on_gpu(spec))
            gpu_abs, _, _ = compare(o, on_gpu[i].cpu().to(p.dtype))
            ok = gpu_abs <= tol
            max_abs = gpu_abs if ok else max_abs
        unjudged = "" if overflowed is None else f"; {int(overflowed.sum())} elements overflow in eager, not judged"
        lines.append(f"{what}: max abs err {max_abs:.3e}, tolerance {tol:.3e} (max|ref| {scale:.3e}, "
                     f"eager fp32 err {err32:.3e}, the model's bf16/fp16 roundings {rounding:.3e}{unjudged})"
                     f"{'' if ok else '  MISMATCH'}")
        if not ok:
            bad.append(i)
        if again is not None and not _same(again[i].cpu(), output):
            return _verdict("failed", "nondeterministic",
                            f"{what}: a second call with every fusec buffer filled with NaN first gives "
                            "another result (a kernel reads memory nobody wrote?)", lines)
    if bad:
        return _verdict("failed", "mismatch", lines[bad[0]], lines)
    return _verdict("pass", "", "", lines)


def _poisoned_run(compiled, inputs):
    """Call again with the runtime's buffers filled with NaN first, where the runtime can (the
    `poison` switch of fusec.runtime's Executable, which `fusec run` uses)."""
    executable = getattr(compiled, "_executable", None)
    if executable is None or not hasattr(executable, "poison"):
        return None
    executable.poison = True
    try:
        return _as_tuple(compiled(*inputs))
    finally:
        executable.poison = False


def _same(a, b) -> bool:
    import torch

    return bool(torch.equal(torch.isnan(a), torch.isnan(b))) and bool(
        torch.equal(torch.nan_to_num(a, nan=0.0), torch.nan_to_num(b, nan=0.0)))


def timed_evaluate(path: str, **kwargs) -> dict:
    start = time.perf_counter()
    verdict = evaluate(path, **kwargs)
    verdict["seconds"] = round(time.perf_counter() - start, 3)
    return verdict
