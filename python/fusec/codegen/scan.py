"""The kernels of scan groups: a running sum or product (`torch.cumsum`, --fusec-scans-to-generic)
with its pointwise prologue (what it sums: `mask.long()`) and epilogue (what reads each running
value at its own element: `cumsum - 1`), one kernel.

A scan's loops are its other dims (the rows) and the scanned dim, walked in order while a value is
carried. Two schedules (`plan._plan_scan` picks):

  scan_rows     the scanned dim is the buffers' innermost (cumsum(-1)) and long: a block per row.
                The row is taken in chunks of threads x `per_thread` elements. Each thread scans its
                `per_thread` consecutive elements in registers; the threads' totals are scanned
                across the warp by shuffles (`shuffle up`: lane i adds lane i - 1, i - 2, i - 4, ...),
                the warps' totals through shared memory; each element's running value is the carry
                of the earlier chunks, the earlier warps', the earlier lanes' and its own prefix.
  scan_columns  any other scan (cumsum(0), cumsum(1) of [B, S, H]), or short rows: a thread per row,
                walking the scanned dim in order. Adjacent threads take adjacent rows, so when the
                scanned dim is not the innermost their reads and writes are coalesced.

Floats are summed in another order than eager's sequential loop (as CUDA's own cumsum does); 16-bit
floats are carried in f32 (--fusec-scans-to-generic put the casts in the scan's body).
"""

from __future__ import annotations

import dataclasses

from fusec.mlir import ir
from fusec.passes.scans_to_generic import IDENTITIES, constant_of
from torch_mlir.dialects import arith, gpu, memref, scf

from .combine import WARP, workgroup_buffer
from .indexing import DYNAMIC, apply_map, ceil_div, const, count, delinearize, element_bytes, index
from .kernel import Kernel, Member, attributes
from .launch import launch, store_where
from .plan import Facts

__all__ = ["ScanGroup", "read_scan_group", "build_rows", "build_columns"]



@dataclasses.dataclass
class ScanGroup:
    ops: list
    members: list
    scan: Member  # the scan (its `combiner`: the body op that folds an element into the carried value)
    outputs: list  # (buffer, final writer) of every buffer of the group read later
    out_map: object = None  # the scan's map from its loops (the rows, then the scanned dim) to the buffers
    rows: list = dataclasses.field(default_factory=list)  # extents of the row loops (DYNAMIC: the first)
    length: int = 0  # the scanned extent (DYNAMIC: read from the buffer)
    scanned_dim: int = 0  # the buffers' dim the scan walks


def read_scan_group(ops, gid: int, read_members, outputs_of, order_problem) -> tuple[Facts, ScanGroup | None]:
    """The facts of a scan group and its `ScanGroup` (None when refused). The member, output and
    order readers are `facts`' own (passed in: `facts` imports this module, and checked each
    member's own problems before)."""
    members, latest = read_members(ops)
    kinds = [m.kind for m in members]
    if kinds.count("scan") != 1:
        return Facts(gid, refusal="a group with several scans"), None
    other = next((k for k in kinds if k not in ("pointwise", "broadcast", "fill", "scan")), None)
    if other:
        return Facts(gid, refusal=f"a {other} op in a scan group"), None
    scan = members[kinds.index("scan")]
    problem = order_problem(ops, members, latest) or _scan_problem(scan, members)
    if problem:
        return Facts(gid, refusal=problem), None
    group = ScanGroup(ops, members, scan, outputs_of(latest, ops), out_map=scan.maps[1])
    full = tuple(ir.MemRefType(scan.out.type).shape)
    if not all(str(e).startswith("d") and str(e)[1:].isdigit() for e in group.out_map.results):
        return Facts(gid, refusal="a scan that writes through an index map"), None
    loops = [int(str(e)[1:]) for e in group.out_map.results]  # buffer dim t is loop dim loops[t]
    extents = [0] * len(full)
    for t, d in enumerate(loops):
        extents[d] = full[t]
    group.rows, group.length, group.scanned_dim = extents[:-1], extents[-1], loops.index(len(loops) - 1)
    if DYNAMIC in full[1:] or (DYNAMIC in group.rows[1:]):
        return Facts(gid, refusal="a dynamic dim other than the outermost"), None
    for buf, writer in group.outputs:
        if writer.shape != full:
            return Facts(gid, refusal=f"output of shape {list(writer.shape)} in a scan over {list(full)}"), None
    widths = tuple(sorted({element_bytes(ir.MemRefType(v.type).element_type)
                           for m in members for v in m.inputs + [m.out] if isinstance(v.type, ir.MemRefType)}))
    innermost = group.scanned_dim == len(full) - 1
    return Facts(gid, element_bytes=widths, scan="rows" if innermost else "columns",
                 rows=tuple(None if r == DYNAMIC else r for r in group.rows),
                 row_length=0 if group.length == DYNAMIC else group.length, row_last=group.length), group


