"""A fused group's facts, read from its ops on buffers once: the plain `plan.Facts` the plan decides
from, and the `Group` (the same, as IR handles) the builders build from.

Everything that keeps a schedule from building a group is found here, before anything is built:
an op the kernel evaluator cannot build (`_member_problem`), an order of the group's ops
that one kernel cannot keep, rows of different shapes or axes, outputs of shapes the rows do not
explain, and the accesses a vectorized kernel could not make (`Facts.vector_misses`: which phases
evaluate a member that reads an operand across its dims, traced as the evaluator would).
"""

from __future__ import annotations

import dataclasses
import math

from fusec.mlir import ir

from fusec.passes.classify_ops import classify, combiner, full_input, indexing_maps

from . import invariant_dims, online_softmax, prefetch, row_variance, windows
from .combine import EMPTY, WARP
from .indexing import DYNAMIC, across_dim, element_bytes, shifted_lanes, vector_access
from .kernel import Member, has_identity
from .plan import Facts
from .plan_records import vector_lanes
from .rows import row_outputs
from .scan import read_scan_group

__all__ = ["Group", "read_group"]


@dataclasses.dataclass
class Group:
    """A group's members and what the builders need of its IR (row schedules: the row space)."""
    ops: list
    members: list
    reductions: list
    outputs: list  # (buffer, its final writer) for every buffer the group writes that is read later
    in_map: object = None  # the reductions' map of their rows
    full: tuple = ()  # the shape of the rows' buffer
    rows: list = dataclasses.field(default_factory=list)  # the row extents (DYNAMIC: the count)
    cols: list = dataclasses.field(default_factory=list)  # the reduced extents
    source: object = None  # the buffer the first reduction reduces (dim 0: a dynamic row count)
    per_row: dict = dataclasses.field(default_factory=dict)  # reduced shape -> its reduction
    variances: dict = dataclasses.field(default_factory=dict)  # variance's reduction -> its mean's (`row_variance`)
    online: dict = dataclasses.field(default_factory=dict)  # a sum of exp -> its (max, sum) Pair (`online_softmax`)
    prefetch: list = dataclasses.field(default_factory=list)  # (buffer, map) the prefetch loads


def read_group(ops, gid: int, kind: str) -> tuple[Facts, Group | None]:
    """The facts of group `gid` (its ops, in order; `kind`, its `fusec.group_kind`), and its `Group`
    (None when the facts already refuse it)."""
    if kind not in ("pointwise", "reduction", "scan"):
        return Facts(gid, refusal=f"a {kind} group"), None
    problem = next(filter(None, map(_member_problem, ops)), "")
    if problem:
        return Facts(gid, refusal=problem), None
    if kind == "scan":
        return read_scan_group(ops, gid, _read_members, _outputs, _order_problem)
    members, latest = _read_members(ops)
    problem = _order_problem(ops, members, latest)
    if problem:
        return Facts(gid, refusal=problem), None
    outputs = _outputs(latest, ops)
    group = Group(ops, members, [m for m in members if m.kind == "reduction"], outputs)
    buffers = [v for m in members for v in m.inputs + [m.out] if isinstance(v.type, ir.MemRefType)]
    widths = tuple(sorted({element_bytes(ir.MemRefType(b.type).element_type) for b in buffers}))
    if not group.reductions:
        # A flat kernel's vectors are 128-bit accesses of the narrowest buffer it loads or stores: a
        # value between its members (a compare's i1) stays in registers and does not narrow them.
        memory = [v for m in members for j, v in enumerate(m.inputs) if m.sources[j] is None and
                  isinstance(v.type, ir.MemRefType)] + [b for b, _ in outputs]
        widths = tuple(sorted({element_bytes(ir.MemRefType(b.type).element_type) for b in memory})) or widths
        limits = []
        misses = {"outputs"} if any(_misses(w, limits) for _, w in outputs) else set()
        shapes = tuple(tuple(None if d == DYNAMIC else d for d in w.shape) for _, w in outputs)
        warp_run = WARP * vector_lanes(widths)  # elements in a warp's vectors of the narrowest type
        loops, hoisted = invariant_dims.choose(group, shapes[0], warp_run) if len(set(shapes)) == 1 else ((), 0)
        return Facts(gid, element_bytes=widths, vector_misses=frozenset(misses), out_shapes=shapes,
                     max_lanes=min(limits, default=16), loop_dims=loops, loop_hoisted=hoisted), group
    problem = _read_rows(group)
    if problem:
        return Facts(gid, refusal=problem), None
    # A row kernel's vectors run along its rows: their width is the narrowest buffer of the rows'
    # shape (a column kernel's: of every buffer, `_row_facts`). A per-row value (cross-entropy's mask of ignored targets, an i1 of [rows]) is read once
    # a row, as a scalar: its 1-byte width had made the lanes 16, more than the rows' bf16 could
    # take, and the rows scalar.
    row_widths = tuple(sorted({element_bytes(ir.MemRefType(b.type).element_type) for b in buffers
                               if tuple(ir.MemRefType(b.type).shape) == group.full}))
    return _row_facts(gid, group, widths, row_widths or widths), group


