"""The persistent loop's next row (`Plan.next_row`): a cluster loads row i + K while it reduces row i.

A persistent cluster takes rows k, k + K, ... in a loop (`row_registers._rows_of_cluster`). Left
alone, each row's loads are issued at the top of its iteration and its first reduction waits for
them: a DRAM latency per row with nothing else in flight (a block of 512-1024 threads fills an
SM). The hand-written CUDA kernel (bench/handwritten/vocab_softmax_cluster.cu) went from 71-75% to
78-85% of copy on the H100 by loading the next row into a second set of registers before reducing
this one. Here the loop carries those values (its `scf.for` iter_args):

  1. before the loop, the thread loads its slots of its cluster's first row;
  2. each iteration takes the carried values as its row's loads (`take`: the kernel's load cache),
     then loads its slots of row i + K (`load`) and yields them after its reductions and stores;
  3. the last iteration loads the last row again (the row index is clamped: in bounds, from L2).

The plan asks for it where two copies of the row's registers fit (`row_budget.prefetch_fits`).
"""

from __future__ import annotations

import re

from .indexing import apply_map, lanes_of

__all__ = ["load", "take"]


def _carried(group) -> list:
    """(buffer, map) of the rows carried: those the prefetch would load whose map takes the point's
    own indices (a map that computes an index would give the load another key at each use)."""
    return [(buf, m) for buf, m in group.prefetch if all(re.fullmatch(r"d\d+", str(e)) for e in m.results)]


def _accesses(group, slots, edge, lanes: int):
    """(buffer, index, lanes) of every carried load of a thread's slots, then of its edge element."""
    points = [(point, lanes) for point, _ in slots] + ([(edge[0], 1)] if edge else [])
    for point, width in points:
        for buf, m in _carried(group):
            yield buf, apply_map(m, point), lanes_of(m, width)


def load(kernel, group, slots, edge, lanes: int) -> list:
    """The carried rows at the thread's slots (and edge element), loaded, in a fixed order."""
    return [kernel.load(buf, at, width) for buf, at, width in _accesses(group, slots, edge, lanes)]


def take(kernel, group, slots, edge, lanes: int, carried) -> None:
    """The kernel's loads at these slots are `carried` (what `load` returned for this row)."""
    for (buf, at, width), value in zip(_accesses(group, slots, edge, lanes), carried, strict=True):
        kernel.cache[(buf, tuple(at), width)] = value
