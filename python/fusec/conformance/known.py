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
