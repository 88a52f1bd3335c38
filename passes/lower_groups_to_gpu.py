"""--fusec-lower-groups-to-gpu: turn each fused group of linalg ops (on buffers) into one gpu.launch.

After bufferization the ops of a group (tagged `fusec.group` by --fusec-dissolve-groups) read and
write memrefs. This pass replaces them with one kernel that reads the group's inputs once per use,
keeps every intermediate value in registers and writes only the buffers used outside the group.
Every element of a member is computed from its linalg.generic body (the op's scalar function),
evaluated where a consumer needs it: pointwise producers are recomputed at each use (rule 5 of the
cost model decided that was cheap), reduced values live in a register per row.

Three schedules, tried in this order (the first that fits the group wins):
  row_registers (groups with reductions over the innermost dims) one block per row, its threads
        chosen from the row length (`row_threads`); each thread loads its slice of the row once, in
        128-bit vectors, and keeps it in registers for every reduction and the epilogue; the rows
        only the epilogue reads are loaded before the first reduction when registers allow
        (`_prefetch`); lanes are folded, then `gpu.all_reduce` combines the block's threads (with
        few rows, where a kernel is its reductions' latency, `block_reduce`: one barrier). With a
        `vectors` knob that asks for more of the row per thread than `row-registers` holds, a thread
        keeps what fits and reads the rest again for each phase (the hybrid), or with `row-stash`
        keeps the rest in shared memory (`row_stash`). A row's mean and its
        variance's sum of squares (LayerNorm) take one block-wide round, not two (`row_variance`).
  row_loop  (rows longer than `row-registers` elements per thread) one block per row, threads
        striding over the row once per reduction and again for the epilogue, `row-unroll` vectors
        per thread per trip.
  flat  (pointwise groups) one thread per vector of the output, or per `vectors` vectors, their loads
        issued together.
The kernel bodies are built by `group_kernel.Kernel`. Each gpu.launch records the schedule it got
(`fusec.schedule`: `fusec --emit schedule` prints it), and the `schedule` option changes one
group's knobs (`fusec --schedule FILE`, `fusec tune`).
A group that fits none (a column reduction, mixed output shapes) keeps its ops, which the generic
loop mapping lowers afterwards: correct, but not fused.

Before:
    linalg.fill ins(%cst) outs(%acc : memref<8x1xf32>) {fusec.group = 0}
    linalg.generic {reduction} ins(%x) outs(%acc) {fusec.group = 0}
    linalg.generic {pointwise} ins(%x, %acc, %w) outs(%out) {fusec.group = 0}
After (row_registers, 1024 x 4096 floats: 256 threads, 4 vectors of 4 each):
    gpu.launch blocks(%bx, ...) in (%c1024, %c1, %c1) threads(%tx, ...) in (%c256, %c1, %c1) {
      %x0 = vector.load %x[%bx, %col0] : memref<1024x4096xf32>, vector<4xf32>     // and %x1..%x3
      %part = ... folds of %x0..%x3 ...; %lanes = vector.reduction <add>, %part
      %sum = gpu.all_reduce add %lanes uniform {} : (f32) -> f32
      vector.store %v0, %out[%bx, %col0] : memref<1024x4096xf32>, vector<4xf32>   // and %v1..%v3
      gpu.terminator
    } {fusec.schedule = {group = 0, schedule = "row_registers", threads = 256, lanes = 4, ...}}
"""

from __future__ import annotations

import math
import os
import sys

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, memref, scf, vector

from fusec.schedule import KNOBS, READ_ONLY_CACHE, parse_overrides

from . import row_stash, row_variance
from .block_reduce import block_reduce
from .l2_evict_last import tag_evict_last_loads
from .read_only_arguments import tag_read_only_loads
from .classify_ops import classify, combiner, full_input, indexing_maps
from .group_kernel import (Kernel, Unsupported, analyse, apply_map, attributes, const, delinearize,
                           element_bytes, identity, lanes_of)

