"""The `wgmma` schedule: a bf16/fp16 matmul C[M, N] = A[M, K] @ B[N, K]^T (f32 accumulation) on
Hopper's tensor cores (sm_90a), one block per BM x BN tile of C.

The blocks take the tiles in groups of GROUP_M row tiles (`_tile_of`), so that those running at once
share tiles of A and B in L2. A block has one warpgroup (128 threads) per 64 rows of its tile. Every
trip of its loop over K:

1. tiles of A (BM x 64) and B (BN x 64) land in shared memory, `stages - 2` trips ahead of their use,
   by 16-byte `cp.async` copies of every thread (`nvgpu.device_async_copy`). A row of a tile is 64
   elements, 128 bytes; its eight 16-byte chunks are stored XOR-ed with the row's position in its
   group of 8 rows (chunk c of row r at chunk c ^ (r % 8)): the 128-byte swizzle wgmma reads, so that
   the 8 rows a core matrix spans sit in different banks;
2. each thread waits for its own copies of this trip's tiles (`cp.async.wait_group`), orders them
   before the tensor cores' reads (`fence.proxy.async`: copies are generic-proxy writes, wgmma reads
   through the async proxy), and the block meets at a barrier;
3. each warpgroup issues four `wgmma.mma_async m64nBNk16` (K = 16 each) reading its 64 rows of A and
   all BN rows of B through 64-bit matrix descriptors (shared address, 1024 bytes between groups of 8
   rows, 128-byte swizzle), accumulating into BN / 2 f32 registers a thread, and lets one such group
   stay in flight (`wgmma.wait_group 1`) while the next trip's copies are issued. A stage is refilled
   only after every warp passed the barrier of the trip after its use: its wgmma group is done.

The epilogue works on the accumulators where they are: thread t of warpgroup g holds, for every 8
columns j, rows 16 (t / 32) + (t % 32) / 4 and 8 below it, columns 2 (t % 4) and the next one (PTX
ISA, "wgmma register fragment for D"). At each such pair of columns the group's pointwise members
(bias, GELU, the rounding to bf16: `fusion/epilogues.py` let them join) are evaluated on vectors of 2,
as a flat kernel evaluates them, and every output the group writes is stored, 2 elements a store.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, llvm, memref, nvgpu, nvvm, scf, vector

from .indexing import const
from .kernel import Kernel

__all__ = ["TILE_K", "GROUP_M", "SMS", "shared_bytes", "build"]

TILE_K = 64  # elements of K a trip: one 128-byte swizzled row of a 16-bit tile
_ROW_BYTES = 128
_SWIZZLE_ALIGN = 1024  # the 128-byte swizzle repeats every 8 rows: a tile starts 1024-byte aligned
_WARPGROUP = 128
SMS = 132  # an H100's or H200's multiprocessors (a persistent grid's blocks: `persistent` a multiprocessor)
GROUP_M = 8  # row tiles a group of consecutive blocks walks (`_tile_of`)


def shared_bytes(tile_m: int, tile_n: int, stages: int) -> int:
    """The block's dynamic shared memory: `stages` tiles of A and B, plus room to align the first."""
    return stages * (tile_m + tile_n) * _ROW_BYTES + _SWIZZLE_ALIGN


def _i64(n: int):
    return arith.ConstantOp(ir.IntegerType.get_signless(64), n).result


