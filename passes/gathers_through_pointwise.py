"""--fusec-gathers-through-pointwise: a gather of a pointwise op's result reads that op's inputs
instead, and computes the op's body on the elements it picked.

`F.cross_entropy(x, t)` arrives as `log_softmax(x)` followed by a gather of the target's column
(`tensor.extract %logp[%i, %t]`): the gather reads a tensor of the whole [rows, classes] shape that
only it needs, so that tensor would be written to memory by one kernel and read back at one element
per row by the next (fusion rule 7: a gathered value is in memory). But `logp = x - max - log(sum)`
is pointwise, so its element at (i, t) is that expression of `x[i, t]` and of the row's reduced
values at (i, 0): the gather reads those instead, the [rows, classes] tensor is no longer needed, and
the row reductions and the pick become one kernel. The same holds for an embedding of a scaled
table (`(w * s)[ids]` is `w[ids] * s`).

The same holds for a read at positions computed from the loop indices in a way no index map
expresses (a pooling's window, clamped into its input: --fusec-pooling-to-generic), so that the
BatchNorm and ReLU before a max pool are computed at the elements each window reads.

Algorithm: for each `tensor.extract` at indices computed from data or not affine in the loop
indices, whose tensor is the result of an
all-parallel linalg.generic with an identity output map, input maps of dims and zeros and a body of
arithmetic (its loop indices allowed: they are the extract's indices): each input of that op is
extracted at its map of the indices, the op's body is cloned after them, and its yield replaces the
extract. Repeated while the new extracts read such ops, within a budget of cloned ops per extract;
the producer, if nothing else reads it, is left dead for canonicalize. Reads at loop-index positions
(`[%i, %c0]`) become index maps later (--fusec-extracts-to-index-maps).

Before:
    %logp = linalg.generic {maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0, 0), (d0, d1) -> (d0, d1)]}
              ins(%x, %lse : tensor<64x1000xf32>, tensor<64x1xf32>) ... { %d = arith.subf %a, %b ... }
    ... linalg.generic ... {
      %v = tensor.extract %logp[%i, %t] : tensor<64x1000xf32>
After:
    ... linalg.generic ... {
      %a = tensor.extract %x[%i, %t] : tensor<64x1000xf32>
      %b = tensor.extract %lse[%i, %c0] : tensor<64x1xf32>
      %v = arith.subf %a, %b : f32
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, tensor

from .bound_gather_indices import depends_on_data
from .classify_ops import computes_from_indices, indexing_maps, iterator_kinds
from .extracts_to_index_maps import affine_of, strided_innermost
from .inline_iotas import dim_exprs

FLAG = "fusec-gathers-through-pointwise"
SUMMARY = "Read a gather of a pointwise op's result from that op's inputs, computing its body there"

_BUDGET = 64  # body ops one extract may clone (on average), over all the producers it is pulled through


def _pullable(source):
    """The pointwise linalg.generic that computes `source`, if a gather may read through it."""
    if isinstance(source.owner, ir.Block):
        return None
    op = source.owner
    if op.name != "linalg.generic" or len(op.results) != 1:
        return None
    if not all(k == "parallel" for k in iterator_kinds(op)):
        return None
    maps = indexing_maps(op)
    n_in = len(op.opview.inputs)
    if maps[-1] != ir.AffineMap.get_identity(maps[-1].n_dims) or any(dim_exprs(m) is None for m in maps[:n_in]):
        return None
    body = op.regions[0].blocks[0]
    if len(list(body.arguments[n_in].uses)) or not all(computes_from_indices(inner) for inner in body.operations):
        return None
    return op


def clone_mapped(inner, mapping) -> None:
    """Clone body op `inner` at the insertion point with its operands through `mapping`, and map its
    results to the clone's."""
    clone = inner.clone()
    for k, v in enumerate(clone.operands):
        clone.operands[k] = mapping.get(v, v)
    for old, new in zip(inner.results, clone.results):
        mapping[old] = new


def _pull(extract, producer) -> int:
    """Replace `extract` (of `producer`'s result) by `producer`'s body at its indices; the ops cloned."""
    body = producer.regions[0].blocks[0]
    indices = list(extract.operands)[1:]
    n_in = len(producer.opview.inputs)
    mapping = {}
    with ir.InsertionPoint(extract), extract.location:
        zero = None
        for j, (value, m) in enumerate(zip(producer.opview.inputs, indexing_maps(producer)[:n_in])):
            at = []
            for pos in dim_exprs(m):
                if pos is None:
                    zero = zero or arith.ConstantOp(ir.IndexType.get(), 0).result
                    at.append(zero)
                else:
                    at.append(indices[pos])
            if isinstance(value.type, ir.RankedTensorType):
                mapping[body.arguments[j]] = tensor.ExtractOp(value, at).result
            else:
                mapping[body.arguments[j]] = value  # a scalar input
        cloned = 0
        for inner in body.operations:
            if inner.name == "linalg.yield":
                result = mapping.get(inner.operands[0], inner.operands[0])
                break
            if inner.name == "linalg.index":
                mapping[inner.results[0]] = indices[ir.IntegerAttr(inner.attributes["dim"]).value]
                continue
            clone_mapped(inner, mapping)
            cloned += 1
    extract.results[0].replace_all_uses_with(result)
    extract.erase()
    return cloned


def _pulled_reads(op):
    """The body's extracts a producer could be pulled into (at data-dependent or non-affine
    indices), grouped by that producer, in body order."""
    body = op.regions[0].blocks[0]
    by_producer = []
    for inner in body.operations:
        if inner.name != "tensor.extract":
            continue
        indices = list(inner.operands)[1:]
        strided = indices and strided_innermost(affine_of(indices[-1], op.operation), indexing_maps(op)[-1].n_dims)
        if not strided and not any(depends_on_data(v, body) or affine_of(v, op.operation) is None for v in indices):
            continue  # at affine positions: an index map instead (--fusec-extracts-to-index-maps)
        producer = _pullable(inner.operands[0])
        if producer is None:
            continue
        for entry in by_producer:
            if entry[0] == producer:
                entry[1].append(inner)
                break
        else:
            by_producer.append((producer, [inner]))
    return by_producer


def _pull_all(op) -> None:
    """Pull producers into the body's reads of them, each into all its reads or none (a pooling
    window reading half its elements from the producer's inputs and half from its result would need
    both in memory), within `_BUDGET` cloned ops per read."""
    budget = _BUDGET * max(1, sum(len(reads) for _, reads in _pulled_reads(op)))
    spent = 0
    while True:
        for producer, reads in _pulled_reads(op):
            cost = len(reads) * (len(list(producer.regions[0].blocks[0].operations)) - 1)
            if spent + cost <= budget:
                break
        else:
            return
        for extract in reads:
            spent += _pull(extract, producer)


def run(module_op, pass_) -> None:
    generics = []
    module_op.walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in generics:
        if any(inner.name == "tensor.extract" for inner in op.regions[0].blocks[0].operations):
            _pull_all(op)
