"""--fusec-scans-to-generic: a running scan (`torch.cumsum`, torch-mlir's `tm_tensor.scan`) as a
linalg.generic that the rest of fusec reads like any other linalg op.

An inclusive scan along dim s is a loop nest whose innermost loop walks s in order, carrying the
running value: for every other index p, `acc[p] = combine(acc[p], x[p, j]); out[p, j] = acc[p]`.
That is exactly a linalg.generic with the other dims as parallel loops (outermost) and s as the one
"reduction" loop (innermost), with two outputs: the scan's result, written at every (p, j), and the
carried value `acc`, indexed by p alone and filled with the combiner's identity. Run as loops
(`convert-linalg-to-loops`, or parallel loops with the scan loop sequential inside them) this is the
scan, element for element in the order eager adds them. The op is marked `fusec.scan`: passes that
rewrite reductions (blocked sums, column splits) leave it alone, and `--fusec-classify-ops` calls it
a scan (`codegen.scan` builds its kernel; FUSEC_DEBUG names why a group is left to loops).

Only inclusive scans whose accumulator starts at the combiner's identity (what `aten.cumsum` gives:
a `linalg.fill` of 0) are rewritten; any other `tm_tensor.scan` is left, and fusec names its ATen op
as one it cannot compile.

Before:
    %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    %r:2 = tm_tensor.scan dimension(1) inclusive(true) ins(%x : tensor<64x1000xf32>)
             outs(%out, %acc0 : tensor<64x1000xf32>, tensor<64xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      tm_tensor.yield %s : f32
    }
After:
    %r:2 = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, d1), (d0, d1) -> (d0)],
                           iterator_types = ["parallel", "reduction"]}
             ins(%x) outs(%empty, %acc0) attrs = {fusec.scan} {
    ^bb0(%in: f32, %o: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s, %s : f32, f32
    }
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, linalg

from fusec.codegen.kernel import attributes

from .classify_ops import SCAN_ATTR
from .fold_layout_ops import iterator_attr, maps_attr

FLAG = "fusec-scans-to-generic"
SUMMARY = "Rewrite an inclusive tm_tensor.scan (cumsum) as a linalg.generic marked fusec.scan"

# The combiners a scan may have, and the value each starts from (what folding into changes nothing).
IDENTITIES = {"arith.addf": 0.0, "arith.addi": 0, "arith.mulf": 1.0, "arith.muli": 1}


def _combiner(op):
    """The scan body's one combining op, reading both block arguments, or None."""
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    if len(ops) != 2 or ops[0].name not in IDENTITIES or ops[1].operands[0] != ops[0].results[0]:
        return None
    if {v for v in ops[0].operands} != set(block.arguments):
        return None
    return ops[0]


def constant_of(scalar):
    """The number a scalar `arith.constant` holds, or None (for any other value)."""
    if isinstance(scalar.owner, ir.Block) or scalar.owner.name != "arith.constant":
        return None
    attr = scalar.owner.attributes["value"]
    return ir.FloatAttr(attr).value if isinstance(scalar.type, ir.FloatType) else ir.IntegerAttr(attr).value


def _fill_value(value):
    """The constant a `linalg.fill` result holds, or None."""
    if isinstance(value.owner, ir.Block) or value.owner.name != "linalg.fill":
        return None
    return constant_of(value.owner.operands[0])


def _dynamic_sizes(value) -> list:
    """`value`'s dynamic sizes, as a `tensor.empty` of its type takes them."""
    t = ir.RankedTensorType(value.type)
    sizes = []
    for d in range(t.rank):
        if ir.ShapedType.is_dynamic_size(t.shape[d]):
            index = ir.Operation.create("arith.constant", results=[ir.IndexType.get()],
                                        attributes={"value": ir.IntegerAttr.get(ir.IndexType.get(), d)}).result
            sizes.append(ir.Operation.create("tensor.dim", results=[ir.IndexType.get()], operands=[value, index]).result)
    return sizes


def _rewrite(op) -> None:
    if not ir.BoolAttr(op.attributes["inclusive"]).value or len(op.operands) != 3:
        return
    comb = _combiner(op)
    source, out, acc = op.operands
    if comb is None or _fill_value(acc) != IDENTITIES[comb.name]:
        return
    rank = ir.RankedTensorType(out.type).rank
    dim = int(ir.IntegerAttr(op.attributes["dimension"]).value)
    order = [d for d in range(rank) if d != dim] + [dim]  # loop k walks tensor dim order[k]
    full = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(order.index(t)) for t in range(rank)])
    along = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(k) for k in range(rank - 1)])
    element = ir.RankedTensorType(out.type).element_type
    # A 16-bit float scan carries its running value in f32, as eager's cumsum does (its acc_type):
    # rounding every step to bf16 would lose the sum of a long row.
    carried = ir.F32Type.get() if isinstance(element, ir.FloatType) and element.width < 32 else element
    if carried != element and len(list(op.results[1].uses)):
        return  # (cumsum never reads the scan's final accumulator)
    with ir.InsertionPoint(op), op.location:
        # Every element of the result is written, none read first: its init need not be filled.
        empty = ir.Operation.create("tensor.empty", results=[out.type], operands=_dynamic_sizes(out)).result
        if carried != element:
            acc = _filled_like(acc, carried, IDENTITIES[comb.name])
        new = ir.Operation.create(
            "linalg.generic", results=[out.type, acc.type], operands=[source, empty, acc],
            attributes={"indexing_maps": maps_attr([full, full, along]),
                        "iterator_types": iterator_attr(["parallel"] * (rank - 1) + ["reduction"]),
                        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 2]),
                        SCAN_ATTR: ir.UnitAttr.get()},
            regions=1)
        body = new.regions[0].blocks.append(element, element, carried)
        with ir.InsertionPoint(body):
            x = body.arguments[0] if carried == element else arith.ExtFOp(carried, body.arguments[0]).result
            old = op.regions[0].blocks[0].arguments  # (the running value, the element), as tm_tensor reads them
            mapping = {old[0]: body.arguments[2], old[1]: x}
            combined = ir.Operation.create(comb.name, results=[carried],
                                           operands=[mapping[v] for v in comb.operands],
                                           attributes=attributes(comb)).result
            result = combined if carried == element else arith.TruncFOp(element, combined).result
            linalg.YieldOp([result, combined])
    op.results[0].replace_all_uses_with(new.results[0])
    op.results[1].replace_all_uses_with(new.results[1])  # unused where it is of another type (checked)
    op.erase()


def _filled_like(acc, element, value):
    """A new tensor of `acc`'s shape and `element` type, filled with `value`."""
    t = ir.RankedTensorType(acc.type)
    empty = ir.Operation.create("tensor.empty", results=[ir.RankedTensorType.get(t.shape, element)],
                                operands=_dynamic_sizes(acc)).result
    scalar = arith.ConstantOp(element, value).result
    return linalg.fill(scalar, outs=[empty])


def run(module_op, pass_) -> None:
    scans = []
    module_op.walk(lambda op: (scans.append(op) if op.name == "tm_tensor.scan" else None) or ir.WalkResult.ADVANCE)
    for op in scans:
        _rewrite(op)
