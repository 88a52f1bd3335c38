"""Conformance failures known today and not fixed yet, each with its reason.

A mismatch or crash matching an entry is counted as "known", apart from new ones, so that a run (and
test/Conformance/) fails only on a new failure, as python/fusec/fuzz/known.py does for the fuzzer.
Fixing one means deleting its entry: a case that then passes is simply a pass.

Each entry: (op ids, regex over the op id; dtypes, or None for all; status; regex over the verdict's
message; why). Keep the regexes narrow: an entry must not hide a different failure of the same op.
"""

from __future__ import annotations

import re

__all__ = ["KNOWN", "known_reason"]

KNOWN: list = [
    # A NaN in the first operand (x of clamp, clamp_min and clamp_max; a of maximum/minimum) is lost:
    # the result is the bound or the other operand, where eager propagates the NaN (clamp(nan, 0, 1)
    # is 0.0, eager nan; maximum(nan, 0) is 0.0, eager nan; a NaN second operand propagates). A NaN
    # bound of clamp(x, lo, hi) is also lost where the other bound decides (clamp(-1, nan, 1) is 1.0).
    (r"clamp|clamp_min|clamp_max|maximum|minimum|max\.binary|min\.binary", None, "mismatch", r"^NaN: fusec",
     "a NaN first operand of clamp/maximum/minimum is lost (eager propagates it)"),
    # A tensor with a zero-size dim that is not a dynamic dim 0 ([3, 0, 4], var over an empty dim)
    # compiles, then the cpu module fails to load: "cannot be converted to LLVM IR: missing
    # LLVMTranslationDialectInterface registration for dialect for op: func.func" (an empty function
    # the lowering leaves in the func dialect), raised at the first call.
    (r".*", None, "crash", r"the cpu target's module could not be loaded: Failure while creating the ExecutionEngine",
     "a zero-size dim: the cpu module fails to load at the first call"),
    # LayerNorm of a row whose values are all equal (one element): x - mean is 0, and fusec's
    # (x - mean) * rstd * weight keeps the sign of a negative weight (-0.0) where eager's gives +0.0.
    (r"native_layer_norm|nn\.functional\.layer_norm", None, "mismatch", r"-0\.0: fusec -0\.0 where eager 0\.0",
     "layer_norm of a constant row with a negative weight gives -0.0 (eager +0.0)"),
    # relu(-0.0): eager's relu is clamp_min(x, 0), which keeps -0.0 (it is not less than 0);
    # fusec's max(x, 0) gives +0.0.
    (r"nn\.functional\.relu", None, "mismatch", r"-0\.0: fusec 0\.0 where eager -0\.0",
     "relu(-0.0) is +0.0 (eager keeps -0.0)"),
]


def known_reason(op: str, dtype: str, verdict: dict) -> str | None:
    """The reason of the known failure `verdict` is, else None (passes and refusals are never known)."""
    if verdict.get("status") not in ("mismatch", "crash"):
        return None
    for ops, dtypes, status, pattern, why in KNOWN:
        if (verdict["status"] == status and re.fullmatch(ops, op) and (dtypes is None or dtype in dtypes)
                and re.search(pattern, verdict.get("message", ""))):
            return why
    return None
