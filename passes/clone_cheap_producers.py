"""--fusec-clone-cheap-producers: a cheap pointwise op of the function's inputs, read by several ops,
gets one copy per reader, so that each reader's kernel computes it from the inputs.

Fusion groups are disjoint: an op read by two kernels is computed by one and written to memory for
the other (fusion rule 5, materialize), and the second kernel then depends on the first.
`F.cross_entropy(x, t)` compares the targets with its ignore index once (`t != -100`) and reads the
mask three times: to pick the target's logit (in the kernel of the row reductions), to zero the
ignored losses, and to count the targets it averages over (a sum over all rows). With one mask, the
count's kernel wrote it, the row kernel read it, and the mean's sum (which must follow the row kernel)
could not share the count's kernel: three kernels. With a copy per reader, the row kernel and the
count compute the mask from `t` themselves and the count and the sum of the losses become one kernel.

Only values that some reader reduces whole (over every dim: a count, a sum of losses) are copied:
that reader is a kernel of its own, after the others, whereas readers that reduce rows share their
rows' kernel with the op anyway (a LayerNorm's mean and variance read one cast of the input, which
their kernel's evaluator computes once). Values whose readers loop over different extents are
copied too: those readers cannot share a kernel (rule 1), and the value was a kernel of its own that
wrote it for both. Llama's rotary tables in bf16 are such values: the cast of cos (and of sin) to
fp32, [1, 1, seq, dim], read by q's product [batch, heads, seq, dim] and by k's [batch, kv heads,
seq, dim] (GQA: fewer heads), was a third kernel beside q's and k's. A copy costs its reader the op's arithmetic (at most `_CHEAP` body ops) and the reads of its
inputs, which a materialized value would cost anyway (it is read back from memory instead), and saves
the write. Only ops whose operands are all function arguments or constants are copied: an op of
computed values would make its readers recompute those too. Runs after `cse` (which would merge the
copies again) and before --fusec-classify-ops.

Before:
    %m = linalg.generic ... ins(%t : tensor<64xi64>) { arith.cmpi ne, %in, %c-100 }
    %a = linalg.generic ... ins(%m, %t ...)
    %b = linalg.generic ... ins(%m ...)
After:
    %m = linalg.generic ... ins(%t : tensor<64xi64>) { arith.cmpi ne, %in, %c-100 }
    %m1 = linalg.generic ... ins(%t : tensor<64xi64>) { arith.cmpi ne, %in, %c-100 }
    %a = linalg.generic ... ins(%m, %t ...)
    %b = linalg.generic ... ins(%m1 ...)
"""

from __future__ import annotations

from fusec.mlir import ir

from .classify_ops import body_cost, iterator_kinds, loop_ranges

FLAG = "fusec-clone-cheap-producers"
SUMMARY = "Give each reader its own copy of a cheap pointwise op of the function's inputs"

_CHEAP = 2  # body ops (transcendentals count 4: never copied)
_MAX_READERS = 4


def _of_inputs(op) -> bool:
    """Every operand is a function argument, a constant or an empty tensor (the output's)."""
    for v in op.operands:
        if isinstance(v.owner, ir.Block):
            if v.owner.owner.operation.name != "func.func":
                return False
        elif v.owner.operation.name not in ("arith.constant", "tensor.empty"):
            return False
    return True


def _clonable(op) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.regions[0].blocks[0].arguments) > 3:
        return False
    if not all(k == "parallel" for k in iterator_kinds(op)) or body_cost(op) > _CHEAP:
        return False
    if any(inner.name in ("tensor.extract", "linalg.index") for inner in op.regions[0].blocks[0].operations):
        return False
    readers = [u.owner for u in op.results[0].uses]
    if not 1 < len(readers) <= _MAX_READERS or not all(r.operation.name == "linalg.generic" for r in readers):
        return False
    # A reader that reduces the value whole (a count, a loss's sum) is a kernel after the others; the
    # others' readers share a kernel anyway (a LayerNorm's mean and variance read one cast).
    whole = any(all(k == "reduction" for k in iterator_kinds(r)) for r in readers)
    apart = len({tuple(loop_ranges(r) or ()) for r in readers}) > 1  # loops of other extents: other kernels
    return (whole or apart) and _of_inputs(op)


def run(module_op, pass_) -> None:
    found = []
    module_op.walk(lambda op: (found.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in found:
        if not _clonable(op):
            continue
        for use in list(op.results[0].uses)[1:]:
            copy = op.operation.clone(ir.InsertionPoint(op.operation))
            use.owner.operands[use.operand_number] = copy.results[0]