def _row_facts(gid: int, group: Group, widths: tuple, row_widths: tuple) -> Facts:
    """`widths`: of every buffer; `row_widths`: of the rows' buffers (a column schedule's vectors run
    along its outputs too, so it takes `widths`)."""
    reductions = group.reductions
    misses = {f"reduction {i}" for i, z in enumerate(reductions) if _element_misses(z)}
    if any(_misses(w) for _, w in row_outputs(group)):
        misses.add("outputs")
    accesses = [vector_access(m) for _, m in group.prefetch]
    if "across" in accesses or "shifted" in accesses:
        misses.add("prefetch")
    loads = tuple((a == "vector", element_bytes(ir.MemRefType(buf.type).element_type))
                  for a, (buf, _) in zip(accesses, group.prefetch))
    identity_map = group.in_map == ir.AffineMap.get_identity(group.in_map.n_dims, context=group.in_map.context)
    columns = _columns(group)
    if columns and (any(_column_misses(z, len(group.rows) - 1) for z in reductions)
                    or any(_misses(w) for _, w in group.outputs)):
        misses.add("columns")
    return Facts(gid, reductions=len(reductions), element_bytes=widths if columns else row_widths,
                 vector_misses=frozenset(misses), columns=columns,
                 rows=tuple(None if r == DYNAMIC else r for r in group.rows), row_length=math.prod(group.cols),
                 row_last=group.cols[-1], row_map_identity=identity_map, windows=_windows(group),
                 warp_rows=_warp_rows(group),
                 variance=tuple((reductions.index(z1), reductions.index(z2)) for z2, z1 in group.variances.items()),
                 online=tuple((reductions.index(p.z_max), reductions.index(p.z_sum)) for p in group.online.values()),
                 writes_rows=bool(row_outputs(group)),
                 prefetch_loads=loads)


def _warp_rows(group: Group) -> bool:
    """Whether a warp's shuffles alone can combine each reduction of a row (`rows_per_block`): float
    sums, maxima and minima (a block's other combinations span its threads: `gpu.all_reduce`)."""
    return all(isinstance(ir.MemRefType(z.out.type).element_type, ir.FloatType) and z.combiner.name in EMPTY
               for z in group.reductions)


def _windows(group: Group) -> bool:
    """Whether the rows may be read through windows aligned to their buffers (`windows`): rows of one
    dim, every buffer of the rows' shape row-major from its start (one phase for all of them)."""
    buffers = {v for m in group.members for v in m.inputs + [m.out] if isinstance(v.type, ir.MemRefType)
               and tuple(ir.MemRefType(v.type).shape) == group.full}
    return len(group.cols) == 1 and all(windows.row_major(ir.MemRefType(b.type)) for b in buffers)


