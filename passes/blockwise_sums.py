"""--fusec-blockwise-sums: sum long float reductions in blocks (the cpu target).

A `linalg.generic` sum lowered as written (`convert-linalg-to-loops`) folds every element into one
accumulator, one after the other, and its rounding grows with the length of that chain: the mean of
x**2 over 512x1024 was off by 1.5e-4 relative on the cpu target (eager sums in cascades and is
not), so `fusec run --target cpu` failed its own check. This pass splits a float sum that folds more
than `block` (4096) elements into two: the first keeps only the innermost reduced dim (at most `block`
elements: a longer one is first reshaped into [n / b, b], b the largest divisor of n up to `block`)
and writes one partial sum per value of the other reduced dims; the second sums the partials into
the original output (from its initial value) and is split again if it is still long. Each chain is
then at most `block` adds (rows of up to 4096, the bench suite's, are left as they were: 4096 adds round
by ~4e-6 relative, within `fusec run`'s 1e-5). The GPU target sums in blocks of its own (codegen/row_loop.py).

Before (512x1024 -> a scalar):
    %s = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> ()],
                         iterator_types = ["reduction", "reduction"]} ins(%x) outs(%init) {addf}
After:
    %zero = linalg.fill ins(%cst0) outs(tensor.empty() : tensor<512xf32>)
    %p = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0)],
                         iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zero) {addf}
    %s = linalg.generic {indexing_maps = [(d0) -> (d0), (d0) -> ()],
                         iterator_types = ["reduction"]} ins(%p) outs(%init) {addf}

Sums whose reduced extents are dynamic, of several outputs (a variance's tuple), or whose body is not
`addf(element, accumulator)` are left alone, as are reduced dims with no divisor in [block / 8, block].
"""

from __future__ import annotations

import math

from fusec.codegen.kernel import attributes
from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from .classify_ops import indexing_maps, iterator_kinds

FLAG = "fusec-blockwise-sums"
SUMMARY = "Split long float sums into sums of blocks of at most `block` elements (cpu target)"
OPTIONS = {"block": (4096, "the most elements one chain of adds folds")}

_TAGS = ("fusec.group", "fusec.group_kind")


def run(module_op, pass_, block: int) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        _split(op, block)


def _sum_combiner(op):
    """The body's addf when the body is a sum into its accumulator (`addf(x, acc)`), else None."""
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    combiner = getattr(yielded.owner, "operation", None) if isinstance(yielded, ir.OpResult) else None
    if combiner is None or combiner.name != "arith.addf":
        return None
    acc = block.arguments[len(block.arguments) - 1]
    return combiner if acc in list(combiner.operands) and isinstance(acc.type, ir.FloatType) else None


def _ranges(op, maps) -> list | None:
    """Each loop dim's extent, from the operands it indexes; None when one is dynamic or unknown."""
    ranges = [None] * maps[0].n_dims
    for value, m in zip(op.operands, maps):
        shape = ir.RankedTensorType(value.type).shape
        for pos, expr in enumerate(m.results):
            if isinstance(expr.maybe_downcast(), ir.AffineDimExpr):
                ranges[ir.AffineDimExpr(expr).position] = shape[pos]
    dynamic = ir.ShapedType.get_dynamic_size()
    return None if None in ranges or dynamic in ranges else ranges