FLAG = "fusec-lower-groups-to-gpu"
SUMMARY = "Lower each fused group of linalg ops on buffers to one gpu.launch (row or flat schedule)"
OPTIONS = {"threads-per-block": (256, "threads per block (rows use fewer when rows are short)"),
           "row-registers": (32, "most elements of a row one thread keeps in registers per input; longer rows "
                                 "loop over memory (0: always loop)"),
           "row-prefetch": (True, "load the epilogue's inputs before the row's reductions, when registers allow"),
           "row-unroll": (4, "vectors per thread each trip of a row loop handles (loads in flight per thread)"),
           "vectors": (0, "vectors each thread handles: in a row_registers kernel the vectors of the row it holds, "
                          "which sets the threads per row; in a flat kernel the vectors it loads together "
                          "(0: the heuristic: `row_threads`, and 1 for flat kernels)"),
           "read-only-cache": ("off", "which inputs the kernel reads through the read-only data cache (ld.global.nc): "
                                      "off, weights (inputs smaller than its output: read by every row) or inputs "
                                      "(every input); their loads get `fusec.read_only`, which "
                                      "--fusec-read-only-arguments turns into the kernel's argument attributes"),
           "l2-evict-last": (False, "load the inputs as large as the kernel's output (its rows) with an L2 "
                                    "evict_last cache policy; their loads get `fusec.l2_evict_last`, which "
                                    "--fusec-l2-evict-last writes as PTX"),
           "row-stash": (False, "a hybrid row_registers kernel (`vectors` past `row-registers`) stores the part of "
                                "its row past its registers to shared memory and reads it from there in later "
                                "phases, instead of from global memory (`row_stash`)"),
           "schedule": ("", "per-group overrides of the eight knobs above, GROUP.KNOB=VALUE separated by commas: "
                            "0.row_prefetch=0,1.threads_per_block=512 (what --schedule FILE becomes)"),
           "one-barrier-rows": (64, "row kernels with at most this many rows (a static count) combine each float "
                                    "sum, max or min with one barrier (`block_reduce`) instead of gpu.all_reduce's "
                                    "two (0: never)"),
           "one-round-variance": (True, "a row's mean and variance (LayerNorm's two sums) in one block-wide "
                                        "combination (`row_variance`) instead of one each")}

# A reduction's combiner -> its name in `#vector.kind<...>` and in `#gpu<all_reduce_op ...>` (the same words)
_REDUCTION_KIND = {"arith.addf": "add", "arith.addi": "add", "arith.mulf": "mul", "arith.muli": "mul",
                   "arith.maximumf": "maximumf", "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf",
                   "arith.minnumf": "minnumf", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
                   "arith.maxui": "maxui", "arith.minui": "minui", "arith.andi": "and", "arith.ori": "or",
                   "arith.xori": "xor"}


def _outputs(latest, group_ops):
    """(buffer, final writer) for every buffer the group writes that something else reads."""
    last = group_ops[-1].operation
    outs = []
    for buf, writer in latest.items():
        later = [u for u in buf.uses if u.owner.name != "memref.dealloc"
                 and (a := _in_block(u.owner.operation, last.parent)) is not None and last.is_before_in_block(a)]
        allocated_here = not isinstance(buf.owner, ir.Block) and buf.owner.operation.name == "memref.alloc"
        if later or not allocated_here:
            outs.append((buf, writer))
    return outs


def _in_block(op, block_owner):
    """The ancestor of `op` (or `op`) whose parent is `block_owner`, or None."""
    while op is not None and op.parent is not None and op.parent != block_owner:
        op = op.parent
    return op if op is not None and op.parent == block_owner else None


def _check_order(group_ops, members, latest) -> None:
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
                raise Unsupported(f"'{owner.name}' uses a buffer of the group between its ops")
    for m in members:
        for source, operand in zip(m.sources, m.inputs + [m.out]):
            if source is None and operand in latest and (operand != m.out or len(list(
                    m.op.regions[0].blocks[0].arguments[m.n_inputs].uses))):
                raise Unsupported("the group overwrites a buffer whose earlier contents it reads")


def _vector_lanes(members, outputs) -> int:
    """Elements per 128-bit access of the narrowest buffer the group touches (1: not vectorized)."""
    buffers = [v for m in members for v in m.inputs + [m.out] if isinstance(v.type, ir.MemRefType)]
    widths = {element_bytes(ir.MemRefType(b.type).element_type) for b in buffers}
    return 16 // min(widths) if widths and 16 % min(widths) == 0 else 1


def lower_group(group_ops, knobs: dict, gid: int = 0) -> None:
    """Replace the group's ops by one kernel, scheduled by `knobs` (the pass's options, by name)."""
    threads = knobs["threads_per_block"]
    members, latest = analyse(group_ops)
    _check_order(group_ops, members, latest)
    outputs = _outputs(latest, group_ops)
    reductions = [m for m in members if m.kind == "reduction"]
    anchor = group_ops[-1]
    # Schedules in order of preference; the first that fits the group wins.
    if reductions:
        lanes = _vector_lanes(members, outputs)
        schedules = [lambda made, n=n: _row_registers(members, reductions, outputs, made, n, knobs)
                     for n in dict.fromkeys([lanes, 1])]
        schedules += [lambda made, n=n: _row_kernel(members, reductions, outputs, threads, made, n, knobs["row_unroll"])
                      for n in dict.fromkeys([lanes, 1])]
    else:
        lanes = _vector_lanes(members, outputs)
        schedules = [lambda made, n=n: _flat_kernel(members, reductions, outputs, threads, made, n, knobs["vectors"])
                     for n in dict.fromkeys([lanes, 1])]
    why = None
    for build in schedules:
        made = []
        with ir.InsertionPoint(anchor.operation), anchor.location:
            try:
                build(made)
                break
            except Unsupported as err:
                why = why or err
                for op in made:  # nothing half-built stays behind
                    op.operation.erase()
    else:
        raise why
    for launch in (op for op in made if op.operation.name == "gpu.launch"):
        described = ir.DictAttr(launch.attributes["fusec.schedule"])
        read_only = tag_read_only_loads(launch, knobs["read_only_cache"], [b for b, _ in outputs])
        evict_last = tag_evict_last_loads(launch, [b for b, _ in outputs]) if knobs["l2_evict_last"] else 0
        i64 = ir.IntegerType.get_signless(64)
        launch.attributes["fusec.schedule"] = ir.DictAttr.get(
            {"group": ir.IntegerAttr.get(i64, gid),
             **{described[i].name: described[i].attr for i in range(len(described))},
             **({"read_only_inputs": ir.IntegerAttr.get(i64, read_only)} if read_only else {}),
             **({"l2_evict_last_inputs": ir.IntegerAttr.get(i64, evict_last)} if evict_last else {})})
    for op in reversed(group_ops):
        op.operation.erase()


