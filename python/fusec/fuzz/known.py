"""Failures the fuzzer has found and fusec does not fix yet: each is a regression test
(test/Fuzz/Inputs/regressions/, replayed by test/Fuzz/regressions.test). A model failing one of
these ways is counted and listed as "known", so that a fuzz run fails only on a new failure. Fixing
one means deleting its entry here (and flipping its line in regressions.test)."""

from __future__ import annotations

import re

__all__ = ["KNOWN", "known_failure"]

# (what fails, regression model, pattern of the failure's message)
KNOWN = [
    ("a fusion group whose outputs differ in type: fusec.group is IRDL-defined, and IRDL's variadic "
     "results share one type", "multi_output_shapes.py, multi_output_dtypes.py",
     re.compile(r"stage 'fused' failed: .*expected '(tensor|vector)<[^']*>' but got '(tensor|vector)<")),
    ("fusion groups that depend on each other both ways (the cost model's merge makes a cycle)",
     "groups_form_a_cycle.py", re.compile(r"fusion groups form a cycle")),
    ("a model whose output is one of its inputs unchanged leaves no kernel (cuda target)",
     "where_computes_nothing.py", re.compile(r"expected exactly one gpu.module at the nvvm stage, found 0")),
    ("torch-mlir's linalg lowering of torch.where with the same broadcast tensor on both sides",
     "where_same_broadcast_branches.py",
     re.compile(r"'tensor.cast' op operand type '[^']*' and result type '[^']*' are cast incompatible")),
]


def known_failure(verdict: dict) -> str | None:
    """The regression model(s) of a known failure `verdict` is one of, else None."""
    if verdict.get("status") != "failed":
        return None
    for _, models, pattern in KNOWN:
        if pattern.search(verdict.get("message", "")):
            return models
    return None
