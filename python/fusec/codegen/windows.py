"""Rows of any width with 128-bit vectors: an aligned vector body and a row's edges a lane at a time.

A row of W elements whose W is not a multiple of the vector's L lanes (GPT-2's vocabulary of
50257, a width of 7001) used to be read one element at a time: row r starts at element r * W of its
buffer, and for most rows that is not on a 16-byte boundary. Its phase is s = (r * W) mod L; its
first h = (L - s) mod L elements (the head) end where the buffer's next 16-byte boundary is, and
from there the row is m = (W - h) div L whole aligned vectors (the body), then t = W - h - m * L
elements (the tail). So a row is split three ways:

  - the body's vectors are the thread's slots, as in a row of a whole number of vectors: vector v
    is columns h + v * L ... h + v * L + L - 1, every lane in the row, no lane mask; a slot past
    the body (v >= m: m differs by one between rows of different phases) is masked as a whole,
    as `launch.vector_slot` masks a slot past the row;
  - the head and tail, fewer than 2 L elements, are one more slot of one element for the first
    h + t threads (`edge_slot`): thread k < h takes column k, the next t threads the tail's;
  - every buffer of the rows' shape (row-major, read at the row's own indices) has the row's phase,
    so the body is read and written with aligned vectors (`load`, `store`); an operand of another
    shape that varies along the row (LayerNorm's weight of W) is not aligned there and is read a
    lane at a time (it comes from cache).

The slots carry no per-lane masks, so the body costs what a row of a whole number of vectors costs:
the windows that an earlier version of this file read (vectors aligned to the buffer that straddled
the row's edges, each load a branch and each lane masked) were slower than scalar rows on the H200
(bench/results/2026-12-02-h200-odd-width-windows.md).
"""

from __future__ import annotations

import dataclasses

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref, vector

from .indexing import const, element_bytes
from .launch import clamp_slot

__all__ = ["Window", "Edges", "row_edges", "body_slot", "edge_slot", "load", "store", "row_major",
           "fewest_body_vectors"]


@dataclasses.dataclass
class Window:
    """A body vector's column: the row it lies in, and the shape of the rows' buffers."""
    row: tuple  # the row's indices (the point's leading values)
    full: tuple  # the shape of the rows' buffers


@dataclasses.dataclass
class Edges:
    """A row's split: `head` elements before the body, `body` whole aligned vectors (index values)."""
    head: object
    body: object
    width: int
    lanes: int


def fewest_body_vectors(width: int, lanes: int) -> int:
    """The fewest whole vectors a row of `width` holds after its head, whatever its phase."""
    return (width - lanes + 1) // lanes


def row_edges(row_linear, width: int, lanes: int) -> Edges:
    """The split of row `row_linear` (its position among the rows) of `width` elements."""
    phase = arith.RemUIOp(arith.MulIOp(row_linear, const(width)).result, const(lanes)).result
    head = arith.RemUIOp(arith.SubIOp(const(lanes), phase).result, const(lanes)).result
    body = arith.DivUIOp(arith.SubIOp(const(width), head).result, const(lanes)).result
    return Edges(head, body, width, lanes)


def body_slot(kernel, v, edges: Edges, row: list, full: tuple, masked: bool):
    """(iteration point, in-body flag or None) of body vector `v`. A `masked` slot may run past the
    body: it then reads the body's last vector (in the row) and the flag keeps it out of folds and
    stores."""
    v, valid = clamp_slot(v, edges.body, masked)
    column = arith.AddIOp(edges.head, arith.MulIOp(v, const(edges.lanes)).result).result
    kernel.windows[column] = Window(tuple(row), tuple(full))
    return [*row, column], valid


def edge_slot(tx, edges: Edges, row: list, also=None):
    """(iteration point, flag) of the thread's element of the row's head and tail: thread k < h takes
    column k, thread h + k column h + m * L + k (k < t); the other threads' flags are false (their
    column is 0: in bounds). `also`: an i1 the flag must hold too (the cluster's first block)."""
    lanes = edges.lanes
    tail_start = arith.AddIOp(edges.head, arith.MulIOp(edges.body, const(lanes)).result).result
    ends = arith.AddIOp(edges.head, arith.SubIOp(const(edges.width), tail_start).result).result  # h + t
    valid = arith.CmpIOp(arith.CmpIPredicate.ult, tx, ends).result
    if also is not None:
        valid = arith.AndIOp(valid, also).result
    in_head = arith.CmpIOp(arith.CmpIPredicate.ult, tx, edges.head).result
    column = arith.SelectOp(in_head, tx, arith.AddIOp(tx, arith.MulIOp(edges.body, const(lanes)).result).result).result
    column = arith.SelectOp(valid, column, const(0)).result
    return [*row, column], valid


def _aligned(window: Window, operand, index) -> bool:
    """Whether `operand` at `index` has the row's phase: a buffer of the rows' shape, row-major,
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


def _lane_index(index, k: int):
    return [*index[:-1], arith.AddIOp(index[-1], const(k)).result] if k else list(index)


def load(window: Window, operand, index, lanes: int, whole: bool):
    """`lanes` elements of `operand` at body vector `index`: one aligned vector load where the operand
    has the row's phase (`whole`: its elements may be read as a vector), else a load per lane."""
    element = ir.MemRefType(operand.type).element_type
    t = ir.VectorType.get([lanes], element)
    if whole and _aligned(window, operand, index):
        return vector.LoadOp(t, operand, index, alignment=min(16, lanes * element_bytes(element))).result
    return vector.FromElementsOp(t, [memref.LoadOp(operand, _lane_index(index, k)).result
                                     for k in range(lanes)]).result


def store(window: Window, value, operand, index, whole: bool) -> None:
    """`value` (a vector) into `operand` at body vector `index`: one aligned vector store where the
    operand has the row's phase, else a store per lane."""
    lanes = ir.VectorType(value.type).shape[0]
    element = ir.MemRefType(operand.type).element_type
    if whole and _aligned(window, operand, index):
        vector.StoreOp(value, operand, index, alignment=min(16, lanes * element_bytes(element)))
        return
    for k in range(lanes):
        memref.StoreOp(vector.ExtractOp(value, [], [k]).result, operand, _lane_index(index, k))