def _launch(grid, block: int, made: list):
    """A gpu.launch of `grid` blocks (an int, or an index value for a dynamic row count)."""
    one = const(1)
    launch = gpu.LaunchOp((_index(grid), one, one), (const(block), one, one))
    made.append(launch)
    return launch.regions[0].blocks[0]


def _describe(body, **schedule) -> None:
    """Record the schedule a kernel got on its gpu.launch (`fusec.schedule`): `--emit schedule`
    prints it, and `--schedule FILE` can change it."""
    def attr(v):
        if isinstance(v, bool):
            return ir.BoolAttr.get(v)
        if isinstance(v, int):
            return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
        return ir.StringAttr.get(str(v))

    body.owner.attributes["fusec.schedule"] = ir.DictAttr.get({k: attr(v) for k, v in schedule.items()})


def _row_space(first):
    """(in_map, rows, cols, the buffer reduced) of the iteration space of the group's first reduction.
    The row count may be dynamic (dim 0 of the buffer); the row itself must be static."""
    data, in_map = full_input(first.op)
    if in_map is None:
        raise Unsupported("a reduction without a full input")
    full = tuple(ir.MemRefType(first.inputs[data].type).shape)
    loop_dims = [int(str(e)[1:]) for e in in_map.results]  # tensor dim i is loop dim loop_dims[i]
    extents = [0] * len(loop_dims)
    for pos, d in enumerate(loop_dims):
        extents[d] = full[pos]
    n_par = len(extents) - len(classify(first.op).reduced_dims)
    if _DYNAMIC in extents[n_par:] or (_DYNAMIC in extents and loop_dims[0] != 0):
        raise Unsupported("a dynamic dim that is not the outermost of the rows")
    return in_map, full, extents[:n_par], extents[n_par:], first.inputs[data]


def _check_row_group(reductions, outputs, in_map, full, rows):
    for z in reductions:
        j, m = full_input(z.op)
        if not classify(z.op).row_template or j is None or m != in_map \
                or tuple(ir.MemRefType(z.inputs[j].type).shape) != full:
            raise Unsupported("reductions of the group differ in shape or axes")
    per_row = {z.shape: z for z in reductions}
    for buf, writer in outputs:
        if writer.shape != full and writer.shape not in per_row and _squeezed(writer.shape) != _squeezed(rows):
            raise Unsupported(f"output of shape {list(writer.shape)} in a group over {list(full)}")
    return per_row


def _squeezed(shape) -> list:
    return [d for d in shape if d != 1]


_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _index(n):
    """An index value: `n` itself, or a constant when `n` is an int."""
    return const(n) if isinstance(n, int) else n


def _count(buf, extents, per: int = 1):
    """The product of `extents` (leading dims of `buf`, the first of which may be dynamic) divided by
    `per`: an int when static, else an index value computed on the host (the dynamic row count,
    `memref.dim`, times the rest), which the kernel gets as an argument."""
    if not extents or extents[0] != _DYNAMIC:
        return math.prod(extents) // per
    if _DYNAMIC in extents[1:]:
        raise Unsupported("a dynamic dim other than the outermost")
    rest = math.prod(extents[1:]) // per
    rows = memref.DimOp(buf, const(0)).result
    return arith.MulIOp(rows, const(rest)).result if rest != 1 else rows


