"""--fusec-classify-ops: label every linalg op with what kind of computation it is.

Kinds (attribute `fusec.kind`), as the fusion rules use them:
  pointwise    all loops parallel, every operand read at the output's own index (a permutation)
  broadcast    all loops parallel, some operand read at fewer dims (`(d0, d1) -> (d1)`); or read
               through an index map such as `d1 + 64` or `(d1 - 32) mod 32` (a slice, a cat:
               --fusec-fold-layout-ops, --fusec-concat-to-generic, whose body reads `linalg.index`);
               or a gather: a body that reads a tensor at indices computed from data (an embedding)
  fill         `linalg.fill`: a constant, the initial value of a reduction
  reduction    some loops are reductions (`fusec.reduced_dims` lists them), not a contraction
  contraction  a reduction of products of two operands (matmul and friends)
  scan         a running sum or product (cumsum: --fusec-scans-to-generic, marked `fusec.scan`)
  opaque       anything else: reductions whose body reads `linalg.index` or that read through index
               maps, reductions that gather, ops with regions in the
               body. An all-parallel op may read its loop indices: an iota computed where it is read
               (--fusec-inline-iotas) when the rest of its body is arithmetic, or a cat's piece pick

Example:
    %1 = linalg.generic {iterator_types = ["parallel", "reduction"], ...}
  becomes
    %1 = linalg.generic {..., fusec.kind = "reduction", fusec.reduced_dims = [1]}
"""

from __future__ import annotations

import dataclasses

from fusec.mlir import ir

FLAG = "fusec-classify-ops"
SUMMARY = "Label linalg ops as pointwise, broadcast, fill, reduction, contraction or opaque"

_CONTRACTIONS = {"linalg.matmul", "linalg.batch_matmul", "linalg.matvec", "linalg.vecmat", "linalg.dot",
                 "linalg.batch_matvec", "linalg.batch_reduce_matmul", "linalg.contract",
                 "linalg.batch_matmul_transpose_a", "linalg.batch_matmul_transpose_b",
                 "linalg.matmul_transpose_a", "linalg.matmul_transpose_b"}
_COMBINERS = {"arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf",
              "arith.minnumf", "arith.addi", "arith.muli", "arith.maxsi", "arith.minsi", "arith.maxui",
              "arith.minui", "arith.ori", "arith.andi", "arith.xori"}
_EXPENSIVE = ("math.", "arith.divf", "arith.remf")
_GATHER_READS = ("tensor.extract", "memref.load")  # a gather's read, on tensors and on buffers


@dataclasses.dataclass
class Classification:
    kind: str
    reduced_dims: tuple = ()  # reductions: the reduced loop dims
    row_template: bool = True  # reductions: one output, a known combiner: fits the row schedule
    cost: int = 0
    reason: str = ""
    reduced_axes: tuple = ()  # reductions: the reduced dims of the input tensor


SCAN_ATTR = "fusec.scan"  # a running scan, as --fusec-scans-to-generic writes it


def is_scan(op) -> bool:
    """Whether `op` is a scan (--fusec-scans-to-generic): its one "reduction" loop runs in order,
    carrying a value, and writes every step; passes that rewrite reductions leave it alone."""
    return SCAN_ATTR in op.attributes


def _scan_axis(op) -> int:
    """The dim of its output a scan walks (its last loop's)."""
    out = indexing_maps(op)[len(op.opview.inputs)]
    return [str(e) for e in out.results].index(f"d{out.n_dims - 1}")


def indexing_maps(op) -> list:
    return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]


def loop_ranges(op) -> list | None:
    """Each loop dim's extent, from the operands it indexes; None when one is dynamic or unknown."""
    maps = indexing_maps(op)
    ranges = [None] * maps[0].n_dims
    for value, m in zip(op.operands, maps):
        shape = ir.RankedTensorType(value.type).shape
        for pos, expr in enumerate(m.results):
            if isinstance(expr.maybe_downcast(), ir.AffineDimExpr):
                ranges[ir.AffineDimExpr(expr).position] = shape[pos]
    dynamic = ir.ShapedType.get_dynamic_size()
    return None if None in ranges or dynamic in ranges else ranges


def iterator_kinds(op) -> list[str]:
    """Each loop's kind, "parallel" or "reduction" (other passes read it too)."""
    return [str(a).rsplit("<", 1)[-1].rstrip(">") for a in op.attributes["iterator_types"]]


def _body_ops(op) -> list:
    return list(op.regions[0].blocks[0].operations) if len(op.regions) else []