def _columns(group: Group) -> bool:
    """Whether the group is a column reduction the column schedule builds: the reductions read their
    last row dim (a parallel dim: the columns) as their input's innermost dim and write it as their
    output's, every output is one value per row (no epilogue over the reduced space), and the row
    extents are static."""
    if not group.rows or DYNAMIC in group.rows:
        return False
    col = f"d{len(group.rows) - 1}"
    if str(group.in_map.results[-1]) != col or any(str(z.maps[-1].results[-1]) != col
                                                    for z in group.reductions if z.maps[-1].results):
        return False
    return all(w.shape and w.shape[-1] == group.rows[-1] and w.shape != group.full for _, w in group.outputs)


def _column_misses(z, col: int) -> bool:
    """Whether the elements reduction `z` folds, computed with vectors along loop dim `col` (the
    columns), read across an operand's dims."""
    seen = {}
    for j in range(z.n_inputs):
        access = vector_access(z.maps[j], col)
        source = z.sources[j]
        if access in ("across", "shifted") or (access == "vector" and source is not None
                                  and source.kind in ("pointwise", "broadcast") and _evaluation_misses(source, seen)):
            return True
    return False


def _member_problem(op) -> str:
    """Why the kernel evaluator cannot build `op` as a member of a kernel ('': it can). A body op it
    cannot clone (`linalg.index`, an op with regions) makes the op opaque (`classify_ops`)."""
    kind = classify(op).kind
    if kind == "scan":  # its second output is the value it carries (`scan`)
        return ""
    if len(op.opview.outputs) != 1:
        return "an op with several outputs"
    if kind in ("pointwise", "broadcast"):
        out_map = indexing_maps(op)[-1]
        if out_map != ir.AffineMap.get_identity(out_map.n_dims, context=out_map.context):
            return "a pointwise op that writes through a permutation"
    if kind not in ("pointwise", "broadcast", "fill", "reduction"):
        return f"{kind} op"
    return ""


def _read_members(ops):
    """The group's members in order, each with the earlier member whose version of each operand it
    reads, and {buffer: its last writer}."""
    members = []
    for op in ops:
        kind = classify(op).kind
        reduction = kind == "reduction"
        members.append(Member(op, kind, indexing_maps(op) if kind != "fill" else [],
                              combiner(op) if reduction else None, full_input(op) if reduction else (None, None)))
    latest = {}
    for m in members:
        m.sources = [latest.get(v) for v in m.inputs] + [latest.get(m.out)]
        latest[m.out] = m
    return members, latest


def epilogue_members(ops, product: int):
    """A matmul group's members (its fill, the matmul `ops[product]`, the pointwise ops), each with the
    earlier member whose version of each operand it reads; (buffer, writer) for the buffers it writes
    that something else reads; and why the kernel evaluator cannot build the pointwise ones ('': it
    can). The matmul's member counts as a reduction: its value is in registers (the accumulators)
    when the epilogue reads it (`wgmma`)."""
    others = [op for i, op in enumerate(ops) if i != product]
    members, latest = _read_members(ops)
    members[product].kind = "reduction"
    problem = next(filter(None, map(_member_problem, others)), "") or _order_problem(ops, members, latest)
    return members, _outputs(latest, ops), problem


def _in_block(op, block_owner):
    """The ancestor of `op` (or `op`) whose parent is `block_owner`, or None."""
    while op is not None and op.parent is not None and op.parent != block_owner:
        op = op.parent
    return op if op is not None and op.parent == block_owner else None


def _outputs(latest, group_ops):
    """(buffer, final writer) for every buffer the group writes that something else reads: a buffer
    whose next use after the group overwrites it whole (bufferization reuses one buffer for two
    groups' fills) is not read."""
    last = group_ops[-1].operation
    outs = []
    for buf, writer in latest.items():
        later = [(u, a) for u in buf.uses if u.owner.name != "memref.dealloc"
                 and (a := _in_block(u.owner.operation, last.parent)) is not None and last.is_before_in_block(a)]
        allocated_here = not isinstance(buf.owner, ir.Block) and buf.owner.operation.name == "memref.alloc"
        if (later and not _overwritten_first(later)) or not allocated_here:
            outs.append((buf, writer))
    return outs


