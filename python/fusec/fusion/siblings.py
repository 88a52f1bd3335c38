"""Rule 8 of the fusion cost model (`cost_model`): sibling kernels that read one tensor through
index maps share a kernel, and so do small independent kernels of one shape.

GPT-2 splits its packed qkv into q, k and v, each into heads (a slice, a view and a transpose:
--fusec-fold-layout-ops makes them index maps of the consumers' reads); the three consumers have
no producer in common but the input, so rules 1-7 give each its own kernel. Pointwise groups of one
shape that read the same tensor through index maps, and do not depend on each other, are merged
into one kernel (one launch; the flat schedule writes each output at the same point), within the
register cap of rule 6. Only with `--fusion=full`. Then a pointwise group read by one merged kernel
alone joins it (`absorb_sole_readers`).

Independent pointwise groups of one shape that read no tensor in common merge too when, together,
they move at most SMALL_BYTES: a launch costs a few microseconds, which at that size is more than
the bytes take (8 MB at 4 TB/s: 2 µs). Llama's attention inputs are such a pair: k after rotary
embeddings and the contiguous copy of v, both [batch, kv heads, seq, head dim], 2 MB each at 4 x 512
tokens in bf16, were two launches a layer. Larger groups keep their own kernels, whose schedules
are each chosen for their own reads; so do groups with a dynamic row count (two `?` rows may be
different symbols, and their sizes are not known).
"""

from __future__ import annotations

__all__ = ["SMALL_BYTES", "absorb_sole_readers", "merge_siblings"]

SMALL_BYTES = 8 << 20


def _sliced_reads(former, group) -> dict:
    """{tensor read from memory through an index map by a member: that member}."""
    reads = {}
    for m in group.members:
        node = former.nodes[m]
        if node.index_maps:
            for o in node.operands:
                if o.producer is None or former._find(former.group_of[o.producer]) != group.id:
                    reads.setdefault(o.value, node)
    return reads


def merge_siblings(former, estimate_registers) -> None:
    """Rule 8: merge pointwise groups of one shape that read a tensor through index maps."""
    live = [g for g in former.groups if g.members and g.kind == "pointwise"]
    for i, group in enumerate(live):
        for other in live[i + 1:]:
            if not (group.members and other.members) or tuple(group.shape) != tuple(other.shape):
                continue
            mine, theirs = _sliced_reads(former, group), _sliced_reads(former, other)
            shared = sorted(set(mine) & set(theirs))
            small = _static(former, group) and _static(former, other) and \
                _moved_bytes(former, group) + _moved_bytes(former, other) <= SMALL_BYTES
            if not (shared or small) or former._reaches(group.id, other.id) or former._reaches(other.id, group.id):
                continue
            first, second = (mine[shared[0]], theirs[shared[0]]) if shared else \
                (former.nodes[group.members[-1]], former.nodes[other.members[-1]])
            regs = estimate_registers([former.nodes[m] for m in group.members + other.members])
            if regs > former.policy.max_registers:
                former._log(first, second, 6, "split", 0,
                            f"siblings: one kernel would need about {regs} registers per thread, over the cap")
                continue
            group.members.extend(other.members)
            for m in other.members:
                former.group_of[m] = group.id
            other.members = []
            former.alias[other.id] = group.id
            former._log(first, second, 8, "fuse", 0,
                        f"siblings reading {shared[0]} through index maps share one kernel (one launch)" if shared else
                        f"independent kernels of one shape moving at most {SMALL_BYTES >> 20} MB together share one "
                        "launch (at that size a launch costs more than the bytes)")


def _static(former, group) -> bool:
    """No tensor of the group has a dynamic row count. Two groups over `[?, 64]` may run over different
    row counts (each `?` is its own symbol), and their bytes are known per row only."""
    return all(not o.per_row for m in group.members for o in former.nodes[m].operands) and \
        all(isinstance(d, int) and d >= 0 for d in group.shape)


def _moved_bytes(former, group) -> int:
    """What a group reads from memory (each tensor once) and writes (values read outside it)."""
    members, reads, written = set(group.members), {}, 0
    for m in group.members:
        node = former.nodes[m]
        for o in node.operands:
            if o.producer is None or o.producer not in members:
                reads[o.value] = max(reads.get(o.value, 0), o.nbytes)
        if node.used_outside or any(u not in members for u in node.users):
            written += node.out_bytes
    return sum(reads.values()) + written


def absorb_sole_readers(former) -> None:
    """After rule 8: a pointwise group that only one other (pointwise or reduction) group reads, now
    that its readers share that kernel (q, k and v of a bf16 qkv read its one fp32 cast), is computed
    inside that group (rule 5: recomputed at the points read) rather than written to memory."""
    for other in list(former.groups):
        if not other.members or other.kind != "pointwise" or any(former.nodes[m].used_outside for m in other.members):
            continue
        readers = [former.nodes[u] for m in other.members for u in former.nodes[m].users
                   if former._find(former.group_of[u]) != other.id]
        owners = {former._find(former.group_of[r.index]) for r in readers}
        if len(owners) != 1:
            continue
        group = former.groups[owners.pop()]
        if group.kind not in ("pointwise", "reduction"):
            continue  # contractions and opaque ops end groups (rule 7)
        producer = next(former.nodes[m] for m in other.members if readers[0].index in former.nodes[m].users)
        ok, rule, reason = former._absorb(group, other, readers[0])
        if ok:
            former._log(producer, readers[0], rule, "fuse", 0, f"its readers share one kernel now: {reason}")
