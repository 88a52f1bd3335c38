"""What a row_registers thread may hold, and how its block combines: decided from a group's facts
(`plan.Facts`) and counts, no MLIR. The plan (`plan.py`) asks; the builders follow its answers."""

from __future__ import annotations

__all__ = ["one_barrier", "prefetch_fits"]


# Registers of row data a thread of a block of `threads` may hold for the prefetch: its share of the
# SM's 64K (128 at most), less 32 for the kernel's other values (0 spills in `ptxas -v` on the bench
# suite: test/PTX/suite-kernels.py). At 1024 threads that is 32: a bf16 row of 32768 and its `up`
# (16 registers each, packed) fit, and RMSNorm·SiLU·up went from 87% to 97% of copy on the H200
# (with 40, `up` was loaded after the reduction's barrier, with one block per SM to hide nothing).
_OTHER_REGISTERS = 32


def _data_register_budget(threads: int) -> int:
    return max(0, min(128, 65536 // threads) - _OTHER_REGISTERS)


def prefetch_fits(facts, lanes: int, per_thread: int, threads: int, copies: int = 1) -> bool:
    """Whether the rows a group's prefetch loads (`facts`: its `plan.Facts`; `prefetch.issue`) fit the
    register budget, `copies` times (2: this row's and the next's, `next_row`): only rows read in order
    are prefetched."""
    if not facts.row_map_identity:
        return False
    words = sum((lanes if vector else 1) * nbytes for vector, nbytes in facts.prefetch_loads)
    return copies * -(-words // 4) * per_thread <= _data_register_budget(threads)


def one_barrier(n_rows: int | None, most: int) -> bool:
    """Whether a row kernel's reductions combine the block's threads with one barrier each
    (`block_reduce`) instead of `gpu.all_reduce`'s two: with at most `most` rows (the option
    `one-barrier-rows`, _FEW_ROWS by default), where a kernel is its reductions' latency. On the
    H200 (same-run A/B, 8x4096, best of 6): softmax bf16 2.17 to 1.98 us, fp32 2.33 to 2.21;
    RMSNorm·SiLU·up and add+RMSNorm bf16 3-4% faster, fp32 within noise.
    Many rows keep gpu.all_reduce: their barriers hide behind other blocks' loads."""
    return n_rows is not None and n_rows <= most