def _descriptor(address):
    """A wgmma matrix descriptor of a K-major tile at shared `address` (i64): the start address in
    16-byte units (bits 0-13), leading byte offset 1 (unused by swizzled K-major tiles), stride byte
    offset 1024 / 16 between groups of 8 rows (bits 32-45), 128-byte swizzle (mode 1, bits 62-63)."""
    start = arith.AndIOp(arith.ShRUIOp(address, _i64(4)).result, _i64(0x3FFF)).result
    return arith.OrIOp(start, _i64((1 << 16) | ((_SWIZZLE_ALIGN // 16) << 32) | (1 << 62))).result


def _attr(text: str):
    return ir.Attribute.parse(text)


def build(plan, group):
    """The kernel of `plan` (a `WgmmaPlan`) at the insertion point; returns (the gpu.launch, what it
    records)."""
    threads = plan.tile_m // 64 * _WARPGROUP
    index = ir.IndexType.get()
    one = const(1)
    smem_bytes = shared_bytes(plan.tile_m, plan.tile_n, plan.stages)
    tiles = -(-plan.m // plan.tile_m) * -(-plan.n // plan.tile_n)
    # A persistent grid's blocks stride over the tiles by their own count: the runtime must launch
    # exactly this grid (no `persistent_clusters` mark, which would let it launch fewer).
    blocks = min(tiles, plan.persistent * SMS) if plan.persistent else tiles
    launch = gpu.LaunchOp((const(blocks), one, one), (const(threads), one, one),
                          dynamic_shared_memory_size=arith.ConstantOp(ir.IntegerType.get_signless(32), smem_bytes).result)
    body = launch.body.blocks[0] if len(launch.body.blocks) else launch.body.blocks.append(*([index] * 12))
    with ir.InsertionPoint(body):
        _body(plan, body.arguments[0], blocks, tiles, body.arguments[3], threads)
        gpu.TerminatorOp()
    return launch, {"tile": f"{plan.tile_m}x{plan.tile_n}x{TILE_K}", "stages": plan.stages, "threads": threads,
                    "shared_bytes": smem_bytes, **({"blocks": blocks} if plan.persistent else {})}


def _clamped(position, extent: int, count):
    """(copy `count` where `position` < `extent`, else 0; `position` clamped to 0 past `extent`)."""
    inside = arith.CmpIOp(arith.CmpIPredicate.ult, position, const(extent)).result
    return arith.SelectOp(inside, count, const(0)).result, arith.SelectOp(inside, position, const(0)).result


def _tile_of(plan, block):
    """(row tile, column tile) of block `block`, in groups of GROUP_M row tiles: consecutive blocks
    walk down a group's rows, then to its next column, so that the blocks running at once share
    their tiles of A and B in L2 (row by row, a wave read all of B again for every few rows of C)."""
    tiles_m, tiles_n = -(-plan.m // plan.tile_m), -(-plan.n // plan.tile_n)
    per_group = GROUP_M * tiles_n
    first_m = arith.MulIOp(arith.DivUIOp(block, const(per_group)).result, const(GROUP_M)).result
    size_m = arith.MinUIOp(arith.SubIOp(const(tiles_m), first_m).result, const(GROUP_M)).result
    within = arith.RemUIOp(block, const(per_group)).result
    return (arith.AddIOp(first_m, arith.RemUIOp(within, size_m).result).result,
            arith.DivUIOp(within, size_m).result)


def _body(plan, block, blocks: int, tile_count: int, tid, threads):
    """Block `block` of `blocks` computes tiles block, block + blocks, ... of the `tile_count` (one, where
    there are as many blocks as tiles). Its trips over K, tile after tile, are one stream of
    `items`: the copies `stages - 2` items ahead run into the next tile's first trips while this
    tile's last ones and its epilogue run."""
    a, b = plan.a, plan.b
    i64 = ir.IntegerType.get_signless(64)
    element = ir.MemRefType(a.type).element_type
    half_bytes = 2
    tile_m, tile_n, stages = plan.tile_m, plan.tile_n, plan.stages
    a_bytes, b_bytes = tile_m * _ROW_BYTES, tile_n * _ROW_BYTES
    stage_bytes = a_bytes + b_bytes
    trips = -(-plan.k // TILE_K)
    single = blocks == tile_count  # a block a tile: its stream is that tile's trips
    mine = const(1) if single else \
        arith.DivUIOp(arith.SubIOp(const(tile_count + blocks - 1), block).result, const(blocks)).result
    items = const(trips) if single else arith.MulIOp(mine, const(trips)).result
    if single:
        block_m, block_n = _tile_of(plan, block)

    def item(i):
        """(first row of C, first column of C, trip over K) of item `i` of this block's stream."""
        if single:
            return row0_m, row0_n, i
        tile = arith.AddIOp(block, arith.MulIOp(arith.DivUIOp(i, const(trips)).result, const(blocks)).result).result
        tile_row, tile_column = _tile_of(plan, tile)
        return (arith.MulIOp(tile_row, const(tile_m)).result, arith.MulIOp(tile_column, const(tile_n)).result,
                arith.RemUIOp(i, const(trips)).result)

    # Dynamic shared memory, its start aligned to 1024 bytes, viewed as one array of elements.
    workgroup = _attr("#gpu.address_space<workgroup>")
    raw = gpu.DynamicSharedMemoryOp(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()],
                                                      ir.IntegerType.get_signless(8), memory_space=workgroup)).result
    start = memref.ExtractAlignedPointerAsIndexOp(raw).result
    align = const(_SWIZZLE_ALIGN)
    pad = arith.RemUIOp(arith.SubIOp(align, arith.RemUIOp(start, align).result).result, align).result
    tiles = memref.ViewOp(ir.MemRefType.get([stages * stage_bytes // half_bytes], element, memory_space=workgroup),
                          raw, pad, []).result
    shared_start = arith.IndexCastOp(i64, arith.AddIOp(start, pad).result).result
    if single:  # `item`'s tile origin, made here (after the shared memory) as the one-tile kernel always made it
        row0_m = arith.MulIOp(block_m, const(tile_m)).result
        row0_n = arith.MulIOp(block_n, const(tile_n)).result

    def copy_tiles(i, stage, elements):
        """This thread's 16-byte copies of item `i`'s tiles into `stage` (index values); `elements`:
        8, or a value that is 0 where the copies only fill zeros (past this block's last item: every
        item commits a group, the waits count groups; a copy of 0 bytes still writes its 16 zeros, so
        it goes to the stage its own item would fill, free by then). Rows past M or N and chunks past
        K are filled with zeros too (a copy of 0 elements from a clamped address)."""
        first_m, first_n, trip = item(i)
        k0 = arith.MulIOp(trip, const(TILE_K)).result
        stage_at = arith.MulIOp(stage, const(stage_bytes // half_bytes)).result
        tokens = []
        for src, first_row, rows, offset, extent in ((a, first_m, tile_m, 0, plan.m), (b, first_n, tile_n, a_bytes, plan.n)):
            for c in range(rows * (_ROW_BYTES // 16) // threads):
                chunk_id = arith.AddIOp(tid, const(threads * c)).result
                row = arith.DivUIOp(chunk_id, const(8)).result
                chunk = arith.RemUIOp(chunk_id, const(8)).result
                swizzled = arith.XOrIOp(chunk, arith.RemUIOp(row, const(8)).result).result
                at = arith.AddIOp(arith.MulIOp(row, const(_ROW_BYTES // half_bytes)).result,
                                  arith.MulIOp(swizzled, const(8)).result).result
                at = arith.AddIOp(at, arith.AddIOp(stage_at, const(offset // half_bytes)).result).result
                column = arith.AddIOp(k0, arith.MulIOp(chunk, const(8)).result).result
                global_row = arith.AddIOp(first_row, row).result
                count = elements
                if extent % rows:  # the last tile runs past M (N)
                    count, global_row = _clamped(global_row, extent, count)
                if plan.k % TILE_K:  # the last trip runs past K (a multiple of 8: whole chunks)
                    count, column = _clamped(column, plan.k, count)
                tokens.append(nvgpu.DeviceAsyncCopyOp(tiles, [at], src, [global_row, column],
                                                      8, srcElements=count, bypassL1=True).result)
        return nvgpu.DeviceAsyncCreateGroupOp(tokens).result

    def ahead(i):
        """Item `i`'s copies, or zero-byte ones from the last item's place past the stream's end."""
        valid = arith.CmpIOp(arith.CmpIPredicate.ult, i, items).result
        return copy_tiles(arith.MinUIOp(i, arith.SubIOp(items, const(1)).result).result,
                          arith.RemUIOp(i, const(stages)).result, arith.SelectOp(valid, const(8), const(0)).result)

    # Prologue: items 0 .. stages - 3 in flight (a group each; a block has at least one tile, `trips` items).
    token = None
    for s in range(stages - 2):
        token = copy_tiles(const(s), const(s), const(8)) if s < trips else ahead(const(s))

    accumulator_type = ir.Type.parse("!llvm.struct<(" + ", ".join(["f32"] * (tile_n // 2)) + ")>")
    zero = llvm.ZeroOp(accumulator_type).result
    # A loop over this block's tiles, and in it the loop over a tile's trips, as with one tile a
    # block: the accumulators are that loop's own registers, read only after it (and its last
    # wgmma group) is done. Merging them with fresh zeros in one loop over every item made the
    # compiler copy registers that the tensor cores were still writing.
    tile_loop = scf.ForOp(const(0), mine, const(1))
    with ir.InsertionPoint(tile_loop.body):
        first = arith.MulIOp(tile_loop.induction_variable, const(trips)).result
        loop = scf.ForOp(const(0), const(trips), const(1), [zero])
        with ir.InsertionPoint(loop.body):
            i = arith.AddIOp(first, loop.induction_variable).result
            nvgpu.DeviceAsyncWaitOp(token, numGroups=stages - 3)
            nvvm.FenceProxyOp(_attr("#nvvm.proxy_kind<async.shared>"), space=_attr("#nvvm.shared_space<cta>"))
            nvvm.BarrierOp()
            # Refill the stage item i - 2 used (its wgmma group is done: every warp passed this barrier).
            ahead(arith.AddIOp(i, const(stages - 2)).result)
            stage = arith.RemUIOp(i, const(stages)).result
            a_at = arith.AddIOp(shared_start, arith.IndexCastOp(i64, arith.MulIOp(stage, const(stage_bytes)).result).result).result
            b_at = arith.AddIOp(a_at, _i64(a_bytes)).result
            warpgroup = arith.IndexCastOp(i64, arith.DivUIOp(tid, const(_WARPGROUP)).result).result
            a_at = arith.AddIOp(a_at, arith.MulIOp(warpgroup, _i64(64 * _ROW_BYTES)).result).result
            kinds = {"bf16": "bf16", "f16": "f16"}
            operand = _attr(f"#nvvm.wgmma_type<{kinds[str(element)]}>")
            nvvm.WgmmaFenceAlignedOp()
            acc = loop.inner_iter_args[0]
            for step in range(TILE_K // 16):  # 16 elements of K a wgmma: 32 bytes along the swizzled row
                acc = nvvm.WgmmaMmaAsyncOp(
                    accumulator_type, acc, _descriptor(arith.AddIOp(a_at, _i64(32 * step)).result),
                    _descriptor(arith.AddIOp(b_at, _i64(32 * step)).result),
                    shape=_attr(f"#nvvm.shape<m = 64, n = {tile_n}, k = 16>"), typeA=operand, typeB=operand,
                    typeD=_attr("#nvvm.wgmma_type<f32>"), scaleD=_attr("#nvvm.wgmma_scale_out<one>"),
                    scaleA=_attr("#nvvm.wgmma_scale_in<one>"), scaleB=_attr("#nvvm.wgmma_scale_in<one>"),
                    layoutA=_attr("#nvvm.mma_layout<row>"), layoutB=_attr("#nvvm.mma_layout<col>")).result
            nvvm.WgmmaGroupSyncAlignedOp()
            nvvm.WgmmaWaitGroupSyncOp(1)
            scf.YieldOp([acc])
        nvvm.WgmmaWaitGroupSyncOp(0)
        if single:  # the zero-byte copies past the last trip, done before the epilogue
            nvgpu.DeviceAsyncWaitOp(token, numGroups=0)
        tile_m0, tile_n0, _ = item(first)
        _store(plan, loop.results[0], tile_m0, tile_n0, tid)
        scf.YieldOp([])
    if not single:  # the zero-byte copies past the last item, done
        nvgpu.DeviceAsyncWaitOp(token, numGroups=0)


def _store(plan, acc, row0_m, row0_n, tid):
    """The epilogue: at each pair of neighbouring columns a thread holds, the pointwise members
    evaluated on the accumulators (`Kernel` with vectors of 2, the product's member reading them as
    its registers), and every output stored, 2 elements a store."""
    f32 = ir.F32Type.get()
    pair_type = ir.VectorType.get([2], f32)
    warp = arith.DivUIOp(tid, const(32)).result  # of the block: 16 rows each, warpgroup g's from 64 g
    lane = arith.RemUIOp(tid, const(32)).result
    row = arith.AddIOp(row0_m, arith.AddIOp(arith.MulIOp(warp, const(16)).result,
                                            arith.DivUIOp(lane, const(4)).result).result).result
    column = arith.AddIOp(row0_n, arith.MulIOp(arith.RemUIOp(lane, const(4)).result, const(2)).result).result
    kernel = Kernel(lanes=2)
    for j in range(plan.tile_n // 8):
        for half in range(2):  # rows r and r + 8
            values = [llvm.ExtractValueOp(f32, acc, [4 * j + 2 * half + e]).result for e in range(2)]
            pair = vector.FromElementsOp(pair_type, values).result
            at = [arith.AddIOp(row, const(8 * half)).result, arith.AddIOp(column, const(8 * j)).result]
            kernel.cache = {}
            kernel.registers[plan.product] = pair
            guard = _inside(plan, at)
            if guard is not None:  # a tile past M or N: the pair is stored where it is in C
                branch = scf.IfOp(guard)
                with ir.InsertionPoint(branch.then_block):
                    _store_pair(kernel, plan, pair, at)
                    scf.YieldOp([])
            else:
                _store_pair(kernel, plan, pair, at)


def _store_pair(kernel, plan, pair, at):
    for buf, writer in plan.outputs:
        kernel.store(pair if writer is None else kernel.evaluate(writer, at, 2), buf, at)


def _inside(plan, at):
    """Whether the pair at `at` is inside C (None where every tile is: sizes that are tile multiples)."""
    checks = [arith.CmpIOp(arith.CmpIPredicate.ult, v, const(extent)).result
              for v, extent, tile in zip(at, (plan.m, plan.n), (plan.tile_m, plan.tile_n)) if extent % tile]
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else arith.AndIOp(*checks).result