def _ceil_div(n, d: int):
    if isinstance(n, int):
        return -(-n // d)
    return arith.CeilDivUIOp(n, const(d)).result


def _static_or_dynamic(n):
    """What a schedule description records for a count: the number, or "dynamic"."""
    return n if isinstance(n, int) else "dynamic"


def _elements(shape, total):
    return math.prod(shape) if isinstance(total, int) else "dynamic"


def _per_row_index(writer, per_row, row, rows, n_cols):
    """Where a per-row output (one value per row: a mean, or a sum broadcast to [rows, 1]) is stored."""
    if writer.shape in per_row:
        return apply_map(indexing_maps(per_row[writer.shape].op)[-1], row + [const(0)] * n_cols)
    big = iter(r for r, extent in zip(row, rows) if extent != 1)
    return [next(big) if d != 1 else const(0) for d in writer.shape]


_VECTORS_PER_THREAD = 4  # the target: enough bytes in flight per thread, few enough registers
# At most this many rows is fewer than half the SMs of a large GPU: latency, not bandwidth, decides.
# (64 is also a tuning bucket's edge, fusec.tuning.bucket_of, so a bucket holds one rule only.)
_FEW_ROWS = 64


def row_threads(n_vectors: int, n_rows: int | None, vectors: int = 0) -> tuple[int, int]:
    """(threads per row, vectors per thread) for rows of `n_vectors` vectors, each thread holding
    about `vectors` of them: a warp for short rows, up to 1024 threads for long ones. The heuristic
    (`vectors` 0) is _VECTORS_PER_THREAD, enough loads in flight per thread to keep memory busy; with
    _FEW_ROWS rows or fewer the blocks cannot fill the GPU anyway, so each thread takes one vector
    and a row's work is spread over as many threads as it can use (a shorter chain per thread). A
    dynamic row count (None) gets the rule for many rows: one kernel serves every batch, large ones
    are where the time goes."""
    vectors = vectors or (1 if n_rows is not None and n_rows <= _FEW_ROWS else _VECTORS_PER_THREAD)
    threads = -(-n_vectors // vectors)
    threads = min(1024, max(32, -(-threads // 32) * 32))
    return threads, -(-n_vectors // threads)


_MAX_SLOTS = 16  # most vectors per thread a row_registers kernel unrolls


def _vector_slot(v, count: int, lanes: int, extents: list, masked: bool):
    """(iteration point over `extents` of vector `v` of `count`, each `lanes` elements; the in-range
    flag or None). A `masked` slot may run past the end: it then loads the last vector instead
    (always in bounds), and the flag keeps it out of folds and stores."""
    valid = None
    if masked:
        valid = arith.CmpIOp(arith.CmpIPredicate.ult, v, _index(count)).result
        last = count - 1 if isinstance(count, int) else arith.SubIOp(count, const(1)).result
        v = arith.MinUIOp(v, _index(last)).result
    first = arith.MulIOp(v, const(lanes)).result if lanes > 1 else v
    return (delinearize(first, list(extents)) if extents else []), valid


def _row_registers(members, reductions, outputs, made, lanes, knobs):
    """Block per row; each thread loads its slice of the row once, in `lanes`-wide vectors, keeps it in
    registers for every reduction and the epilogue; reductions fold lanes, then `gpu.all_reduce`
    (warp shuffles, one shared-memory step) combines the threads, or with few rows `block_reduce`
    (`_one_barrier`).

    A `vectors` knob that gives a thread more of the row than `row_registers` elements makes a
    hybrid: the thread keeps its first `row_registers` elements in registers and reads the rest again
    for each reduction and for the epilogue (from L2: the blocks in flight hold a few MB of rows).
    Fewer threads per row with fewer registers each let two blocks share an SM where the row in
    registers would take a whole one (a 32768-float row: 1024 threads x 32 registers of it). With
    the `row_stash` knob the rest is stored to shared memory before the first barrier and read from
    there instead (`row_stash.stash`)."""
    in_map, full, rows, cols, source = _row_space(reductions[0])
    per_row = _check_row_group(reductions, outputs, in_map, full, rows)
    if lanes > 1 and (cols[-1] % lanes or in_map != ir.AffineMap.get_identity(in_map.n_dims, context=in_map.context)):
        raise Unsupported("rows not a whole number of vectors")
    n_vectors = math.prod(cols) // lanes
    threads, per_thread = row_threads(n_vectors, None if _DYNAMIC in rows else math.prod(rows), knobs["vectors"])
    held = min(per_thread, knobs["row_registers"] // lanes)
    if held < per_thread and not (knobs["vectors"] and held and per_thread <= _MAX_SLOTS):
        raise Unsupported(f"a row of {math.prod(cols)} does not fit in registers")
    n_rows = _count(source, rows)
    body = _launch(n_rows, threads, made)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        row = delinearize(bx, list(rows)) if rows else []
        # The thread's slots: vector v = tx + j * threads of the row. The last slot may run past the
        # row: it loads the row's last vector instead (always in bounds) and is masked out.
        slots = []
        for j in range(per_thread):
            v = arith.AddIOp(tx, const(j * threads)).result if j else tx
            point, valid = _vector_slot(v, n_vectors, lanes, cols, (j + 1) * threads > n_vectors)
            slots.append((row + point, valid))
        prefetched = knobs["row_prefetch"] and _prefetch(kernel, members, reductions, slots, full, in_map, lanes,
                                                         threads)
        reread = {v for point, _ in slots[held:] for v in point[len(row):]}
        stash_at = {tuple(point[len(row):]): j for j, (point, _) in enumerate(slots[held:])}
        written = [b for b, _ in outputs]

        def stash():  # the slots past the registers to shared memory, before a barrier (`row_stash`)
            if knobs["row_stash"]:
                row_stash.stash(kernel, stash_at, len(row), written, tx, threads, body)

        variances = row_variance.match(reductions, math.prod(cols)) if knobs["one_round_variance"] else {}
        means = {z1: z2 for z2, z1 in variances.items()}
        for i, z in enumerate(reductions):
            if z in variances:  # computed with its mean, below
                continue
            element_type = ir.MemRefType(z.out.type).element_type
            comb_name = combiner(z.op).name
            if i:
                _forget(kernel, reread)
            if z in means:
                _mean_and_variance(kernel, z, means[z], slots, lanes, row, cols, tx, threads, body, stash)
                continue
            acc = _fold(kernel, z, slots, kernel.widen(identity(comb_name, element_type), lanes), lanes)
            stash()
            _finish_reduction(kernel, z, acc, lanes, row, cols,
                              (tx, threads, body) if _one_barrier(n_rows, knobs["one_barrier_rows"]) else None)
        _forget(kernel, reread)
        row_outputs = [(b, w) for b, w in outputs if w.shape == full and w.kind != "reduction"]
        for point, valid in slots:
            index = apply_map(in_map, point)
            _store_where(kernel, valid, row_outputs, [kernel.widen(kernel.value(w, b, index, lanes), lanes)
                                                      for b, w in row_outputs], index)
        _store_row_values(kernel, tx, row, rows, cols, outputs, row_outputs, per_row)
        gpu.TerminatorOp()
    _describe(body, schedule="row_registers", rows=_static_or_dynamic(n_rows), row_length=math.prod(cols), threads=threads,
              lanes=lanes, vectors_per_thread=per_thread, prefetch=bool(prefetched),
              **({"vectors_in_registers": held} if reread else {}),
              **({"stash_bytes": kernel.stash_bytes} if kernel.stash_bytes else {}),
              **({"variance": "one round (Chan)"} if variances else {}))


def _forget(kernel, columns) -> None:
    """Drop the kernel's loaded and computed values at the given column indices: the next use loads
    them again (the hybrid row_registers schedule's slots past the registers)."""
    if columns:
        kernel.cache = {k: v for k, v in kernel.cache.items() if not any(x in columns for x in k[1])}


# Registers of row data a thread of a block of `threads` may hold for the prefetch: its share of the
# SM's 64K (128 at most), less 32 for the kernel's other values (0 spills in `ptxas -v` on the bench
# suite: test/PTX/suite-kernels.py). At 1024 threads that is 32: a bf16 row of 32768 and its `up`
# (16 registers each, packed) fit, and RMSNorm·SiLU·up went from 87% to 97% of copy on the H200
# (with 40, `up` was loaded after the reduction's barrier, with one block per SM to hide nothing).
_OTHER_REGISTERS = 32


def _data_register_budget(threads: int) -> int:
    return max(0, min(128, 65536 // threads) - _OTHER_REGISTERS)


def _prefetch(kernel, members, reductions, slots, full, in_map, lanes, threads) -> None:
    """Issue, before the first reduction, the loads of the rows the kernel streams from memory: the
    rows the epilogue alone reads (the `up` of RMSNorm·up) are then in flight while the row is
    reduced, instead of after the reduction's barrier, where nothing else hides their latency
    (RMSNorm·up bf16 84% -> 97% of copy at 32768x4096 on the H200). A weight (one row for all rows)
    is left where it is used: it comes from cache, and holding it costs registers (LayerNorm fp32 at
    11008 fell from 98% to 69% of copy with its weight and bias prefetched). Skipped when the rows
    would not fit the register budget."""
    if in_map != ir.AffineMap.get_identity(in_map.n_dims, context=in_map.context):
        return False
    wanted = {}
    for z in reductions:  # the reductions' rows first: the first barrier waits for them
        j, m = full_input(z.op)
        if j is not None and z.sources[j] is None:
            wanted.setdefault((z.inputs[j], str(m)), (z.inputs[j], m))
    for m in members:
        if m.kind not in ("pointwise", "broadcast") or m.shape != full:
            continue
        maps = indexing_maps(m.op)
        for j in range(m.n_inputs):
            buf = m.inputs[j]
            if m.sources[j] is None and isinstance(buf.type, ir.MemRefType) \
                    and tuple(ir.MemRefType(buf.type).shape) == full:
                wanted.setdefault((buf, str(maps[j])), (buf, maps[j]))
    words = sum(lanes_of(m, lanes) * element_bytes(ir.MemRefType(buf.type).element_type) for buf, m in wanted.values())
    if -(-words // 4) * len(slots) > _data_register_budget(threads):
        return False
    for point, _ in slots:
        for buf, m in wanted.values():
            kernel.load(buf, apply_map(m, point), lanes_of(m, lanes))
    return True


def _fold(kernel, z, slots, acc, lanes):
    """`acc` with reduction `z`'s elements at every slot folded in (a masked slot leaves it as is)."""
    for point, valid in slots:
        x, comb = kernel.element_of_reduction(z, point, lanes)
        folded = ir.Operation.create(comb.name, results=[acc.type], operands=[acc, x],
                                     attributes=attributes(comb)).result
        acc = arith.SelectOp(valid, folded, acc).result if valid is not None else folded
    return acc


def _start_value(kernel, z, row, n_cols):
    """Reduction `z`'s initial value for the row (what its output held: a fill's constant)."""
    return kernel.value(z.sources[-1], z.out, apply_map(indexing_maps(z.op)[-1], row + [const(0)] * n_cols))


def _mean_and_variance(kernel, z1, z2, slots, lanes, row, cols, tx, threads, body, stash) -> None:
    """Reductions `z1` (a row's sum) and `z2` (its squares about the mean) in one block-wide round
    (`row_variance`): each thread's count, mean and squares, combined across the block (`stash`
    called in between)."""
    moments = row_variance.thread_moments(kernel, z1, slots, lanes)
    stash()
    count, mean, squares = row_variance.block_moments(moments, tx, threads, body)
    for z, total in ((z1, arith.MulFOp(mean, count).result), (z2, squares)):
        start = _start_value(kernel, z, row, len(cols))
        kernel.registers[z] = arith.AddFOp(start, total).result


def _one_barrier(n_rows, most: int) -> bool:
    """Whether a row kernel's reductions combine the block's threads with one barrier each
    (`block_reduce`) instead of `gpu.all_reduce`'s two: with at most `most` rows (the option
    `one-barrier-rows`, _FEW_ROWS by default), where a kernel is its reductions' latency. On the
    H200 (same-run A/B, 8x4096, best of 6): softmax bf16 2.17 to 1.98 us, fp32 2.33 to 2.21;
    RMSNorm·SiLU·up and add+RMSNorm bf16 3-4% faster, fp32 within noise.
    Many rows keep gpu.all_reduce: their barriers hide behind other blocks' loads."""
    return isinstance(n_rows, int) and n_rows <= most


def _finish_reduction(kernel, z, acc, lanes, row, cols, block=None) -> None:
    """Fold the lanes of a thread's accumulator, combine the threads, add the reduction's initial
    value: the row's result, kept in a register for the epilogue. With `block` (tx, threads, the
    launch body) a float sum, max or min combines with one barrier (`_block_reduce`)."""
    comb_name = combiner(z.op).name
    element_type = ir.MemRefType(z.out.type).element_type
    if lanes > 1:
        acc = vector.ReductionOp(element_type, ir.Attribute.parse(f"#vector.kind<{_REDUCTION_KIND[comb_name]}>"),
                                 acc).result
    one_barrier = block is not None and isinstance(element_type, ir.FloatType) and comb_name in _EMPTY
    total = _block_reduce(acc, comb_name, *block) if one_barrier else _all_reduce(acc, comb_name)
    start = _start_value(kernel, z, row, len(cols))
    kernel.registers[z] = ir.Operation.create(comb_name, results=[element_type], operands=[start, total],
                                              attributes=attributes(combiner(z.op))).result


def _store_where(kernel, valid, row_outputs, values, index) -> None:
    """Store each value into its output buffer at `index`; only where `valid` holds, if given."""
    if valid is None:
        for (buf, _), value in zip(row_outputs, values):
            kernel.store(value, buf, index)
        return
    branch = scf.IfOp(valid)
    with ir.InsertionPoint(branch.then_block):
        for (buf, _), value in zip(row_outputs, values):
            kernel.store(value, buf, index)
        scf.YieldOp([])


def _all_reduce(value, comb_name: str):
    """The block-wide combination of every thread's `value`. Warp shuffles move 32-bit words, so a
    16-bit float (a max in bf16, say) travels as f32 and comes back exact."""
    narrow = isinstance(value.type, ir.FloatType) and value.type.width < 32
    if narrow:
        wide = arith.ExtFOp(ir.F32Type.get(), value).result
    total = gpu.AllReduceOp(wide if narrow else value,
                            op=ir.Attribute.parse(f"#gpu<all_reduce_op {_REDUCTION_KIND[comb_name]}>"), uniform=True).result
    return arith.TruncFOp(value.type, total).result if narrow else total


def _block_reduce(value, comb_name: str, tx, threads: int, body):
    """`_all_reduce` with one barrier (`block_reduce`): every warp combines the warps' values."""
    narrow = value.type.width < 32
    wide = arith.ExtFOp(ir.F32Type.get(), value).result if narrow else value

    def merge(a, b):
        return (ir.Operation.create(comb_name, results=[wide.type], operands=[a[0], b[0]]).result,)

    (total,) = block_reduce((wide,), merge, (_EMPTY[comb_name],), tx, threads, body)
    return arith.TruncFOp(value.type, total).result if narrow else total


_EMPTY = {"arith.addf": 0.0, "arith.maximumf": -math.inf, "arith.maxnumf": -math.inf,
          "arith.minimumf": math.inf, "arith.minnumf": math.inf}  # what merging changes nothing with


def _store_row_values(kernel, tx, row, rows, cols, outputs, row_outputs, per_row):
    """Thread 0 stores the group's per-row outputs (a mean, a max) that something else reads."""
    scalar_outputs = [(b, w) for b, w in outputs if (b, w) not in row_outputs]
    if not scalar_outputs:
        return
    is_first = arith.CmpIOp(arith.CmpIPredicate.eq, tx, const(0)).result
    branch = scf.IfOp(is_first)
    with ir.InsertionPoint(branch.then_block):
        kernel.cache = {}  # values computed here stay here
        for buf, writer in scalar_outputs:
            index = _per_row_index(writer, per_row, row, rows, len(cols))
            memref.StoreOp(kernel.value(writer, buf, index), buf, index)
        scf.YieldOp([])


def _row_kernel(members, reductions, outputs, threads, made, lanes=1, unroll=4):
    """Block per row for rows too long for registers: threads stride over the row, in `lanes`-wide
    vectors, once per reduction and again for the epilogue. The row is read again each time; the
    rows in flight (one per block) mostly still sit in L2 when they are read again. Each trip of a
    loop handles `unroll` vectors per thread, their loads issued together, so that a thread has that
    many loads in flight instead of one (the last trip masks the vectors past the row's end)."""
    in_map, full, rows, cols, source = _row_space(reductions[0])
    per_row = _check_row_group(reductions, outputs, in_map, full, rows)
    if lanes > 1 and (cols[-1] % lanes or in_map != ir.AffineMap.get_identity(in_map.n_dims, context=in_map.context)):
        raise Unsupported("rows not a whole number of vectors")
    n_rows, n_vectors = _count(source, rows), math.prod(cols) // lanes
    block_threads = min(threads, max(32, 1 << max(0, (n_vectors - 1).bit_length())))
    unroll = max(1, min(unroll, -(-n_vectors // block_threads)))
    stride = block_threads * unroll
    body = _launch(n_rows, block_threads, made)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)

    def slots_of(iv):
        """The trip's vectors: (iteration point, in-row flag or None). The first is always in the
        row (the loop runs while it is); a later one past the end loads the row's last vector."""
        slots = []
        for j in range(unroll):
            v = arith.AddIOp(iv, const(j * block_threads)).result if j else iv
            point, valid = _vector_slot(v, n_vectors, lanes, cols, bool(j and n_vectors % stride))
            slots.append((row + point, valid))
        return slots

    _describe(body, schedule="row_loop", rows=_static_or_dynamic(n_rows), row_length=math.prod(cols), threads=block_threads,
              lanes=lanes, unroll=unroll)
    with ir.InsertionPoint(body):
        row = delinearize(bx, list(rows)) if rows else []
        c_end, c_stride = const(n_vectors), const(stride)
        for z in reductions:
            element_type = ir.MemRefType(z.out.type).element_type
            comb_name = combiner(z.op).name
            init = kernel.widen(identity(comb_name, element_type), lanes)
            loop = scf.ForOp(tx, c_end, c_stride, [init])
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                slots = slots_of(loop.induction_variable)
                j, m = full_input(z.op)
                if j is not None and z.sources[j] is None:  # this trip's loads first, together
                    for point, _ in slots:
                        kernel.load(z.inputs[j], apply_map(m, point), lanes_of(m, lanes))
                scf.YieldOp([_fold(kernel, z, slots, loop.inner_iter_args[0], lanes)])
            kernel.cache = {}
            _finish_reduction(kernel, z, loop.results[0], lanes, row, cols)
        row_outputs = [(b, w) for b, w in outputs if w.shape == full and w.kind != "reduction"]
        if row_outputs:
            loop = scf.ForOp(tx, c_end, c_stride)
            with ir.InsertionPoint(loop.body):
                kernel.cache = {}
                slots = slots_of(loop.induction_variable)
                values = []
                for point, valid in slots:
                    index = apply_map(in_map, point)
                    values.append([kernel.widen(kernel.value(w, b, index, lanes), lanes) for b, w in row_outputs])
                for (point, valid), vals in zip(slots, values):
                    _store_where(kernel, valid, row_outputs, vals, apply_map(in_map, point))
                scf.YieldOp([])
        kernel.cache = {}
        _store_row_values(kernel, tx, row, rows, cols, outputs, row_outputs, per_row)
        gpu.TerminatorOp()


def _flat_kernel(members, reductions, outputs, threads, made, lanes=1, vectors=0):
    """A thread per `lanes` consecutive elements of the output (one 128-bit store when lanes > 1), or
    per `vectors` such vectors (`_flat_vectors`)."""
    shapes = {w.shape for _, w in outputs}
    if len(shapes) != 1:
        raise Unsupported("outputs of different shapes")
    shape = shapes.pop()
    if lanes > 1 and (not shape or shape[-1] == _DYNAMIC or shape[-1] % lanes):
        raise Unsupported("rows not a whole number of vectors")
    total = _count(outputs[0][0], list(shape), lanes)
    if isinstance(total, int) and total == 0:
        return
    per_thread = max(1, min(vectors or 1, _ceil_div(total, threads) if isinstance(total, int) else vectors or 1))
    if per_thread > 1:
        return _flat_vectors(outputs, shape, total, threads, made, lanes, per_thread)
    body = _launch(_ceil_div(total, threads), threads, made)
    _describe(body, schedule="flat", elements=_elements(shape, total), threads=threads, lanes=lanes)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        linear = arith.AddIOp(arith.MulIOp(bx, const(threads)).result, tx).result
        inside = arith.CmpIOp(arith.CmpIPredicate.ult, linear, _index(total)).result
        branch = scf.IfOp(inside)
        with ir.InsertionPoint(branch.then_block):
            first = arith.MulIOp(linear, const(lanes)).result if lanes > 1 else linear
            point = delinearize(first, list(shape)) if shape else []
            for buf, writer in outputs:
                kernel.store(kernel.widen(kernel.value(writer, buf, point, lanes), lanes), buf, point)
            scf.YieldOp([])
        gpu.TerminatorOp()


def _flat_vectors(outputs, shape, total, threads, made, lanes, per_thread):
    """A flat kernel whose threads handle `per_thread` vectors each: vector j of thread t of block b
    is b * threads * per_thread + j * threads + t (each j a coalesced sweep of the block's threads).
    Every value is computed, its loads issued together, before the first store, so a thread has
    `per_thread` loads in flight; a vector past the end loads the last one and is not stored."""
    span = threads * per_thread
    body = _launch(_ceil_div(total, span), threads, made)
    _describe(body, schedule="flat", elements=_elements(shape, total), threads=threads, lanes=lanes,
              vectors_per_thread=per_thread)
    bx, tx = body.arguments[0], body.arguments[3]
    kernel = Kernel(lanes)
    with ir.InsertionPoint(body):
        base = arith.AddIOp(arith.MulIOp(bx, const(span)).result, tx).result
        slots = [_vector_slot(arith.AddIOp(base, const(j * threads)).result if j else base, total, lanes, shape,
                              not isinstance(total, int) or bool(total % span)) for j in range(per_thread)]
        values = [[kernel.widen(kernel.value(w, b, point, lanes), lanes) for b, w in outputs] for point, _ in slots]
        for (point, valid), vals in zip(slots, values):
            _store_where(kernel, valid, outputs, vals, point)
        gpu.TerminatorOp()

def run(module_op, pass_, threads_per_block: int = 256, row_registers: int = 32, row_prefetch: bool = True,
        row_unroll: int = 4, vectors: int = 0, read_only_cache: str = "off", l2_evict_last: bool = False,
        row_stash: bool = False,
        one_barrier_rows: int = 64, one_round_variance: bool = True, schedule: str = "") -> None:
    groups: dict = {}
    module_op.walk(lambda op: (groups.setdefault(ir.IntegerAttr(op.attributes["fusec.group"]).value, []).append(op)
                               if "fusec.group" in op.attributes else None) or ir.WalkResult.ADVANCE)
    try:
        if read_only_cache not in READ_ONLY_CACHE:
            raise ValueError(f"read-only-cache must be {KNOBS['read_only_cache'][2]}, not '{read_only_cache}'")
        overrides = parse_overrides(schedule)
    except ValueError as err:
        module_op.location.emit_error(f"{FLAG}: {err}")
        pass_.signal_pass_failure()
        return
    unknown = sorted(set(overrides) - set(groups))
    if unknown:
        module_op.location.emit_error(f"{FLAG}: the schedule names group(s) {', '.join(map(str, unknown))}; "
                                      f"the module's groups are {', '.join(map(str, sorted(groups))) or 'none'}")
        pass_.signal_pass_failure()
        return
    defaults = {"threads_per_block": threads_per_block, "row_registers": row_registers,
                "row_prefetch": row_prefetch, "row_unroll": row_unroll, "vectors": vectors,
                "read_only_cache": read_only_cache, "l2_evict_last": l2_evict_last, "row_stash": row_stash,
                "one_barrier_rows": one_barrier_rows, "one_round_variance": one_round_variance}
    for gid, ops in groups.items():
        kind = ir.StringAttr(ops[0].attributes["fusec.group_kind"]).value
        knobs = {**defaults, **overrides.get(gid, {})}
        try:
            if kind not in ("pointwise", "reduction"):
                raise Unsupported(f"a {kind} group")
            lower_group(ops, knobs, gid)
        except Unsupported as why:
            if os.environ.get("FUSEC_DEBUG"):
                print(f"{FLAG}: group {gid} left to the loop lowering: {why}", file=sys.stderr)
            for op in ops:  # left to the generic loop lowering: correct, one kernel per op
                del op.attributes["fusec.group"]