def _overwritten_first(later) -> bool:
    """Whether the first of a buffer's `later` uses ((use, its op in the group's block)) is an op
    that writes all of the buffer without reading it: a `linalg.fill`, or a linalg op whose only use of
    the buffer is an output it writes through a permutation without reading the old value."""
    first = later[0][1]
    for _, owner in later[1:]:
        if owner.is_before_in_block(first):
            first = owner
    uses = [u for u, owner in later if owner == first]
    if len(uses) != 1 or uses[0].owner.operation != first:
        return False
    if first.name == "linalg.fill":
        return True  # a fill's one memref operand is what it writes
    n = uses[0].operand_number  # operands, block arguments and maps are numbered alike
    if first.name != "linalg.generic" or n < len(first.opview.inputs):
        return False
    return not list(first.regions[0].blocks[0].arguments[n].uses) and indexing_maps(first)[n].is_permutation


def _order_problem(group_ops, members, latest) -> str:
    """The kernel runs where the group's last op was and reads its inputs while it writes. So every
    other op that touches a buffer the group writes must run before the group's first op or after its
    last (bufferization may put a copy in between), and the group must not write a buffer whose
    earlier contents it still reads (a thread could overwrite what another thread has yet to read)."""
    inside = {op.operation for op in group_ops}
    first, last = group_ops[0].operation, group_ops[-1].operation
    for buf in latest:
        for use in buf.uses:
            owner = _in_block(use.owner.operation, last.parent)
            if owner is None or owner in inside or owner.name == "memref.dealloc":
                continue
            if first.is_before_in_block(owner) and owner.is_before_in_block(last):
                return f"'{owner.name}' uses a buffer of the group between its ops"
    for m in members:
        for source, operand in zip(m.sources, m.inputs + [m.out]):
            if source is None and operand in latest and (operand != m.out or len(list(
                    m.op.regions[0].blocks[0].arguments[m.n_inputs].uses))):
                return "the group overwrites a buffer whose earlier contents it reads"
    return ""


def _read_rows(group: Group) -> str:
    """Fill in the group's row space, from its first reduction; or say why the row schedules cannot
    build it. The row count may be dynamic (dim 0 of the buffer); the row itself must be static."""
    first = group.reductions[0]
    data, in_map = full_input(first.op)
    if in_map is None:
        return "a reduction without a full input"
    full = tuple(ir.MemRefType(first.inputs[data].type).shape)
    loop_dims = [int(str(e)[1:]) for e in in_map.results]  # tensor dim i is loop dim loop_dims[i]
    extents = [0] * len(loop_dims)
    for pos, d in enumerate(loop_dims):
        extents[d] = full[pos]
    n_par = len(extents) - len(classify(first.op).reduced_dims)
    if DYNAMIC in extents[n_par:] or (DYNAMIC in extents and loop_dims[0] != 0):
        return "a dynamic dim that is not the outermost of the rows"
    rows = extents[:n_par]
    for z in group.reductions:
        j, m = full_input(z.op)
        if not classify(z.op).row_template or j is None or m != in_map \
                or tuple(ir.MemRefType(z.inputs[j].type).shape) != full:
            return "reductions of the group differ in shape or axes"
        name = combiner(z.op).name
        if not has_identity(name, ir.MemRefType(z.out.type).element_type):
            return f"no identity for {name}"
    per_row = {z.shape: z for z in group.reductions}
    for buf, writer in group.outputs:
        if writer.shape != full and writer.shape not in per_row and _squeezed(writer.shape) != _squeezed(rows):
            return f"output of shape {list(writer.shape)} in a group over {list(full)}"
    group.in_map, group.full, group.rows, group.cols = in_map, full, rows, extents[n_par:]
    group.source, group.per_row = first.inputs[data], per_row
    group.variances = row_variance.match(group.reductions, math.prod(group.cols))
    group.online = online_softmax.match(group.reductions, in_map.n_dims, len(rows))
    group.prefetch = prefetch.loads(group.members, group.reductions, full)
    return ""


