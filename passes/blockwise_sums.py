"""--fusec-blockwise-sums: sum long float reductions in blocks (the cpu target), and split sums into few
outputs into two kernels (the cuda target).

The cpu target. A `linalg.generic` sum lowered as written (`convert-linalg-to-loops`) folds every
element into one accumulator, one after the other, and its rounding grows with the length of that
chain: the mean of x**2 over 512x1024 was off by 1.5e-4 relative on the cpu target (eager sums in
cascades and is not), so `fusec run --target cpu` failed its own check. This pass splits a float sum
that folds more than `block` (4096) elements into two: the first keeps only the innermost reduced dim
(at most `block` elements: a longer one is first reshaped into [n / b, b], b the largest divisor of n
up to `block`) and writes one partial sum per value of the other reduced dims; the second sums the
partials into the original output (from its initial value) and is split again if it is still long.
Each chain is then at most `block` adds (rows of up to 4096, the bench suite's, are left as they
were: 4096 adds round by ~4e-6 relative, within `fusec run`'s 1e-5).

The cuda target (`few-outputs`, `final-block`; the `split_sums` knob, 1024). The GPU sums in blocks of
its own (codegen/row_loop.py), but a row schedule gives each output one thread block, so a sum into
one output (a loss, `x.pow(2).mean()`) ran in one block of 256 threads over the whole tensor. Before
fusion, a sum into fewer than `few-outputs` outputs is split the same way, so that the partials are
many rows (32768 rows of 4096 for a 32768x4096 mean, fused with what they sum) and the sum of up
to `final-block` (65536) partials is a second, small kernel. A sum of at most 16384 elements (a
loss over the rows of a batch) is left to one block. A row with no divisor is kept whole as
the partials' rows up to `final-block`. Sums that a normalization reads back over their rows (softmax's
division, RMSNorm's scale: one row kernel does both) are left alone unless they have one output. A
reshaped operand made by a pointwise generic is not given a tensor.expand_shape (a fusion boundary):
the generic is rebuilt over the split dim, up to the model's inputs (copied when others read it).

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
`addf(element, accumulator)` are left alone, as are reduced dims with no divisor in [block / 8, block]
(on cuda: longer than final-block). Not split yet: max/min reductions, and normalizations of a few
long rows (their max and their read-back), which stay one block per row.
"""

from __future__ import annotations

import math

from fusec.codegen.kernel import attributes
from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from .classify_ops import indexing_maps, iterator_kinds, loop_ranges, sum_of_exp_with_max

FLAG = "fusec-blockwise-sums"
SUMMARY = "Split long float sums into sums of blocks of at most `block` elements"
OPTIONS = {"block": (4096, "the most elements one chain of adds folds"),
           "few-outputs": (0, "split only sums with fewer outputs than this (0: every long sum)"),
           "final-block": (0, "the most elements a sum of partials folds unsplit (0: block)"),
           "online-sums": (0, "leave whole the sums of exp(x - c) whose x a max reduces too (1: the online "
                                  "pass is on)")}

_TAGS = ("fusec.group", "fusec.group_kind")


# cuda: a sum of at most this many elements stays one kernel (one block of 1024 threads, 16 loads
# each): split, cross-entropy's mean over 8192 rows was four kernels (the count of its targets and
# the sum of its losses could no longer share one).
_ONE_BLOCK = 16 * 1024


def run(module_op, pass_, block: int, few_outputs: int = 0, final_block: int = 0, online_sums: int = 0) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    limits = _Limits(block, few_outputs, final_block or block, bool(online_sums))
    for op in ops:
        _split(op, limits)


class _Limits:
    """block: the longest chain of adds; few_outputs: a sum with this many outputs or more is left
    alone (0: none is); final: how long a sum of partials may be before it is split again; online:
    sums of exp(x - c) with a max of x are left whole (the online pass computes the pair)."""

    def __init__(self, block: int, few_outputs: int, final: int, online: bool = False):
        self.block, self.few_outputs, self.final, self.online = block, few_outputs, final, online


def _sum_combiner(op):
    """The body's addf when the body is a sum into its accumulator (`addf(x, acc)`), else None."""
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    combiner = getattr(yielded.owner, "operation", None) if isinstance(yielded, ir.OpResult) else None
    if combiner is None or combiner.name != "arith.addf":
        return None
    acc = block.arguments[len(block.arguments) - 1]
    return combiner if acc in list(combiner.operands) and isinstance(acc.type, ir.FloatType) else None


def _read_back(result, outputs: int) -> bool:
    """Whether the sum feeds, through ops of its own size, an op over a larger space: a normalization
    (softmax's division, RMSNorm's scale) whose one kernel reads the row again after its sum. Those
    are left to the row schedules (cuda's few-outputs mode splits plain sums: losses, norms; and a
    whole tensor's sum even so: `x - x.mean()` in one kernel is one block)."""
    seen, todo = set(), [result]
    while todo:
        value = todo.pop()
        for use in value.uses:
            user = use.owner
            if user.name in ("tensor.expand_shape", "tensor.collapse_shape"):
                todo.append(user.results[0])
                continue
            if user.name != "linalg.generic":
                continue
            ranges = loop_ranges(user)
            if ranges is None or math.prod(ranges) > outputs:
                return True
            for r in user.results:
                if r not in seen:
                    seen.add(r)
                    todo.append(r)
    return False


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


