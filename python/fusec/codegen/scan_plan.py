"""The schedule of a scan group (`scan`): decided in plain Python, like `plan` for the others.

`facts.scan` says whether the scan runs along the buffers' innermost dim ("rows") or another
("columns"); `plan_scan` picks scan_rows (a block per row) for long innermost rows and scan_columns
(a thread per row) for the rest, and the threads.
"""

from __future__ import annotations

from .plan import _WARP, Facts, Knobs, Plan

__all__ = ["plan_scan"]

_SCAN_PER_THREAD = 4  # scan_rows: consecutive elements a thread scans in registers, each chunk
_SHORT_SCAN = 64  # rows this short are scanned a thread per row (scan_columns), not a block per row


def plan_scan(facts: Facts, knobs: Knobs) -> Plan:
    """A scan along long rows of the innermost dim: a block per row, as many threads as a chunk of
    the row needs (up to 1024); any other scan: a thread per row (`scan`'s docstring)."""
    if facts.scan == "rows" and (facts.row_length == 0 or facts.row_length > _SHORT_SCAN):
        per_thread = _SCAN_PER_THREAD
        wanted = -(-facts.row_length // per_thread) if facts.row_length else knobs.threads_per_block
        threads = min(1024, max(_WARP, -(-wanted // _WARP) * _WARP))
        return Plan("scan_rows", threads, 1, rows=facts.n_rows, row_length=facts.row_length,
                    vectors_per_thread=per_thread)
    return Plan("scan_columns", knobs.threads_per_block, 1, rows=facts.n_rows, row_length=facts.row_length)
