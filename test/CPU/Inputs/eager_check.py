"""One check of a compiled model against eager in float64, printed on one line: its kernel count (which
must be `kernels`) and "ok", or WRONG with what differs. Shared by the check scripts of this
directory (gather_checks.py, scan_checks.py), which the cpu tests and the GPU's Runtime tests run."""

import copy

import torch

import fusec
from fusec.numerics import compare


def check(label, model, inputs, kernels, device):
    """`kernels`: the count the model must compile to (None: any)."""
    target = "cuda" if device.type == "cuda" else "cpu"
    fn = fusec.compile(model, inputs, target=target)
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    wide = tuple(t.double() if t.is_floating_point() else t for t in inputs)
    reference = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    with torch.no_grad():
        refs = reference(*wide)
    refs = refs if isinstance(refs, tuple) else (refs,)
    bad = []
    for i, (out, ref) in enumerate(zip(outs, refs)):
        if out.dtype in (torch.bfloat16, torch.float16) or (ref.is_floating_point() and not out.is_floating_point()):
            ref = ref.to(out.dtype)
        max_abs, _, tol = compare(out, ref)
        if not max_abs <= tol:
            bad.append(f"output {i}: max abs err {max_abs:.3e} > {tol:.3e}")
    n = len(fn.manifest["kernels"])
    if kernels is not None and n != kernels:
        bad.append(f"{n} kernels, expected {kernels}")
    print(f"{label}: {n} kernel{'s' if n != 1 else ''}, {'ok' if not bad else 'WRONG ' + '; '.join(bad)}")
