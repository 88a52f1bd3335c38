"""Failures the fuzzer has found and fusec does not fix yet: each is a regression test
(test/Fuzz/Inputs/regressions/, replayed by test/Fuzz/regressions.test). A model failing one of
these ways is counted and listed as "known", so that a fuzz run fails only on a new failure. Fixing
one means deleting its entry here (and flipping its line in regressions.test)."""

from __future__ import annotations


__all__ = ["KNOWN", "known_failure"]

# (what fails, regression model, pattern of the failure's message)
KNOWN: list = [
    # None today. The four found so far (mixed-type group outputs, a cycle of groups, a program with
    # no kernel, torch-mlir's where(c, y, y)) are fixed; their models stay in regressions/.
]


def known_failure(verdict: dict) -> str | None:
    """The regression model(s) of a known failure `verdict` is one of, else None."""
    if verdict.get("status") != "failed":
        return None
    for _, models, pattern in KNOWN:
        if pattern.search(verdict.get("message", "")):
            return models
    return None