def _split_dim(op, maps, iters, ranges, d: int, b: int, stale: list):
    """Loop dim `d` (extent n) as two, [n / b, b]: every input that reads it is reshaped. Returns the
    new (input values, maps, iterators, ranges), or None when an input reads `d` inside an expression.
    Producers rebuilt over the split dim (`_expanded`) are added to `stale`, to be erased with `op`."""
    n_dims = len(ranges)
    reads = []
    for m in maps:
        exprs = list(m.results)
        uses = [p for p, e in enumerate(exprs) if _reads(e, d, n_dims)]
        if uses and not (len(uses) == 1 and _is_dim(exprs[uses[0]], d)):
            return None
        reads.append(uses[0] if uses else None)
    inputs, new_maps = [], []
    for value, m, p in zip(op.operands, maps, reads):
        if p is not None:
            with ir.InsertionPoint(op), op.location:
                value = _expanded(value, p, b, op, stale)
        inputs.append(value)
        new_maps.append(_split_map(m, d, p))
    return (inputs, new_maps, [*iters[:d + 1], "reduction", *iters[d + 1:]],
            [*ranges[:d], ranges[d] // b, b, *ranges[d + 1:]])


def split_operands(op, maps, iters, ranges, d: int, b: int, stale: list):
    """`_split_dim` with `op`'s output operand kept as it is: (operands, maps, iterators, ranges), or
    None. The producers it rebuilt are in `stale`: `erase_stale` them once `op` is gone."""
    split = _split_dim(op, maps, iters, ranges, d, b, stale)
    if not split:
        return None
    inputs, maps, iters, ranges = split
    return [*inputs[:-1], op.operands[len(op.operands) - 1]], maps, iters, ranges


def erase_stale(stale: list) -> None:
    for gen in reversed(stale):  # each read only by the next, the first by the split sum: consumer first
        gen.erase()


def _split_map(m, d: int, p: int | None):
    """Map `m` of a loop nest whose dim d becomes two (d, d + 1); `p`: the result that reads d."""
    n_dims = m.n_dims
    shift = ir.AffineMap.get(n_dims, 0, [ir.AffineDimExpr.get(j if j <= d else j + 1) for j in range(n_dims)])
    exprs = [e.compose(shift) for e in m.results]
    if p is not None:
        exprs[p:p + 1] = [ir.AffineDimExpr.get(d), ir.AffineDimExpr.get(d + 1)]
    return ir.AffineMap.get(n_dims + 1, 0, exprs)


def _expanded(value, p: int, b: int, like, stale: list, owned: bool = True):
    """`value` with its dim p read as [n / b, b]. A pointwise linalg.generic that makes it for this use
    alone is rebuilt over the split dim, reading its own inputs split the same way, so that the split
    reaches the model's inputs and the pointwise chain still fuses with the sum; any other value gets a
    tensor.expand_shape (a view: free for an input of the model, a fusion boundary after an op)."""
    t = ir.RankedTensorType(value.type)
    shape = [*t.shape[:p], t.shape[p] // b, b, *t.shape[p + 1:]]
    rebuilt = _rebuilt_pointwise(value, p, b, shape, like, stale, owned)
    if rebuilt is not None:
        return rebuilt
    groups = [[i] for i in range(p)] + [[p, p + 1]] + [[i + 1] for i in range(p + 1, t.rank)]
    expanded = tensor.ExpandShapeOp(ir.RankedTensorType.get(shape, t.element_type), value,
                                    ir.ArrayAttr.get([ir.ArrayAttr.get(
                                        [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                         for i in g]) for g in groups]), [], shape)
    _tag(expanded.operation, like)
    return expanded.result


def _rebuilt_pointwise(value, p: int, b: int, shape, like, stale: list, owned: bool):
    """The pointwise generic making `value`, rebuilt with its loop dim p split; None if it is not one
    (several results, a reduction, a non-identity output map, a dim read in an expression). One that
    other ops read too is copied for this use, as fusion would recompute it inside each consumer; so is
    one that a kept op reads (`owned` false: the chain above a copied op stays for that op)."""
    owner = value.owner if isinstance(value, ir.OpResult) else None
    gen = getattr(owner, "operation", owner)
    if gen is None or gen.name != "linalg.generic" or len(gen.results) != 1:
        return None
    maps, iters = indexing_maps(gen), iterator_kinds(gen)
    init = gen.operands[len(gen.operands) - 1]
    if any(k != "parallel" for k in iters) or maps[-1] != ir.AffineMap.get_identity(len(iters)) or \
            not isinstance(init, ir.OpResult) or init.owner.name != "tensor.empty" or \
            ir.ShapedType.get_dynamic_size() in shape:
        return None
    reads = []
    for m in maps[:-1]:
        exprs = list(m.results)
        uses = [q for q, e in enumerate(exprs) if _reads(e, p, m.n_dims)]
        if uses and not (len(uses) == 1 and _is_dim(exprs[uses[0]], p)):
            return None
        reads.append(uses[0] if uses else None)
    element = ir.RankedTensorType(value.type).element_type
    owned = owned and len(list(value.uses)) == 1
    with ir.InsertionPoint(gen), gen.location:
        inputs = [v if q is None else _expanded(v, q, b, like, stale, owned)
                  for v, q in zip(list(gen.operands)[:-1], reads)]
        empty = tensor.EmptyOp(shape, element)
        new = ir.Operation.create(
            "linalg.generic", results=[ir.RankedTensorType.get(shape, element)], operands=[*inputs, empty.result],
            attributes={**_kept_attributes(gen), "indexing_maps": _maps_attr(
                [_split_map(m, p, q) for m, q in zip(maps, [*reads, p])]),
                "iterator_types": _iterator_attr(["parallel"] * (len(iters) + 1)),
                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(inputs), 1])},
            regions=1)
        new.regions[0].blocks.append(*[a.type for a in gen.regions[0].blocks[0].arguments])
    if owned:
        _move_body(gen, new)
        stale.append(gen)  # erased once the sum that read it is
    else:
        copy = gen.clone(ir.InsertionPoint(gen))
        _move_body(copy, new)
        copy.erase()
    _tag(empty.operation, like)
    _tag(new, like)
    return new.result


def _reads(expr, d: int, n_dims: int) -> bool:
    """Whether `expr` depends on dim `d` (it changes when d is replaced by 0)."""
    zeroed = [ir.AffineConstantExpr.get(0) if j == d else ir.AffineDimExpr.get(j) for j in range(n_dims)]
    return str(expr.compose(ir.AffineMap.get(n_dims, 0, zeroed))) != str(expr)


def _is_dim(expr, d: int) -> bool:
    e = expr.maybe_downcast()
    return isinstance(e, ir.AffineDimExpr) and e.position == d


def _split(op, limits: _Limits, longest: int | None = None) -> None:
    """Split `op` if it folds more than `longest` (default limits.block) elements into an output."""
    block = limits.block
    if len(op.results) != 1 or _sum_combiner(op) is None:
        return
    maps, iters = indexing_maps(op), iterator_kinds(op)
    ranges = loop_ranges(op)
    reduced = [d for d, kind in enumerate(iters) if kind == "reduction"]
    if ranges is None or not reduced or math.prod(ranges[d] for d in reduced) <= (longest or block):
        return
    outputs = math.prod(ranges[d] for d, kind in enumerate(iters) if kind != "reduction")
    if limits.few_outputs and (outputs >= limits.few_outputs or (outputs > 1 and _read_back(op.results[0], outputs))):
        return
    if limits.few_outputs and outputs * math.prod(ranges[d] for d in reduced) <= _ONE_BLOCK:
        return  # cuda: one block reads it in a few loads a thread (a loss over 8192 rows)
    if limits.few_outputs and limits.online and sum_of_exp_with_max(op):
        return  # cuda: one pass with the row's max (codegen/online_softmax.py), a block a row
    operands = list(op.operands)
    last = reduced[-1]
    stale: list = []
    if ranges[last] > block and (b := _divisor(ranges[last], block)):
        split = split_operands(op, maps, iters, ranges, last, b, stale)
        if not split:
            return
        operands, maps, iters, ranges = split
        reduced = [d for d, kind in enumerate(iters) if kind == "reduction"]
        last = reduced[-1]
    elif ranges[last] > max(block, limits.final):
        return  # no divisor, and too long to be kept whole as the partials' rows
    outer = reduced[:-1]
    if not outer:
        return
    _two_sums(op, operands, maps, iters, ranges, outer, limits)
    erase_stale(stale)


def _two_sums(op, operands, maps, iters, ranges, outer, limits: _Limits) -> None:
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
    replace_by_two_sums(op, [empty.operation, zero.operation, filled.owner, first, second], filled, second)
    _split(second, limits, limits.final)


def replace_by_two_sums(op, new_ops, filled, second) -> None:
    """`op`'s uses read `second` (the sum of the partials) instead, `op` is erased; the new ops get
    its group tags, and its classification where classify-ops ran (`filled`, the partials' zeros)."""
    for new_op in new_ops:
        _tag(new_op, op)
    if "fusec.kind" in op.attributes:
        filled.owner.attributes["fusec.kind"] = ir.StringAttr.get("fill", op.context)
        second.attributes["fusec.kind"] = op.attributes["fusec.kind"]
    op.results[0].replace_all_uses_with(second.result)
    op.erase()


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
