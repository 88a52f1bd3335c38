"""Rule 8 of the fusion cost model (`cost_model`): sibling kernels that read one tensor through
index maps share a kernel.

GPT-2 splits its packed qkv into q, k and v, each into heads (a slice, a view and a transpose:
--fusec-fold-layout-ops makes them index maps of the consumers' reads); the three consumers have
no producer in common but the input, so rules 1-7 give each its own kernel. Pointwise groups of one
shape that read the same tensor through index maps, and do not depend on each other, are merged
into one kernel (one launch; the flat schedule writes each output at the same point), within the
register cap of rule 6. Only with `--fusion=full`. Then a pointwise group read by one merged kernel
alone joins it (`absorb_sole_readers`).
"""

from __future__ import annotations

__all__ = ["absorb_sole_readers", "merge_siblings"]


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
            if not shared or former._reaches(group.id, other.id) or former._reaches(other.id, group.id):
                continue
            regs = estimate_registers([former.nodes[m] for m in group.members + other.members])
            if regs > former.policy.max_registers:
                former._log(mine[shared[0]], theirs[shared[0]], 6, "split", 0,
                            f"siblings: one kernel would need about {regs} registers per thread, over the cap")
                continue
            group.members.extend(other.members)
            for m in other.members:
                former.group_of[m] = group.id
            other.members = []
            former.alias[other.id] = group.id
            former._log(mine[shared[0]], theirs[shared[0]], 8, "fuse", 0,
                        f"siblings reading {shared[0]} through index maps share one kernel (one launch)")


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
