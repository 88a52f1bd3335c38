"""A gather whose lanes read one row at a constant stride, as a few aligned vector loads.

A pooling window (--fusec-pooling-to-generic) reads, for a vector of L outputs w0 ... w0 + L - 1,
the input columns `clamp(s * w + c, 0, W - 1)` of one input row: stride s (the pooling's), offset
c (the window's column minus the padding). Read a lane at a time that is L scalar loads per window
column, each with its own clamped 64-bit address: ResNet's 3x3 stem pool took 72 loads for 8 bf16
outputs and ran at the same speed in bf16 as in fp32 (instruction-bound, 31% of copy on an H100).

The L columns lie in a span of s * (L - 1) + 1 elements. With w0 a multiple of L (the flat
schedule's vectors) and W a multiple of L (every row starts on an L-element boundary), that span
starts at s * w0 + c, i.e. at a known offset (c mod L) from the L-aligned column
A = s * w0 + L * floor(c / L), so lane k's element is at the static position (c mod L) + s * k of
the aligned chunks A, A + L, ... . Those chunks are loaded as aligned vectors, once per kernel
phase (the window's columns share them: 9 loads for the 3x3 pool's 8 outputs), and each lane is a
static extract.

Clamped indices keep their meaning exactly, with every load inside the row: a chunk's column is
clamped into [0, W - L]. A lane whose column is below 0 wanted column 0 (its chunk was clamped to
the row's first: position 0 of it), one past the row column W - 1 (position L - 1 of the last);
two selects per lane pick those. Without a clamp the lanes' columns are in the row (else the gather
read out of bounds already), so are their aligned chunks.

Anything else (a dynamic width, a width or start that is not a multiple of L, a row index that
varies over the lanes, a stride above 4; bools, which the caller reads a byte at a time) keeps the
load per lane.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, vector

from .indexing import const, element_bytes, splat_value

__all__ = ["strided_load"]

_MAX_STRIDE = 4


def _affine(v, lane_starts: dict):
    """(base, s, c) where lane k of the index vector `v` is s * (w0 + k) + c, `base` the vector of
    consecutive loop indices w0 + k it is computed from, or None."""
    if v in lane_starts:
        return v, 1, 0
    if not isinstance(v, ir.OpResult) or v.owner.name not in ("arith.addi", "arith.subi", "arith.muli"):
        return None
    name, (a, b) = v.owner.name, v.owner.operands
    if name != "arith.subi" and splat_value(a) is not None:
        a, b = b, a
    k, inner = splat_value(b), _affine(a, lane_starts)
    if k is None or inner is None:
        return None
    base, s, c = inner
    if name == "arith.muli":
        return base, s * k, c * k
    return base, s, c + k if name == "arith.addi" else c - k


def _clamped(v):
    """(x, low, high) where `v` is x clamped into [low, high] (maxsi then minsi, or the other way),
    or (v, None, None)."""
    if isinstance(v, ir.OpResult) and v.owner.name in ("arith.minsi", "arith.maxsi"):
        outer, (a, b) = v.owner.name, v.owner.operands
        inner_name = "arith.maxsi" if outer == "arith.minsi" else "arith.minsi"
        if isinstance(a, ir.OpResult) and a.owner.name == inner_name and splat_value(b) is not None:
            x, k = a.owner.operands
            if splat_value(k) is not None:
                bounds = sorted((splat_value(k), splat_value(b)))
                return x, bounds[0], bounds[1]
    return v, None, None


def strided_load(kernel, buffer, indices, lanes: int):
    """`lanes` elements of `buffer` at `indices` (the last a vector of strided columns) through
    aligned vector loads, or None where the columns are not a strided run of one row."""
    shape = ir.MemRefType(buffer.type).shape
    element = ir.MemRefType(buffer.type).element_type
    width = shape[-1] if shape else -1
    if not indices or any(isinstance(v.type, ir.VectorType) for v in indices[:-1]) or width <= 0 or width % lanes:
        return None
    x, low, high = _clamped(indices[-1])
    if low is not None and (low, high) != (0, width - 1):
        return None
    run = _affine(x, kernel.lane_starts)
    if run is None:
        return None
    base, s, c = run
    w0 = kernel.lane_starts[base]
    if not 1 <= s <= _MAX_STRIDE or w0 in kernel.windows:
        return None
    shift, phase = (c // lanes) * lanes, c % lanes  # A = s * w0 + shift; lane k at phase + s * k
    positions = [phase + s * k for k in range(lanes)]
    chunks = [_chunk(kernel, buffer, indices[:-1], w0, s, shift + j * lanes, lanes, width, element, low is not None)
              for j in range(positions[-1] // lanes + 1)]
    elements = [vector.ExtractOp(chunks[p // lanes], [], [p % lanes]).result for p in positions]
    if low is not None:
        # The lanes that can leave the row: w0 runs over multiples of L in [0, extent - L]; with the
        # extent unknown (dynamic), every lane may go past the row's end.
        extent = kernel.lane_extents.get(base, -1)
        for k, p in enumerate(positions):
            column = s * k + c  # at w0 = 0
            if column < 0:
                elements[k] = _unless(x, k, arith.CmpIPredicate.slt, 0, chunks[p // lanes], 0, elements[k])
            if extent < 0 or s * (extent - lanes) + column >= width:
                elements[k] = _unless(x, k, arith.CmpIPredicate.sge, width, chunks[p // lanes], lanes - 1,
                                      elements[k])
    return vector.FromElementsOp(ir.VectorType.get([lanes], element), elements).result


def _unless(x, k: int, predicate, bound: int, chunk, position: int, element):
    """Lane k's element, or `chunk`'s element at `position` where x[k] `predicate` `bound` (its
    column left the row: the clamp's column is the row's first or last, that chunk's edge)."""
    outside = arith.CmpIOp(predicate, vector.ExtractOp(x, [], [k]).result, const(bound)).result
    return arith.SelectOp(outside, vector.ExtractOp(chunk, [], [position]).result, element).result


def _chunk(kernel, buffer, rows, w0, s: int, offset: int, lanes: int, width: int, element, clamp: bool):
    """The aligned vector at column s * w0 + offset of the row `rows` (clamped into the row), loaded
    once per kernel phase."""
    key = ("strided", buffer, tuple(rows), w0, s, offset, lanes)
    if key not in kernel.cache:
        column = arith.MulIOp(w0, const(s)).result if s > 1 else w0
        if offset:
            column = arith.AddIOp(column, const(offset)).result
        if clamp:
            column = arith.MinSIOp(arith.MaxSIOp(column, const(0)).result, const(width - lanes)).result
        kernel.cache[key] = vector.LoadOp(ir.VectorType.get([lanes], element), buffer, [*rows, column],
                                          alignment=min(16, lanes * element_bytes(element))).result
    return kernel.cache[key]