def _scan_problem(scan, members) -> str:
    """Why the scan builders cannot build this group ('': they can)."""
    block = scan.op.regions[0].blocks[0]
    carried = block.arguments[len(block.arguments) - 1]
    users = [op for op in block.operations if any(v == carried for v in op.operands)]
    if len(users) != 1 or users[0].name not in IDENTITIES:
        return "a scan whose body is not one sum or product"
    scan.combiner = users[0]
    if len(scan.op.opview.outputs) != 2:
        return "a scan without its carried value"
    if _fill_value(members, scan.op.opview.outputs[1]) != IDENTITIES[users[0].name]:
        return "a scan whose carried value does not start at its identity"
    # The running values exist one element at a time: whatever reads them (or a value computed from
    # them) must read them at the element it computes.
    running = {id(scan)}
    for m in members[members.index(scan) + 1:]:
        for source, read_at in zip(m.sources, m.maps):
            if source is not None and id(source) in running:
                if read_at != m.maps[-1]:
                    return "an op that reads the running values at other elements than its own"
                running.add(id(m))
    return ""


def _fill_value(members, buffer):
    """The constant a fill member of the group wrote into `buffer`, or None."""
    for m in members:
        if m.kind == "fill" and m.out == buffer:
            return constant_of(m.inputs[0])
    return None


def _combine(z, a, b):
    return ir.Operation.create(z.combiner.name, results=[a.type], operands=[a, b],
                               attributes=attributes(z.combiner)).result


def _identity(z):
    kind = z.combiner.results[0].type
    value = IDENTITIES[z.combiner.name]
    attr = ir.FloatAttr.get(kind, value) if isinstance(kind, ir.FloatType) else ir.IntegerAttr.get(kind, value)
    return arith.ConstantOp(kind, attr).result


def _element(kernel, z, point, valid=None):
    """The element folded in at `point` (the identity where `valid` is false)."""
    x, _ = kernel.element_of_reduction(z, point, 1)
    return x if valid is None else arith.SelectOp(valid, x, _identity(z)).result


def _yielded(z, running):
    """The scan's output element for the running value `running`: the body's ops after its combiner
    (a truncation to bf16) applied to it."""
    ops = list(z.op.regions[0].blocks[0].operations)
    mapping = {z.combiner.results[0]: running}
    for inner in ops[ops.index(z.combiner) + 1:-1]:
        new = ir.Operation.create(inner.name, results=[r.type for r in inner.results],
                                  operands=[mapping.get(v, v) for v in inner.operands], attributes=attributes(inner))
        mapping.update(zip(inner.results, new.results))
    value = ops[-1].operands[0]
    return mapping.get(value, value)


def _store_outputs(kernel, group, point, running, valid=None) -> None:
    """The group's outputs at loop point `point`, the scan's running value there being `running`."""
    kernel.registers[group.scan] = _yielded(group.scan, running)
    at = apply_map(group.out_map, point)
    values = [kernel.value(w, b, at) for b, w in group.outputs]
    store_where(kernel, valid, group.outputs, values, at)


def _length(group):
    """The scanned extent: a constant, or the buffer's dim read on the host."""
    if group.length != DYNAMIC:
        return const(group.length)
    return memref.DimOp(group.scan.out, const(group.scanned_dim)).result


def build_columns(plan, group):
    """A thread per row, walking the scanned dim in order (the scan_columns schedule)."""
    threads = plan.threads
    n_rows = count(group.scan.out, group.rows) if group.rows else 1
    if isinstance(n_rows, int) and n_rows == 0:
        return None, {}
    length = _length(group)
    op = launch(ceil_div(n_rows, threads), threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(1)
    with ir.InsertionPoint(body):
        linear = arith.AddIOp(arith.MulIOp(bx, const(threads)).result, tx).result
        branch = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ult, linear, index(n_rows)).result)
        with ir.InsertionPoint(branch.then_block):
            row = delinearize(linear, list(group.rows)) if group.rows else []
            loop = scf.ForOp(const(0), length, const(1), [_identity(group.scan)])
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                point = row + [loop.induction_variable]
                running = _combine(group.scan, loop.inner_iter_args[0], _element(kernel, group.scan, point))
                _store_outputs(kernel, group, point, running)
                scf.YieldOp([running])
            kernel.cache = {}
            scf.YieldOp([])
        gpu.TerminatorOp()
    return op, {}


