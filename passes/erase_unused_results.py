"""--fusec-erase-unused-results: drop linalg.generic results nobody uses, with the work behind them.

torch-mlir lowers `max(x, dim)` (which PyTorch's softmax and amax decompositions use) to one
linalg.generic that computes the maximum and its index. When only the maximum is used, the index
is dead work and, worse, makes the op look like an opaque two-output reduction that fusion cannot
take. This pass removes such results: the output operand, its indexing map, its block argument
and every body op whose only purpose was that result.

Before:
    %r:2 = linalg.generic {indexing_maps = [#in, #out, #out], ...} ins(%x) outs(%m0, %i0) {
    ^bb0(%in: f32, %m: f32, %i: i64):
      %idx = linalg.index 1 : index ...   %max = arith.maximumf %in, %m : f32 ...
      linalg.yield %max, %sel : f32, i64
    }                                                   // %r#1 unused
After:
    %r = linalg.generic {indexing_maps = [#in, #out], ...} ins(%x) outs(%m0) {
    ^bb0(%in: f32, %m: f32):
      %max = arith.maximumf %in, %m : f32
      linalg.yield %max : f32
    }
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-erase-unused-results"
SUMMARY = "Drop unused results of linalg.generic ops and the body ops that only fed them"


def _erase_unused(op) -> bool:
    n_in = len(op.opview.inputs)
    n_out = len(op.results)
    dead = [i for i in range(n_out) if not list(op.results[i].uses)]
    if not dead or len(dead) == n_out:
        return False
    block = op.regions[0].blocks[0]
    body = list(block.operations)
    yield_op = body[-1]
    keep_results = [i for i in range(n_out) if i not in dead]
    needed = set()  # body ops the kept results need
    work = [yield_op.operands[i] for i in keep_results]
    while work:
        v = work.pop()
        owner = v.owner
        if not isinstance(owner, ir.Block) and owner.parent == op.operation and owner.operation not in needed:
            needed.add(owner.operation)
            work.extend(owner.operands)
    for inner in body[:-1]:  # ops with regions are never dropped
        if len(inner.regions) and inner.operation not in needed:
            return False
    kept_args = list(range(n_in)) + [n_in + i for i in keep_results]
    for i in dead:  # a kept result that reads a dropped accumulator is not separable
        if any(u.owner.operation in needed for u in block.arguments[n_in + i].uses):
            return False
    maps = list(op.attributes["indexing_maps"])
    attrs = {
        "indexing_maps": ir.ArrayAttr.get([maps[i] for i in kept_args]),
        "iterator_types": op.attributes["iterator_types"],
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([n_in, len(keep_results)]),
    }
    operands = [op.operands[i] for i in kept_args]
    new = ir.Operation.create("linalg.generic", results=[op.results[i].type for i in keep_results],
                              operands=operands, attributes=attrs, regions=1, loc=op.location,
                              ip=ir.InsertionPoint(op))
    new_block = new.regions[0].blocks.append(*[block.arguments[i].type for i in kept_args],
                                             arg_locs=[op.location] * len(kept_args))
    for inner in body[:-1]:
        if inner.operation in needed:
            inner.operation.detach_from_parent()
            new_block.append(inner.operation)
    for new_arg, i in zip(new_block.arguments, kept_args):
        block.arguments[i].replace_all_uses_with(new_arg)
    ir.Operation.create("linalg.yield", operands=[yield_op.operands[i] for i in keep_results],
                        loc=yield_op.location, ip=ir.InsertionPoint(new_block))
    for new_result, i in zip(new.results, keep_results):
        op.results[i].replace_all_uses_with(new_result)
    op.erase()
    return True


def run(module_op, pass_) -> None:
    generics = []
    module_op.walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None)
                   or ir.WalkResult.ADVANCE)
    for op in generics:
        _erase_unused(op)
