"""The hybrid row_registers schedule's shared-memory stash (the `row-stash` knob of
`--fusec-lower-groups-to-gpu`).

A hybrid thread handles more of its row (`vectors`) than `row-registers` lets it keep. The vectors
past its registers are loaded once, for the first phase that needs them; `stash` then stores them
to shared memory, and every later phase (the next reduction, the epilogue) reads them from there
instead of from global memory. Each thread reads back only the slots it wrote
(`(slot * threads + tx) * lanes`), so the stash needs no barrier.

Why: a bf16 row of 32768 is 64 KB. Held in registers by 1024 threads it fills an SM's register
file, one block an SM, and nothing hides a reduction's barrier (84% of copy on the H200); 512
threads holding half each, reading the other half again from L2 (the hybrid before the stash),
gave 89%; with that half in 32 KB of shared memory, two blocks an SM, hand-written CUDA reached 93%
(`bench/handwritten/long_rows.cu`, which also shows the row whole in shared memory, and a row split
over a cluster of CTAs, no better or worse).

The stash relies on the barrier between the phases: without one (a row of one warp) LLVM sees each
value stored and loaded back by the same thread, keeps it in a register and drops the stash, so a
one-warp row is not stashed at all. A block's static shared memory is at most 48 KB; the stash takes at most `STASH_BYTES` of it and
an input that would not fit is read again from memory, as before.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, vector

from .combine import WARP, workgroup_buffer
from .indexing import const, element_bytes

STASH_BYTES = 40 * 1024  # of the 48 KB static limit, leaving room for the reductions' scratch


def stash(kernel, columns: dict, n_row: int, written: list, tx, threads: int, body) -> None:
    """Store to shared memory the values `kernel` holds of loads from global buffers at the slots
    `columns` maps (a slot's column indices -> its stash position, 0 for the first slot past the
    registers) that are not stashed yet; the kernel's later loads of them read shared memory.
    `n_row` is the number of row indices that come before the columns in an index; `written`, the
    buffers the kernel stores to, are never stashed. A row of one warp is not stashed (no barrier)."""
    if threads <= WARP:
        return
    for key, value in list(kernel.cache.items()):
        operand, index, lanes = key[:3]  # a load's key (an evaluated value's: its member's id first)
        if key in kernel.stashed or not isinstance(operand, ir.Value) or not isinstance(operand.type, ir.MemRefType) \
                or any(operand == w for w in written):
            continue
        position = columns.get(index[n_row:])
        if position is None or ir.MemRefType(operand.type).memory_space is not None:
            continue
        buffer = _buffer(kernel, operand, lanes, len(columns), threads, body)
        if buffer is None:
            continue
        offset = arith.AddIOp(tx, const(position * threads)).result if position else tx
        offset = arith.MulIOp(offset, const(lanes)).result if lanes > 1 else offset
        if lanes == 1:
            memref.StoreOp(value, buffer, [offset])
        else:
            vector.StoreOp(value, buffer, [offset], alignment=_alignment(buffer, lanes))
        kernel.stashed[key] = (buffer, [offset])


def _alignment(buffer, lanes: int) -> int:
    return min(16, lanes * element_bytes(ir.MemRefType(buffer.type).element_type))


def _buffer(kernel, operand, lanes: int, slots: int, threads: int, body):
    """The stash buffer of `operand` (one per input), made on first use; None when it would take
    the block past STASH_BYTES."""
    for buf_operand, buffer in kernel.stash_buffers:
        if buf_operand == operand:
            return buffer
    element = ir.MemRefType(operand.type).element_type
    size = slots * threads * lanes
    if kernel.stash_bytes + size * element_bytes(element) > STASH_BYTES:
        return None
    kernel.stash_bytes += size * element_bytes(element)
    buffer = workgroup_buffer(body, size, element)
    kernel.stash_buffers.append((operand, buffer))
    return buffer
