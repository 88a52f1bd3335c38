"""Which OpInfo entries test the ops of the backend's op table (`fusec.torch_backend.support.COMPUTE`).

An ATen name of the table is matched to the entries of PyTorch's OpInfo database
(`torch.testing._internal.common_methods_invocations.op_db`) whose `name`, `aten_name` or an alias
is that name (`nn.functional.gelu` is `gelu`). ATen ops that aot_autograd hands the backend under a
private name (`_softmax`, `_to_copy`) have no entry of their own: `VIA` names the public ops whose
entries call them. A name with no entry either way is reported as such, not silently skipped.
"""

from __future__ import annotations

import sys
import types

__all__ = ["DTYPES", "VIA", "entries", "load_op_db", "op_id"]

# The dtypes the suite runs, as the OpInfo's own names for them.
DTYPES = ("float32", "bfloat16", "float16")

# ATen names of the table whose samples come from another OpInfo entry (the public op that calls them).
VIA = {
    "_softmax": ("softmax",),
    "_log_softmax": ("log_softmax",),
    "_fused_rms_norm": ("rms_norm",),
    # A cast is aten._to_copy in the graph aot_autograd gives the backend: `x.to(dtype)`, `x.float()`...
    "_to_copy": ("to", "float", "half", "bfloat16"),
    # prims' cast, in graphs with symbolic shapes: the same casts
    "convert_element_type": ("to", "float", "half", "bfloat16"),
}


def load_op_db():
    """PyTorch's OpInfo database. torch.testing._internal imports `expecttest` (only for its TestCase
    base class); where that test-only package is missing, a stand-in with unittest's TestCase lets
    the database load (the suite never runs PyTorch's own test classes)."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        import unittest

        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


def op_id(info) -> str:
    """`div.trunc_rounding`: the entry's name and variant, unique in op_db."""
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def _names(info) -> set[str]:
    names = {info.name, info.aten_name or info.name}
    names |= {a.name for a in (info.aliases or ())}
    return {n[len("nn.functional."):] if n.startswith("nn.functional.") else n for n in names}


def _cpu_dtypes(info) -> list[str]:
    import torch

    supported = info.supported_dtypes("cpu")
    return [d for d in DTYPES if getattr(torch, d) in supported]


def entries(compute, op_db=None) -> tuple[dict, list[str]]:
    """({aten name: [(op id, OpInfo, [dtypes it supports on cpu])]}, [aten names with no entry]).
    Entries that support none of DTYPES on cpu (a complex-only variant) are left out."""
    op_db = load_op_db() if op_db is None else op_db
    found, missing = {}, []
    for aten in sorted(compute):
        wanted = set(VIA.get(aten, (aten,)))
        hits = [(op_id(i), i, _cpu_dtypes(i)) for i in op_db if _names(i) & wanted]
        hits = [h for h in hits if h[2]]
        if hits:
            found[aten] = hits
        else:
            missing.append(aten)
    return found, missing
