"""The row_registers schedule's prefetch (the `row-prefetch` knob): the rows a kernel streams from
memory, loaded before its first reduction.

Issued before the first reduction, the loads of the rows the epilogue alone reads (the `up` of
RMSNorm·up) are in flight while the row is reduced, instead of after the reduction's barrier, where
nothing else hides their latency (RMSNorm·up bf16 84% -> 97% of copy at 32768x4096 on the H200). A
weight (one row for all rows) is left where it is used: it comes from cache, and holding it costs
registers (LayerNorm fp32 at 11008 fell from 98% to 69% of copy with its weight and bias
prefetched). Skipped when the rows would not fit the register budget (`row_budget.prefetch_fits`).
"""

from __future__ import annotations

from fusec.mlir import ir

from .indexing import apply_map, lanes_of


def loads(members, reductions, full) -> list:
    """(buffer, map) of each row the prefetch loads, in order: the reductions' rows first (the
    first barrier waits for them), then the rows of the group's shape its pointwise members read
    from memory."""
    wanted = {}
    for z in reductions:
        j, m = z.full_input
        if j is not None and z.sources[j] is None:
            wanted.setdefault((z.inputs[j], str(m)), (z.inputs[j], m))
    for m in members:
        if m.kind not in ("pointwise", "broadcast") or m.shape != full:
            continue
        maps = m.maps
        for j in range(m.n_inputs):
            buf = m.inputs[j]
            if m.sources[j] is None and isinstance(buf.type, ir.MemRefType) \
                    and tuple(ir.MemRefType(buf.type).shape) == full:
                wanted.setdefault((buf, str(maps[j])), (buf, maps[j]))
    return list(wanted.values())


def issue(kernel, wanted, slots, lanes: int) -> None:
    """Load every row of `wanted` at each of the thread's slots (kept in the kernel's cache)."""
    for point, _ in slots:
        for buf, m in wanted:
            kernel.load(buf, apply_map(m, point), lanes_of(m, lanes))