def _address_math(inner) -> bool:
    """A body op that computes a position, not a value: a loop index, index arithmetic, a bounds
    test of an index (a pooling window's: --fusec-pooling-to-generic), a position cast to an integer
    value (max_pool's indices). The GPU computes these once per thread or folds them into addresses;
    they do not count as the element's arithmetic."""
    if inner.name == "linalg.index":
        return True
    if inner.name == "arith.index_cast":
        return isinstance(inner.operands[0].type, ir.IndexType)
    if not inner.name.startswith("arith.") or not len(inner.results):
        return False
    if inner.name == "arith.cmpi":
        return all(isinstance(v.type, ir.IndexType) for v in inner.operands)
    if inner.name == "arith.andi" and all(isinstance(r.type, ir.IntegerType) and ir.IntegerType(r.type).width == 1
                                          for r in inner.results):
        return all(not isinstance(v.owner, ir.Block) and _address_math(v.owner) for v in inner.operands)
    return all(isinstance(r.type, ir.IndexType) for r in inner.results)


def body_cost(op) -> int:
    return sum(4 if inner.name.startswith(_EXPENSIVE) else 1 for inner in _body_ops(op)
               if inner.name != "linalg.yield" and not _address_math(inner))


def _is_identity(m) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims, context=m.context)


def _dims_of(m) -> list:
    """The dim positions a projected-permutation map reads, with constant-0 results skipped."""
    out = []
    for e in m.results:
        text = str(e)
        if text.startswith("d") and text[1:].isdigit():
            out.append(int(text[1:]))
        elif text != "0":
            return None
    return out


def computes_from_indices(inner) -> bool:
    """Whether body op `inner` is one an iota's body may hold: scalar arithmetic, a loop index, the
    yield. A `tensor.extract` at computed indices (nearest upsampling, a gather) is not."""
    return inner.name.split(".", 1)[0] in ("arith", "math") or inner.name in ("linalg.index", "linalg.yield")


def classify(op) -> Classification:
    name = op.name
    if name == "linalg.fill":
        return Classification("fill")
    if name in _CONTRACTIONS:
        return Classification("contraction", reason=f"{name} is a contraction")
    if name != "linalg.generic":
        return Classification("opaque", reason=f"{name} is not a linalg.generic")
    if is_scan(op):  # (--fusec-scans-to-generic) its last loop runs in order, carrying a value
        return Classification("scan", reduced_dims=(len(iterator_kinds(op)) - 1,), cost=body_cost(op),
                              reduced_axes=(_scan_axis(op),))
    maps, iterators = indexing_maps(op), iterator_kinds(op)
    body = _body_ops(op)
    if any(len(inner.regions) for inner in body):
        return Classification("opaque", reason="the body holds regions")
    if any(inner.name in _GATHER_READS for inner in body):
        n_inputs = len(op.opview.inputs)
        if "reduction" in iterators or not all(_is_identity(m) for m in maps[n_inputs:]) \
                or not all(computes_from_indices(inner) or inner.name in _GATHER_READS for inner in body):
            return Classification("opaque", reason="the body reads a tensor at computed indices (a gather)")
        # A gather (an embedding, index_select, take_along_dim): pointwise over its output, each
        # element read from its table where the indices say (--fusec-bound-gather-indices kept them
        # in bounds); the table is read from memory, written by an earlier kernel (fusion rule 7).
        return Classification("broadcast", cost=body_cost(op),
                              reason="reads a tensor at positions computed from data (a gather)")
    if any(inner.name == "linalg.index" for inner in body):
        if "reduction" in iterators:
            return Classification("opaque", reason="a reduction whose body reads loop indices")
        if not all(computes_from_indices(inner) for inner in body):
            return Classification("opaque", reason="the body reads a tensor at indices it computes")
    cost = body_cost(op)
    reduced = tuple(i for i, k in enumerate(iterators) if k == "reduction")
    n_inputs = len(op.opview.inputs)
    if "fusec.concat" in op.attributes or any(_dims_of(m) is None for m in maps):
        # Reads through index maps (a slice, a cat: --fusec-fold-layout-ops, --fusec-concat-to-generic;
        # a cat's body reads the loop index only to pick its piece): pointwise over its output, which
        # the kernel evaluator computes at any index. Not for reductions (their rows are read in order).
        if not reduced and all(_dims_of(m) is not None for m in maps[n_inputs:]):
            return Classification("broadcast", cost=cost, reason="reads its operands through index maps")
        return Classification("opaque", reason="a reduction that reads a non-permutation index")
    if not reduced:
        n = len(iterators)
        full = all(len(_dims_of(m)) == n for m in maps)
        return Classification("pointwise" if full else "broadcast", cost=cost)
    ins = maps[:n_inputs]
    if _is_contraction(op, ins, reduced):
        return Classification("contraction", reduced, False, cost, "a reduction of products of two operands")
    parallel = [i for i, k in enumerate(iterators) if k == "parallel"]
    full = [m for m in ins if len(_dims_of(m)) == len(iterators)]
    fits = (bool(full) and all(m == full[0] for m in full) and parallel == list(range(len(parallel)))
            and len(op.opview.outputs) == 1 and combiner(op) is not None)
    axes = tuple(pos for pos, d in enumerate(_dims_of(full[0])) if d in reduced) if full else ()
    return Classification("reduction", reduced, fits, cost, reduced_axes=axes)


