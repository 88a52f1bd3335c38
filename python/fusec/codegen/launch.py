"""What every schedule's builder starts from: the gpu.launch, a thread's vector slots, masked stores."""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, gpu, scf

from .indexing import const, delinearize, index


def launch(grid, block: int):
    """A gpu.launch of `grid` blocks (an int, or an index value for a dynamic row count) of `block`
    threads, at the insertion point."""
    one = const(1)
    return gpu.LaunchOp((index(grid), one, one), (const(block), one, one))


def clamp_slot(v, count, masked: bool):
    """(slot `v`, or the last of `count` where `v` runs past them; the in-range flag), for a `masked`
    slot; (v, None) for one always in range. `count`: an int or an index value."""
    if not masked:
        return v, None
    valid = arith.CmpIOp(arith.CmpIPredicate.ult, v, index(count)).result
    last = count - 1 if isinstance(count, int) else arith.SubIOp(count, const(1)).result
    return arith.MinUIOp(v, index(last)).result, valid


def vector_slot(v, count: int, lanes: int, extents: list, masked: bool):
    """(iteration point over `extents` of vector `v` of `count`, each `lanes` elements; the in-range
    flag or None). A `masked` slot may run past the end: it then loads the last vector instead
    (always in bounds), and the flag keeps it out of folds and stores."""
    v, valid = clamp_slot(v, count, masked)
    first = arith.MulIOp(v, const(lanes)).result if lanes > 1 else v
    return (delinearize(first, list(extents)) if extents else []), valid


def store_where(kernel, valid, outputs, values, at) -> None:
    """Store each value into its output buffer at index `at`; only where `valid` holds, if given (a
    window's lane mask, a vector: its stores mask themselves, `windows.store`)."""
    if valid is None or isinstance(valid.type, ir.VectorType):
        for (buf, _), value in zip(outputs, values):
            kernel.store(value, buf, at)
        return
    branch = scf.IfOp(valid)
    with ir.InsertionPoint(branch.then_block):
        for (buf, _), value in zip(outputs, values):
            kernel.store(value, buf, at)
        scf.YieldOp([])
