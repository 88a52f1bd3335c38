"""--fusec-split-column-sums: split a float sum over outer dims (a column sum) into partial column
sums over blocks of rows, then their sum (the cuda target, before fusion).

A column sum reduces dims outside the innermost one and keeps the innermost: `x.sum(0)` of
[R, C], a bias gradient `g.sum(dim=(0, 1))` of [B, T, C]. The GPU's column schedule
(codegen/columns.py) gives each thread one vector of adjacent columns and has it sum down the
rows, so a warp's loads are contiguous; but that is only C / lanes threads (1024 for 4096 fp32
columns), far too few to keep an H200's memory busy. This pass splits the innermost reduced dim R
into [R / b, b] (b a divisor of R) and the sum into two: the first writes partial column sums
[R / b, C] (each thread of its kernel sums b rows of its column vector: R / b * C / lanes threads),
the second sums the R / b partials into the original output, from its initial value; the second
is split again if it is still a long column sum. No atomics: the order of every add is fixed.

Algorithm (a linalg.generic whose body is `addf(x, acc)` on floats, one result, static extents):
  1. it is a column sum: its output's innermost index is a parallel loop dim `c`, every input that
     reads a reduced dim reads `c` as its own innermost dim, and its sum is not read back over a
     larger space (a column normalization: `x - x.mean(0)`, left as it was);
  2. N, the reduced extents' product, is at least `min-rows` (with sliced column kernels 512: fewer
     rows are one column kernel, its blocks' slices splitting them), and its kernel would have
     fewer than `threads` column vectors (C / lanes, lanes 4 where C allows);
  3. b is the largest divisor of the innermost reduced extent in [min-block, N * C / lanes *
     slices / threads] (`slices`: the threads the column schedule gives each output vector, 1 by
     default, 32 when its `column_slices` heuristic is on, slices of a block each summing every
     32nd row: enough threads with blocks as long as that allows, so few partials), else the
     smallest divisor of at least `min-block` up to 4 * min-block; with none, or more than R, and
     other reduced dims outside it, the whole dim is the block (b = R: only the outer reduced dims
     become the partials');
  4. the sum is split as --fusec-blockwise-sums splits one (its helpers: a pointwise producer of
     the split operand is rebuilt over [R / b, b], so it still fuses with the partial sum), but the
     partials are laid out [outer reduced dims..., output dims...]: the columns stay innermost, and
     the sum of the partials is again a column sum (steps 1-4 again; several outer dims are first
     collapsed into one, a view: [B, T / b, C] -> [B * T / b, C]).

Before (32768x4096 -> 4096; 4096 / 4 = 1024 threads):
    %s = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1)],
                         iterator_types = ["reduction", "parallel"]} ins(%x) outs(%init) {addf}
After (slices 1: b = 64: 512 x 1024 threads, then 16 x 1024, then 1024 summing 16 each):
    %e = tensor.expand_shape %x [[0, 1], [2]] : tensor<32768x4096xf32> into tensor<512x64x4096xf32>
    %p = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d0, d1, d2), (d0, d1, d2) -> (d0, d2)],
                         iterator_types = ["parallel", "reduction", "parallel"]} ins(%e) outs(%zero) {addf}
    %e2 = tensor.expand_shape %p [[0, 1], [2]] : tensor<512x4096xf32> into tensor<16x32x4096xf32>
    %p2 = linalg.generic ... ins(%e2) outs(%zero2 : tensor<16x4096xf32>) {addf}
    %s = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d1)],
                         iterator_types = ["reduction", "parallel"]} ins(%p2) outs(%init) {addf}
With slices=32 min-rows=512: b = 2048 (16 x 1024 vectors, 32 slices each), then the 16 partials'
sum, two kernels.

Left alone: row sums (the innermost dim reduced) and sums of a whole tensor, which
--fusec-blockwise-sums (run after this pass) splits when they have few outputs, as it does the column
sums this pass leaves (too few rows, no divisor); max/min, integer sums, dynamic extents.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from .blockwise_sums import (_iterator_attr, _kept_attributes, _maps_attr, _move_body, _read_back,
                             _sum_combiner, erase_stale, replace_by_two_sums,
                             split_operands)
from .classify_ops import indexing_maps, iterator_kinds, loop_ranges

FLAG = "fusec-split-column-sums"
SUMMARY = "Split column sums (over outer dims) into partial column sums over blocks of rows, then their sum"
OPTIONS = {"threads": (264 * 1024, "split a column sum whose kernel would have fewer threads than this"),
           "min-block": (32, "the fewest rows a thread of the partial sums sums"),
           "min-rows": (128, "column sums of fewer rows than this are one kernel"),
           "slices": (1, "the most threads the column schedule gives an output vector (its `column_slices`: "
                         "32 with the heuristic)")}


def run(module_op, pass_, threads: int, min_block: int, min_rows: int, slices: int) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        _split(op, threads, min_block, min_rows, slices)


def _position(expr):
    e = expr.maybe_downcast()
    return e.position if isinstance(e, ir.AffineDimExpr) else None


def column_dim(maps, iters) -> int | None:
    """The loop dim of a column sum's columns: the output's innermost index, a parallel dim that
    every input reading a reduced dim reads innermost; None when the sum is not over outer dims."""
    reduced = {d for d, k in enumerate(iters) if k == "reduction"}
    out = list(maps[-1].results)
    c = _position(out[-1]) if out else None
    if c is None or c in reduced or not reduced:
        return None
    for m in maps[:-1]:
        results = list(m.results)
        if any(_position(e) is None and not str(e).isdigit() for e in results):
            return None  # an index expression: not a projected permutation
        if reduced & {_position(e) for e in results} and _position(results[-1]) != c:
            return None
    return c


def _block(n: int, target: int, min_block: int) -> int | None:
    """The rows of the innermost reduced dim (extent n) one thread of the partials sums."""
    divisors = [b for b in range(min_block, n + 1) if n % b == 0]
    fitting = [b for b in divisors if b <= target]
    if fitting:
        return fitting[-1]
    near = [b for b in divisors if b <= 4 * min_block]
    return near[0] if near else None


def _split(op, threads: int, min_block: int, min_rows: int, slices: int) -> None:
    if len(op.results) != 1 or _sum_combiner(op) is None:
        return
    maps, iters = indexing_maps(op), iterator_kinds(op)
    ranges = loop_ranges(op)
    c = column_dim(maps, iters) if ranges is not None else None
    if c is None:
        return
    reduced = [d for d, k in enumerate(iters) if k == "reduction"]
    rows = math.prod(ranges[d] for d in reduced)
    outputs = math.prod(r for r, k in zip(ranges, iters) if k != "reduction")
    vectors = outputs // (4 if ranges[c] % 4 == 0 else 1)
    if rows < min_rows or vectors >= threads or _read_back(op.results[0], outputs):
        return
    last = reduced[-1]
    n = ranges[last]
    b = _block(n, max(min_block, rows * vectors * slices // threads), min_block)
    if b is None or b == n:
        if len(reduced) == 1 or n < min_block:
            return
        b = n
    operands = list(op.operands)
    stale: list = []
    if b < n:
        split = split_operands(op, maps, iters, ranges, last, b, stale)
        if not split:
            return
        operands, maps, iters, ranges = split
    reduced = [d for d, k in enumerate(iters) if k == "reduction"]
    second = _two_sums(op, operands, maps, iters, ranges, reduced[:-1])
    erase_stale(stale)
    _split(second, threads, min_block, min_rows, slices)


def _two_sums(op, operands, maps, iters, ranges, outer):
    """`op` as partial sums (the `outer` reduced dims parallel, laid out before the output's dims,
    so the columns stay innermost), then the sum of the partials into `op`'s output."""
    init = operands[-1]
    init_type = ir.RankedTensorType(init.type)
    element = init_type.element_type
    n_dims = len(ranges)
    with ir.InsertionPoint(op), op.location:
        partial_type = ir.RankedTensorType.get([*(ranges[d] for d in outer), *init_type.shape], element)
        empty = tensor.EmptyOp(partial_type.shape, element)
        zero = arith.ConstantOp(element, ir.FloatAttr.get(element, 0.0))
        filled = linalg.fill(zero.result, outs=[empty.result])
        partial_map = ir.AffineMap.get(n_dims, 0, [*(ir.AffineDimExpr.get(d) for d in outer), *maps[-1].results])
        first = ir.Operation.create(
            "linalg.generic", results=[partial_type], operands=[*operands[:-1], filled],
            attributes={**_kept_attributes(op), "indexing_maps": _maps_attr([*maps[:-1], partial_map]),
                        "iterator_types": _iterator_attr(["parallel" if d in outer else k for d, k in enumerate(iters)]),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(operands) - 1, 1])},
            regions=1)
        first.regions[0].blocks.append(*[a.type for a in op.regions[0].blocks[0].arguments])
        _move_body(op, first)
        partials, extra = first.result, len(outer)
        if extra > 1:  # [B, T / b, C] -> [B * T / b, C]: one reduced dim, which the next split can block
            partials = _collapsed_outer(partials, extra)
            extra = 1
        second = _sum_of_partials(partials, init, init_type.rank, extra)
    news = [empty.operation, zero.operation, filled.owner, first, second]
    if partials is not first.result:
        news.append(partials.owner)
    replace_by_two_sums(op, news, filled, second)
    return second


def _collapsed_outer(value, extra: int):
    """`value` with its first `extra` dims collapsed into one (a view of a contiguous buffer)."""
    t = ir.RankedTensorType(value.type)
    shape = [math.prod(t.shape[:extra]), *t.shape[extra:]]
    groups = [list(range(extra))] + [[i] for i in range(extra, t.rank)]
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, t.element_type), value, ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in g]) for g in groups])).result


def _sum_of_partials(partials, init, rank: int, extra: int):
    """partials [extra dims..., init's dims...] summed over the extra dims into `init`."""
    element = ir.RankedTensorType(init.type).element_type
    n_dims = rank + extra
    out = ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(extra + d) for d in range(rank)])
    second = ir.Operation.create(
        "linalg.generic", results=[init.type], operands=[partials, init],
        attributes={"indexing_maps": _maps_attr([ir.AffineMap.get_identity(n_dims), out]),
                    "iterator_types": _iterator_attr(["reduction"] * extra + ["parallel"] * rank),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
        regions=1)
    body = second.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(body):
        linalg.YieldOp([arith.AddFOp(body.arguments[0], body.arguments[1]).result])
    return second
