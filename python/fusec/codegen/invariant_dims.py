"""Which outer dims a flat kernel's threads should loop over, so that the work that does not read
them is done once a thread instead of once an element (`flat`'s invariant loop).

T5's attention bias adds, to scores of [batch, heads, q, k], a bias whose bucket (integer abs, a
log, compares: ~40 instructions an element) depends on k - q alone. Computed at every element, the
kernel is bound by instructions, not memory. If each thread keeps (q, k) and loops over batch and
heads, the bucket is loop-invariant: LLVM's LICM computes it once, before the loop.

Algorithm (a trace of the values the evaluator `kernel.Kernel` would compute, on dim sets instead of
IR values):
  1. from each output's writer, at the point whose dim i reads {i}, walk the members as
     `Kernel.evaluate` does: an operand's point is its map applied to the dim sets; a loaded operand
     reads the dims of its index; a body op reads the union of its operands' dims, `linalg.index i`
     the point's dim i;
  2. weigh each body op by its cost (a transcendental 8, a division 4 or 8, a 64-bit op 2, else 1);
  3. for every set D of outer dims (not the innermost, which the vectors run along), the work saved
     an element is the weight of the ops that read no dim of D, times 1 - 1/(trips over D);
  4. take the set that saves most, if it saves at least `_MIN_SAVED` (a pointwise chain, a causal
     mask's compare, saves nothing worth a loop) and has at least `_MIN_TRIPS` trips; order its dims
     so that the ones the most work reads are the outer loops;
  5. but only among sets whose dims all lie outside a contiguous run of a warp's vectors or more
     (`min_run` elements: the product of the dims inside the innermost loop dim). A warp's threads
     take consecutive vectors of the kept dims; a loop dim inside a shorter run cuts what they read
     into pieces. Eval BatchNorm of [64, 256, 56, 56] bf16 (its 1 / sqrt(var + eps) per channel) saves
     as much looping over N and H as over N alone, and looping over H left each warp 4.5 rows of
     112 bytes: 79% of copy on an H100, 0.81x torch.compile.
"""

from __future__ import annotations

import itertools
import math

from fusec.mlir import ir

from .indexing import expr_dims

__all__ = ["choose"]

_MIN_SAVED = 12  # weighted ops an element must save for the loop to pay
_MIN_TRIPS = 4
# Weighed 8: transcendentals (a libdevice routine) and integer divisions (a software sequence).
_HEAVY = {"math.log", "math.log1p", "math.log2", "math.log10", "math.exp", "math.exp2", "math.expm1", "math.sin",
          "math.cos", "math.tan", "math.tanh", "math.erf", "math.powf", "math.atan", "math.atan2", "math.fpowi",
          "math.ipowi", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
          "arith.ceildivsi", "arith.ceildivui"}


def _weight(op) -> int:
    name = op.name
    if name in _HEAVY:
        return 8
    if name in ("arith.divf", "arith.remf", "math.sqrt", "math.rsqrt"):
        return 4
    wide = any(isinstance(r.type, ir.IntegerType) and ir.IntegerType(r.type).width == 64 for r in op.results)
    return 2 if wide or name == "memref.load" else 1


def _expr_dims(expr, point) -> frozenset:
    """The output dims an operand index `expr` reads, at `point` (a dim set per loop dim)."""
    return frozenset().union(*(point[d] for d in expr_dims(expr)))


def _trace(member, point: tuple, seen: dict, ops: list) -> frozenset:
    """The output dims the value `member` computes at `point` (a dim set per loop dim) reads; each
    body op traced is appended to `ops` as (the dims it reads, its weight), once per member and point
    (the evaluator's cache)."""
    key = (id(member), point)
    if key in seen:
        return seen[key]
    block = member.op.regions[0].blocks[0]
    reads = {}
    for j, arg in enumerate(block.arguments):
        if j >= member.n_inputs and not len(list(arg.uses)):
            continue
        at = tuple(_expr_dims(e, point) for e in member.maps[j].results)
        source = member.sources[j]
        if source is not None and source.kind == "fill":
            reads[arg] = frozenset()
        elif source is not None and source.kind in ("pointwise", "broadcast"):
            reads[arg] = _trace(source, at, seen, ops)
        else:  # a load: it reads the dims of its index
            reads[arg] = frozenset().union(*at)
    result = frozenset()
    for inner in block.operations:
        if inner.name == "linalg.yield":
            result = reads.get(inner.operands[0], frozenset())
            break
        if inner.name == "linalg.index":
            dims = point[ir.IntegerAttr(inner.attributes["dim"]).value]
        else:
            dims = frozenset().union(*(reads.get(v, frozenset()) for v in inner.operands))
            ops.append((dims, _weight(inner)))
        for r in inner.results:
            reads[r] = dims
    seen[key] = result
    return result


def choose(group, shape: tuple, min_run: int) -> tuple[tuple, int]:
    """(the dims of the flat group's output `shape` (static) its threads should loop over, outermost
    first, or () where no loop pays; the weight of an element's ops that read none of them). Every
    loop dim has at least `min_run` elements inside it (a warp's vectors)."""
    if len(shape) < 2 or None in shape:
        return (), 0
    point = tuple(frozenset([d]) for d in range(len(shape)))
    ops, seen = [], {}
    for _, writer in group.outputs:
        if writer.kind in ("pointwise", "broadcast"):
            _trace(writer, point, seen, ops)
    outer = [d for d in range(len(shape) - 1) if shape[d] > 1]
    best, best_saved, best_kept = (), 0.0, 0
    for k in range(1, len(outer) + 1):
        for dims in itertools.combinations(outer, k):
            if math.prod(shape[max(dims) + 1:]) < min_run:
                continue
            trips = math.prod(shape[d] for d in dims)
            kept = sum(w for reads, w in ops if not reads & set(dims))
            saved = kept * (1 - 1 / trips)
            if trips >= _MIN_TRIPS and saved > best_saved:
                best, best_saved, best_kept = dims, saved, kept
    if best_saved < _MIN_SAVED:
        return (), 0
    reading = {d: sum(w for reads, w in ops if d in reads) for d in best}
    return tuple(sorted(best, key=lambda d: (-reading[d], d))), best_kept
