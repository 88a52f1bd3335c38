"""Rows of any width with 128-bit vectors: each row read through aligned windows.

A row of W elements whose W is not a multiple of the vector's L lanes (GPT-2's vocabulary of
50257, a width of 7001) used to be read one element at a time: row r starts at element r * W of its
buffer, and for most rows that is not on a 16-byte boundary. A window vector is aligned to the
buffer, not to the row: row r's phase is s = (r * W) mod L, and its vector v covers the row's
columns v * L - s ... v * L - s + L - 1. The first vector of a row starts up to L - 1 columns before
it, the last one ends up to L - 1 columns past it; the row spans ceil((W + L - 1) / L) windows at
most (`count`).

Every buffer of the rows' shape (row-major, read at the row's own indices) has the same phase, so
they are all read and written with aligned vectors. A window inside the row (`interior`, all but
the first and last of a row) is one vector load or store; one at a row's edge is read a lane at a
time at its columns clamped into the row (never past the buffer: compute-sanitizer clean) and
written a lane at a time, only the lanes in the row (a neighbouring row belongs to another block).
Its lanes outside the row are masked out of every fold (`mask`, a vector of i1, as the row kernels'
`valid`). Operands of another shape that vary along the row (a bias of W, say) are not aligned to
the row's phase: they are read a lane at a time (they come from cache). A loop index (an iota) at a
window is its clamped columns: exact in every lane that counts, in range in every other (a gather
through it stays in bounds).
"""

from __future__ import annotations

import dataclasses

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, scf, vector

from .indexing import const, element_bytes, lane_steps

__all__ = ["Window", "count", "slot", "load", "store", "row_major"]


@dataclasses.dataclass
class Window:
    """One window vector of a row: where it lies and which of its lanes are in the row."""
    row: tuple  # the row's indices (the point's leading values)
    full: tuple  # the shape of the rows' buffers
    interior: object  # i1: every lane in the row
    mask: object  # vector<L x i1>: the lanes in the row
    columns: object  # vector<L x index>: each lane's column, clamped into the row


def count(width: int, lanes: int) -> int:
    """The most windows a row of `width` spans, whatever its phase."""
    return -(-(width + lanes - 1) // lanes)


def slot(kernel, v, row: list, row_linear, full: tuple, lanes: int):
    """(iteration point, lane mask) of window `v` of the row `row` (its indices; `row_linear`, its
    position among the rows). The point's column is the window's first, v * L - s (negative at a row's
    start); the kernel's loads, stores and loop indices there go through `load`, `store` and the
    window's clamped `columns`. A `v` past the row's windows is all masked."""
    width = full[-1]
    index = ir.IndexType.get()
    phase = arith.RemUIOp(arith.MulIOp(row_linear, const(width)).result, const(lanes)).result
    first = arith.SubIOp(arith.MulIOp(v, const(lanes)).result, phase).result
    wide = ir.VectorType.get([lanes], index)
    columns = arith.AddIOp(vector.BroadcastOp(wide, first).result, lane_steps(lanes)).result

    def splat(n):
        return arith.ConstantOp(wide, ir.DenseElementsAttr.get_splat(wide, ir.IntegerAttr.get(index, n))).result

    mask = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, columns, splat(0)).result,
                        arith.CmpIOp(arith.CmpIPredicate.slt, columns, splat(width)).result).result
    clamped = arith.MaxSIOp(arith.MinSIOp(columns, splat(width - 1)).result, splat(0)).result
    interior = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, first, const(0)).result,
                            arith.CmpIOp(arith.CmpIPredicate.sle, first, const(width - lanes)).result).result
    kernel.windows[first] = Window(tuple(row), tuple(full), interior, mask, clamped)
    return [*row, first], mask


def _aligned(window: Window, operand, index) -> bool:
    """Whether `operand` at `index` has the window's phase: a buffer of the rows' shape, row-major,
    read at the row's own indices."""
    t = ir.MemRefType(operand.type)
    return (tuple(t.shape) == window.full and row_major(t) and len(index) == len(window.row) + 1
            and all(a == b for a, b in zip(index[:-1], window.row)))


def row_major(t) -> bool:
    """Contiguous rows, from the buffer's start: strides (..., W, 1) and offset 0."""
    strides, offset = t.get_strides_and_offset()
    expected, n = [], 1
    for extent in reversed(t.shape):
        expected.insert(0, n)
        n *= extent
    return offset == 0 and list(strides) == expected


def _lane_index(window: Window, index, k: int):
    return [*index[:-1], vector.ExtractOp(window.columns, [], [k]).result]


def _by_lanes(window: Window, operand, index, lanes: int):
    element = ir.MemRefType(operand.type).element_type
    return vector.FromElementsOp(ir.VectorType.get([lanes], element),
                                 [memref.LoadOp(operand, _lane_index(window, index, k)).result
                                  for k in range(lanes)]).result


def load(window: Window, operand, index, lanes: int, whole: bool):
    """`lanes` elements of `operand` at window `index`: one aligned vector load inside the row
    (`whole`: the operand's elements may be read as a vector), else a load per lane."""
    if not (whole and _aligned(window, operand, index)):
        return _by_lanes(window, operand, index, lanes)
    element = ir.MemRefType(operand.type).element_type
    t = ir.VectorType.get([lanes], element)
    branch = scf.IfOp(window.interior, [t], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([vector.LoadOp(t, operand, index, alignment=min(16, lanes * element_bytes(element))).result])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_by_lanes(window, operand, index, lanes)])
    return branch.results[0]


def store(window: Window, value, operand, index, whole: bool) -> None:
    """`value` (a vector) into `operand` at window `index`: one aligned vector store inside the row,
    else each lane in the row stored alone."""
    lanes = ir.VectorType(value.type).shape[0]
    element = ir.MemRefType(operand.type).element_type
    if whole and _aligned(window, operand, index):
        branch = scf.IfOp(window.interior, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            vector.StoreOp(value, operand, index, alignment=min(16, lanes * element_bytes(element)))
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            _store_lanes(window, value, operand, index, lanes)
            scf.YieldOp([])
    else:
        _store_lanes(window, value, operand, index, lanes)


def _store_lanes(window: Window, value, operand, index, lanes: int) -> None:
    for k in range(lanes):
        inside = scf.IfOp(vector.ExtractOp(window.mask, [], [k]).result)
        with ir.InsertionPoint(inside.then_block):
            memref.StoreOp(vector.ExtractOp(value, [], [k]).result, operand, _lane_index(window, index, k))
            scf.YieldOp([])