def _divisor(n: int, block: int) -> int | None:
    return next((b for b in range(block, max(1, block // 8) - 1, -1) if n % b == 0), None)


def _tag(new_op, like) -> None:
    for name in _TAGS:
        if name in like.attributes:
            new_op.attributes[name] = like.attributes[name]


def _iterator_attr(kinds) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def _maps_attr(maps) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _split_dim(op, maps, iters, ranges, d: int, b: int):
    """Loop dim `d` (extent n) as two, [n / b, b]: every input that reads it is reshaped. Returns the
    new (input values, maps, iterators, ranges), or None when an input reads `d` inside an expression."""
    n_dims = len(ranges)
    shift = [ir.AffineDimExpr.get(j if j <= d else j + 1) for j in range(n_dims)]
    inputs, new_maps = [], []
    for value, m in zip(op.operands, maps):
        exprs = list(m.results)
        uses = [p for p, e in enumerate(exprs) if _reads(e, d, n_dims)]
        if uses and not (len(uses) == 1 and _is_dim(exprs[uses[0]], d)):
            return None
        if uses:
            p = uses[0]
            t = ir.RankedTensorType(value.type)
            shape = [*t.shape[:p], ranges[d] // b, b, *t.shape[p + 1:]]
            groups = [[i] for i in range(p)] + [[p, p + 1]] + [[i + 1] for i in range(p + 1, t.rank)]
            with ir.InsertionPoint(op), op.location:
                expanded = tensor.ExpandShapeOp(ir.RankedTensorType.get(shape, t.element_type), value,
                                                ir.ArrayAttr.get([ir.ArrayAttr.get(
                                                    [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                                     for i in g]) for g in groups]), [], shape)
            _tag(expanded.operation, op)
            value = expanded.result
            results = [e.compose(ir.AffineMap.get(n_dims, 0, shift)) for e in exprs[:p]] + [
                ir.AffineDimExpr.get(d), ir.AffineDimExpr.get(d + 1)] + [
                e.compose(ir.AffineMap.get(n_dims, 0, shift)) for e in exprs[p + 1:]]
        else:
            results = [e.compose(ir.AffineMap.get(n_dims, 0, shift)) for e in exprs]
        inputs.append(value)
        new_maps.append(ir.AffineMap.get(n_dims + 1, 0, results))
    return (inputs, new_maps, [*iters[:d + 1], "reduction", *iters[d + 1:]],
            [*ranges[:d], ranges[d] // b, b, *ranges[d + 1:]])


def _reads(expr, d: int, n_dims: int) -> bool:
    """Whether `expr` depends on dim `d` (it changes when d is replaced by 0)."""
    zeroed = [ir.AffineConstantExpr.get(0) if j == d else ir.AffineDimExpr.get(j) for j in range(n_dims)]
    return str(expr.compose(ir.AffineMap.get(n_dims, 0, zeroed))) != str(expr)


def _is_dim(expr, d: int) -> bool:
    e = expr.maybe_downcast()
    return isinstance(e, ir.AffineDimExpr) and e.position == d


def _split(op, block: int) -> None:
    if len(op.results) != 1 or _sum_combiner(op) is None:
        return
    maps, iters = indexing_maps(op), iterator_kinds(op)
    ranges = _ranges(op, maps)
    reduced = [d for d, kind in enumerate(iters) if kind == "reduction"]
    if ranges is None or not reduced or math.prod(ranges[d] for d in reduced) <= block:
        return
    operands = list(op.operands)
    last = reduced[-1]
    if ranges[last] > block:
        b = _divisor(ranges[last], block)
        split = b and _split_dim(op, maps, iters, ranges, last, b)
        if not split:
            return
        inputs, maps, iters, ranges = split
        operands = [*inputs[:-1], operands[-1]]
        reduced = [d for d, kind in enumerate(iters) if kind == "reduction"]
        last = reduced[-1]
    outer = reduced[:-1]
    if not outer:
        return
    _two_sums(op, operands, maps, iters, ranges, outer, block)


def _two_sums(op, operands, maps, iters, ranges, outer, block: int) -> None:
    """`op` as a sum into partials (the `outer` reduced dims made parallel), then a sum of them."""
    init = operands[-1]
    init_type = ir.RankedTensorType(init.type)
    element = init_type.element_type
    out_map = maps[-1]
    n_dims = len(ranges)
    with ir.InsertionPoint(op), op.location:
        partial_type = ir.RankedTensorType.get([*init_type.shape, *(ranges[d] for d in outer)], element)
        empty = tensor.EmptyOp(partial_type.shape, element)
        zero = arith.ConstantOp(element, ir.FloatAttr.get(element, 0.0))
        filled = linalg.fill(zero.result, outs=[empty.result])
        partial_map = ir.AffineMap.get(n_dims, 0, [*out_map.results, *(ir.AffineDimExpr.get(d) for d in outer)])
        first = ir.Operation.create(
            "linalg.generic", results=[partial_type], operands=[*operands[:-1], filled],
            attributes={**_kept_attributes(op), "indexing_maps": _maps_attr([*maps[:-1], partial_map]),
                        "iterator_types": _iterator_attr(["parallel" if d in outer else k
                                                          for d, k in enumerate(iters)]),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(operands) - 1, 1])},
            regions=1)
        first.regions[0].blocks.append(*[a.type for a in op.regions[0].blocks[0].arguments])
        _move_body(op, first)
        rank, extra = init_type.rank, len(outer)
        second = _sum_of_partials(op, first.result, init, rank, extra)
    for new_op in (empty.operation, zero.operation, filled.owner, first, second):
        _tag(new_op, op)
    if "fusec.kind" in op.attributes:
        filled.owner.attributes["fusec.kind"] = ir.StringAttr.get("fill", op.context)
        second.attributes["fusec.kind"] = op.attributes["fusec.kind"]
    op.results[0].replace_all_uses_with(second.result)
    op.erase()
    _split(second, block)


def _kept_attributes(op) -> dict:
    skip = {"indexing_maps", "iterator_types", "operandSegmentSizes", "fusec.reduced_dims"}
    return {name: attr for name, attr in attributes(op).items() if name not in skip}


def _move_body(old, new) -> None:
    source = old.regions[0].blocks[0]
    target = new.regions[0].blocks[0]
    for a, b in zip(source.arguments, target.arguments):
        a.replace_all_uses_with(b)
    for inner in list(source.operations):
        target.append(inner)


def _sum_of_partials(op, partials, init, rank: int, extra: int):
    element = ir.RankedTensorType(init.type).element_type
    n_dims = rank + extra
    identity = ir.AffineMap.get_identity(n_dims)
    out = ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(d) for d in range(rank)])
    second = ir.Operation.create(
        "linalg.generic", results=[init.type], operands=[partials, init],
        attributes={"indexing_maps": _maps_attr([identity, out]),
                    "iterator_types": _iterator_attr(["parallel"] * rank + ["reduction"] * extra),
                    "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
        regions=1)
    body = second.regions[0].blocks.append(element, element)
    with ir.InsertionPoint(body):
        total = arith.AddFOp(body.arguments[0], body.arguments[1])
        linalg.YieldOp([total.result])
    return second