def _squeezed(shape) -> list:
    return [d for d in shape if d != 1]


# The vector trace: what the evaluator (`kernel.Kernel`) reads when it computes a value with vectors.
# An operand read through a "vector" access is computed with vectors too (its producer evaluated in
# turn); a "scalar" one (broadcast along the vectorized dim) is computed once, with lanes 1. In the flat
# trace, a computed operand read "across" its dims is computed with vectors along the dim it reads there.

def _misses(writer, limits: list | None = None) -> bool:
    """Whether the value `writer` wrote, computed with vectors, reads an operand across its dims
    (with `limits`: the flat trace, which may read shifted accesses as vectors)."""
    return writer.kind in ("pointwise", "broadcast") and _evaluation_misses(writer, {}, limits)


def _evaluation_misses(member, seen: dict, limits: list | None = None, lane_dim: int | None = None) -> bool:
    """`_misses` of `member` computed with vectors along its loop dim `lane_dim` (None: its innermost)."""
    if (id(member), lane_dim) not in seen:
        maps = member.maps
        block = member.op.regions[0].blocks[0]
        operands = member.inputs + [member.out]
        seen[id(member), lane_dim] = _index_misses(member, limits, lane_dim) or any(
            _read_misses(member.sources[j], maps[j], seen, operands[j], limits, lane_dim)
            for j, arg in enumerate(block.arguments) if j < member.n_inputs or len(list(arg.uses)))
    return seen[id(member), lane_dim]


def _index_misses(member, limits: list | None, lane_dim: int | None = None) -> bool:
    """An iota's body (--fusec-inline-iotas) computes its loop indices with vectors (one per lane,
    Kernel._loop_index). A cat's (`fusec.concat`) is evaluated on scalars, but in the flat trace: its
    index only picks the piece, the same for every element of a vector whose width divides the
    pieces' offsets (recorded in `limits`)."""
    dims = [ir.IntegerAttr(inner.attributes["dim"]).value for inner in member.op.regions[0].blocks[0].operations
            if inner.name == "linalg.index"]
    if not dims or "fusec.concat" not in member.op.attributes:
        return False
    if limits is None or lane_dim is not None:
        return True
    inner = len(member.maps[-1].results) - 1
    if inner in dims:
        offsets, total = [], 0
        for buf in member.inputs:
            total += ir.MemRefType(buf.type).shape[inner]
            offsets.append(total)
        lanes = 16
        while lanes > 1 and any(o % lanes for o in offsets):
            lanes //= 2
        limits.append(lanes)
    return False


def _element_misses(z) -> bool:
    """Whether the elements reduction `z` folds, computed with vectors, read across an operand's dims."""
    maps = z.maps
    seen = {}
    return any(_read_misses(z.sources[j], maps[j], seen) for j in range(z.n_inputs))


def _read_misses(source, m, seen: dict, operand=None, limits: list | None = None, lane_dim: int | None = None) -> bool:
    """With `limits` (the flat trace), a shifted access (through a slice's or a cat's index map) is
    a vector no wider than `shifted_lanes`, recorded there, and an access across a computed operand's
    dims computes it along the dim read (`across_dim`); elsewhere both miss."""
    access = vector_access(m, lane_dim)
    computed = source is not None and source.kind in ("pointwise", "broadcast")
    if access == "across":
        along = across_dim(m, lane_dim)
        return limits is None or along is None or not computed or _evaluation_misses(source, seen, limits, along)
    if access == "shifted" and limits is None:
        return True
    if access == "shifted":
        limits.append(shifted_lanes(m, tuple(ir.MemRefType(operand.type).shape), lane_dim))
    return access in ("vector", "shifted") and computed and _evaluation_misses(source, seen, limits)