def _shuffle(v, offset: int, mode):
    """Lane (lane - offset)'s `v` (`mode` UP) or lane `offset`'s (IDX). Shuffles move 32-bit words: a
    64-bit value travels as two, a narrower integer widened."""
    i32 = ir.IntegerType.get_signless(32)
    kind = v.type
    width = kind.width

    def move(word):
        return gpu.ShuffleOp(word, arith.ConstantOp(i32, offset).result, arith.ConstantOp(i32, WARP).result,
                             mode).results[0]

    if width == 32:
        return move(v)
    if width < 32:  # an integer (16-bit floats are carried in f32)
        return arith.TruncIOp(kind, move(arith.ExtUIOp(i32, v).result)).result
    i64 = ir.IntegerType.get_signless(64)
    bits = arith.BitcastOp(i64, v).result if isinstance(kind, ir.FloatType) else v
    low = move(arith.TruncIOp(i32, bits).result)
    high = move(arith.TruncIOp(i32, arith.ShRUIOp(bits, arith.ConstantOp(i64, 32).result).result).result)
    joined = arith.OrIOp(arith.ExtUIOp(i64, low).result,
                         arith.ShLIOp(arith.ExtUIOp(i64, high).result, arith.ConstantOp(i64, 32).result).result).result
    return arith.BitcastOp(kind, joined).result if isinstance(kind, ir.FloatType) else joined


def _warp_scan(z, value, lane):
    """The inclusive scan of `value` over the lanes of each warp."""
    for offset in (1, 2, 4, 8, 16):
        earlier = _shuffle(value, offset, gpu.ShuffleMode.UP)
        has = arith.CmpIOp(arith.CmpIPredicate.uge, lane, const(offset)).result
        value = arith.SelectOp(has, _combine(z, value, earlier), value).result
    return value


def build_rows(plan, group):
    """A block per row, in chunks of threads x per_thread elements (the scan_rows schedule)."""
    threads, per_thread = plan.threads, plan.vectors_per_thread
    z = group.scan
    n_rows = count(z.out, group.rows) if group.rows else 1
    if isinstance(n_rows, int) and n_rows == 0:
        return None, {}
    length = _length(group)
    warps = threads // WARP
    op = launch(n_rows, threads)
    body = op.regions[0].blocks[0]
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(1)
    with ir.InsertionPoint(body):
        kind = z.combiner.results[0].type
        shared = workgroup_buffer(body, warps, kind) if warps > 1 else None
        row = delinearize(bx, list(group.rows)) if group.rows else []
        lane = arith.RemUIOp(tx, const(WARP)).result
        warp = arith.DivUIOp(tx, const(WARP)).result
        last = arith.SubIOp(length, const(1)).result
        chunk = threads * per_thread
        loop = scf.ForOp(const(0), length, const(chunk), [_identity(z)])
        with ir.InsertionPoint(loop.body):
            kernel.cache = {}
            carry = loop.inner_iter_args[0]
            start = arith.AddIOp(loop.induction_variable, arith.MulIOp(tx, const(per_thread)).result).result
            slots, prefix = [], []
            for k in range(per_thread):
                at = arith.AddIOp(start, const(k)).result if k else start
                valid = arith.CmpIOp(arith.CmpIPredicate.ult, at, length).result
                point = row + [arith.MinUIOp(at, last).result]
                x = _element(kernel, z, point, valid)
                prefix.append(_combine(z, prefix[-1], x) if prefix else x)
                slots.append((point, valid))
            inclusive = _warp_scan(z, prefix[-1], lane)
            before = _shuffle(inclusive, 1, gpu.ShuffleMode.UP)  # the earlier lanes' total
            before = arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.ugt, lane, const(0)).result, before,
                                    _identity(z)).result
            if shared is None:
                earlier_warps = _identity(z)
                chunk_total = _shuffle(inclusive, WARP - 1, gpu.ShuffleMode.IDX)
            else:
                earlier_warps, chunk_total = _across_warps(z, inclusive, lane, warp, warps, shared)
            base = _combine(z, carry, _combine(z, earlier_warps, before))
            for (point, valid), own in zip(slots, prefix):
                _store_outputs(kernel, group, point, _combine(z, base, own), valid)
            kernel.cache = {}
            scf.YieldOp([_combine(z, carry, chunk_total)])
        kernel.cache = {}
        gpu.TerminatorOp()
    return op, {}


def _across_warps(z, inclusive, lane, warp, warps: int, shared):
    """(the total of the warps before this thread's, the chunk's total): the last lane of each warp
    writes its warp's total to shared memory; after a barrier each thread folds them; a second
    barrier keeps the next chunk from overwriting them before every thread has read them."""
    is_last = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.eq, lane, const(WARP - 1)).result)
    with ir.InsertionPoint(is_last.then_block):
        memref.StoreOp(inclusive, shared, [warp])
        scf.YieldOp([])
    gpu.BarrierOp()
    earlier, total = _identity(z), _identity(z)
    for w in range(warps):
        value = memref.LoadOp(shared, [const(w)]).result
        before = arith.CmpIOp(arith.CmpIPredicate.ult, const(w), warp).result
        earlier = arith.SelectOp(before, _combine(z, earlier, value), earlier).result
        total = _combine(z, total, value)
    gpu.BarrierOp()
    return earlier, total