def reads_through_index_maps(op) -> bool:
    """Whether some input is read at other points than its own, in order (a transpose, a slice, a
    cat: its producer may be of any shape), not only broadcast along missing dims."""
    maps = indexing_maps(op)
    for m in maps[:len(op.opview.inputs)]:
        dims = _dims_of(m)
        if dims is None or dims != sorted(dims):
            return True
    return "fusec.concat" in op.attributes


def full_input(op):
    """(operand number, map) of the first input read at every loop dim (a reduction's data)."""
    maps = indexing_maps(op)
    n = len(iterator_kinds(op))
    for j, m in enumerate(maps[:len(op.opview.inputs)]):
        if len(_dims_of(m)) == n:
            return j, m
    return None, None


def _is_contraction(op, input_maps, reduced) -> bool:
    if len(input_maps) != 2:
        return False
    both = all(any(d in _dims_of(m) for d in reduced) for m in input_maps)
    names = {inner.name for inner in _body_ops(op)}
    return both and bool(names & {"arith.mulf", "arith.muli"}) and bool(names & {"arith.addf", "arith.addi"})


def combiner(op):
    """The op that folds an element into the accumulator (`%acc' = arith.addf %x, %acc`), or None."""
    block = op.regions[0].blocks[0]
    acc = block.arguments[len(block.arguments) - 1]
    body = _body_ops(op)
    yielded = body[-1].operands[0]
    users = [inner for inner in body if any(v == acc for v in inner.operands)]
    if len(users) != 1 or users[0].name not in _COMBINERS or users[0].results[0] != yielded:
        return None
    return users[0]


def run(module_op, pass_) -> None:
    ops = []
    module_op.walk(lambda op: (ops.append(op) if op.name.startswith("linalg.") and op.name != "linalg.yield"
                               and op.parent.name != "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        c = classify(op)
        op.attributes["fusec.kind"] = ir.StringAttr.get(c.kind)
        if c.kind == "reduction":
            op.attributes["fusec.reduced_dims"] = ir.DenseI64ArrayAttr.get(list(c.reduced_dims))


def _defining(generic, value):
    """(the linalg.generic, the op) that computes `value` of `generic`'s body: in the body itself, or
    for an input read elementwise, the op its producing generic yields; (None, None) otherwise."""
    if isinstance(value, ir.OpResult):
        return generic, value.owner
    if value.arg_number >= len(generic.operands) - len(generic.results):
        return None, None
    producer = generic.operands[value.arg_number].owner
    if not isinstance(generic.operands[value.arg_number], ir.OpResult) or producer.name != "linalg.generic":
        return None, None
    yielded = list(producer.regions[0].blocks[0].operations)[-1].operands[0]
    return (producer, yielded.owner) if isinstance(yielded, ir.OpResult) else (None, None)


def _reads_max(value) -> bool:
    """Whether a maximumf reduction (a linalg.generic that yields maximumf) reads tensor `value`."""
    for use in value.uses:
        user = use.owner
        if user.name == "linalg.generic" and "reduction" in iterator_kinds(user):
            yielded = list(user.regions[0].blocks[0].operations)[-1].operands[0]
            if isinstance(yielded, ir.OpResult) and yielded.owner.name == "arith.maximumf":
                return True
    return False


def sum_of_exp_with_max(op) -> bool:
    """Whether linalg.generic `op` sums exp(x - c) where a max reduction reads x too (logsumexp's,
    cross-entropy's), the exp and the sub in its body or in the generics that make its input: the
    pair the row kernel computes in one read (codegen/online_softmax.py; --fusec-blockwise-sums
    leaves such sums whole)."""
    block = op.regions[0].blocks[0]
    yielded = list(block.operations)[-1].operands[0]
    if not isinstance(yielded, ir.OpResult) or yielded.owner.name != "arith.addf":
        return False
    element = [v for v in yielded.owner.operands if v != block.arguments[len(block.arguments) - 1]]
    if len(element) != 1:
        return False
    generic, exp = _defining(op, element[0])
    if exp is None or exp.name != "math.exp":
        return False
    generic, sub = _defining(generic, exp.operands[0])
    if sub is None or sub.name != "arith.subf" or isinstance(sub.operands[0], ir.OpResult):
        return False
    j = sub.operands[0].arg_number
    return j < len(generic.operands) - len(generic.results) and _reads_max(generic.operands[j])
