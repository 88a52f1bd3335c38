"""A row's max and its sum of exp(x - max) in one pass over the row (the `online-softmax` knob of
`--fusec-lower-groups-to-gpu`), for the row_loop schedule.

logsumexp, log_softmax's normalizer and cross-entropy reduce each row twice: `m = max(x)`, then
`s = sum(exp(x - c))` where `c` is `m` (or, in logsumexp, `m` with infinities replaced by 0). The
second reduction waits for the first, so a kernel that does not keep the row on chip reads it twice.
Milakov and Gimelshein's online normalizer computes both in one read: each thread keeps a running
max `m` and the sum `s` of exp(x - m) over its elements; when a trip's elements raise the max, the
sum so far is rescaled by exp(m_old - m_new). Two threads' pairs merge the same way:

    m = max(ma, mb);  s = sa * exp(ma - m) + sb * exp(mb - m)

A read-only row (cross-entropy writes one loss a row, not the row) then needs neither registers nor
shared memory for the row: it streams once through small blocks, many of them an SM, with no
rounds in between (`plan._online_rows`). In a kernel that holds its row in registers the same
merge was slower (`combine`'s docstring): there the second round costs no memory.

Infinities and NaN come out as the two reductions give them. A running max of -inf (only -inf so
far) takes 0 as its reference, so exp(-inf - -inf) never makes a NaN of a sum that is 0; a pair
whose max is -inf is rescaled by 0. At the end `c` is computed from the row's max (the kernel
evaluates the sub's operand), and the sum is `s * exp(m - c)` (exp(0) = 1: exact where `c` is `m`),
or where `m` is infinite `exp(m - c)`, the value every element's exp(x - c) had: 0 or NaN for a row
of -inf, inf or NaN for a row with +inf. A NaN in the row makes the max and the sum NaN.

`match` finds the pairs in a group's members: a maximumf reduction of f32 elements `x` from a fill of
-inf, and right after it an f32 add-reduction from a fill of 0 of `exp(x - c)`, `c` read once a row
(its map reads no reduced dim), the exp and the sub in the sum's body or in the members it reads
elementwise.
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith, vector

from .combine import block_reduce, constant, start_value
from .indexing import apply_map, const, expr_dims
from .kernel import attributes
from .members import fill_value, is_identity, yielded


def _elementwise(m, rank: int) -> bool:
    """Whether map `m` reads at the loop point itself, over `rank` loop dims."""
    return m.n_dims == rank and is_identity(m)


def _producer(member, value, rank: int):
    """Where `value` (of `member`'s body) comes from, following elementwise reads (identity maps) of
    earlier pointwise members: ("op", member, op), ("read", source member or None, buffer, map) for
    an operand read otherwise (a load, a reduction's value), or None (the accumulator)."""
    while isinstance(value.owner, ir.Block):
        j = value.arg_number
        if j >= member.n_inputs:
            return None
        source, m = member.sources[j], member.maps[j]
        if source is None or source.kind not in ("pointwise", "broadcast") or not _elementwise(m, rank) \
                or not _elementwise(source.maps[-1], rank):
            return ("read", source, member.inputs[j], str(m))
        member, value = source, yielded(source)
    return ("op", member, value.owner)


def _element(z, rank: int):
    """What f32 reduction `z` folds (its element's producer) and its combiner, when its body is one
    combination of the element and the accumulator."""
    if ir.MemRefType(z.out.type).element_type != ir.F32Type.get():
        return None, None
    comb = z.combiner
    acc = z.op.regions[0].blocks[0].arguments[z.n_inputs]
    if acc not in list(comb.operands):
        return None, None
    x = [v for v in comb.operands if v != acc]
    return (_producer(z, x[0], rank) if len(x) == 1 else None), comb.name


def _per_row(member, j: int, n_rows: int) -> bool:
    """Whether operand `j` of `member` is read once a row: its map reads no reduced loop dim."""
    return all(d < n_rows for e in member.maps[j].results for d in expr_dims(e))


class Pair:
    """A matched (max, sum of exp) pair: the reductions, the sub and exp ops of the sum's element,
    and where the sub reads `c` (member, operand number)."""

    def __init__(self, z_max, z_sum, sub, exp, c_at):
        self.z_max, self.z_sum, self.sub, self.exp, self.c_at = z_max, z_sum, sub, exp, c_at


def match(reductions, rank: int, n_rows: int) -> dict:
    """{sum's reduction: Pair} of the pairs the online pass computes, for reductions over `rank`
    loop dims of which the first `n_rows` are the rows'."""
    pairs = {}
    maxima = {}
    for z in reductions:
        x, name = _element(z, rank)
        if name == "arith.maximumf" and x is not None and fill_value(z) == -math.inf:
            maxima[z] = x
    for z in reductions:
        e, name = _element(z, rank)
        if name != "arith.addf" or fill_value(z) != 0.0 or e is None or e[0] != "op" or e[2].name != "math.exp":
            continue
        member, exp = e[1], e[2]
        sub = _producer(member, exp.operands[0], rank)
        if sub is None or sub[0] != "op" or sub[2].name != "arith.subf":
            continue
        sub_member, sub_op = sub[1], sub[2]
        x = _producer(sub_member, sub_op.operands[0], rank)
        c = sub_op.operands[1]
        if not isinstance(c.owner, ir.Block) or c.owner != sub_member.op.regions[0].blocks[0] \
                or c.arg_number >= sub_member.n_inputs or not _per_row(sub_member, c.arg_number, n_rows):
            continue
        # the max just before the sum: the pass computes both where the max stands, so no reduction
        # between them (one `c` might read) is left for later
        i = reductions.index(z)
        z_max = reductions[i - 1] if i and maxima.get(reductions[i - 1]) == x else None
        if z_max is not None:
            pairs[z] = Pair(z_max, z, sub_op, exp, (sub_member, c.arg_number))
    return pairs


def _op(like, *operands):
    """An op of the same kind and attributes as `like` (a matched sub or exp) on `operands`; an exp
    approximated (`_fast`)."""
    kept = attributes(like)
    if like.name == "math.exp":
        kept["fastmath"] = _fast(kept.get("fastmath"))
    return ir.Operation.create(like.name, results=[operands[0].type], operands=list(operands),
                               attributes=kept).result


def _fast(flags):
    """`flags` (a fastmath attribute or None) with `afn`: libdevice's fast exp, ex2.approx(x log2 e), 2
    instructions where expf takes about 10. The terms are summed, and the sum's relative error is
    theirs: a few f32 ulp (2^-21) for terms within 16 of the max, the ones the sum is made of. A bf16
    row is half the bytes of an f32 one for the same exps: with expf, cross-entropy over 4096x50257
    bf16 ran out of issue slots at 64% of copy on the H200 (fp32 rows of 32000: 105%). Triton, which
    torch.compile uses, computes every exp this way."""
    words = [] if flags is None else str(flags)[len("#arith.fastmath<"):-1].split(",")
    words = [w for w in words if w not in ("none", "afn", "fast")] + ["afn"]
    return ir.Attribute.parse(f"#arith.fastmath<{','.join(words)}>")


def _reference(m):
    """The max that sums are taken about: `m`, or 0 while it is -inf (no element above -inf yet)."""
    return arith.SelectOp(_is(m, -math.inf), constant(0.0), m).result


def _is(m, value: float):
    return arith.CmpFOp(arith.CmpFPredicate.OEQ, m, constant(value)).result


def _rescale(pair, m_old, reference):
    """exp(m_old - reference), 0 where m_old is -inf (its sum is 0, whatever the reference)."""
    return arith.SelectOp(_is(m_old, -math.inf), constant(0.0), _op(pair.exp, _op(pair.sub, m_old, reference))).result


def merge_with(pair):
    """The merge of two (max, sum of exp about it) pairs, as block_reduce takes it."""
    def merge(a, b):
        (ma, sa), (mb, sb) = a, b
        m = arith.MaximumFOp(ma, mb).result
        reference = _reference(m)
        s = arith.AddFOp(arith.MulFOp(sa, _rescale(pair, ma, reference)).result,
                         arith.MulFOp(sb, _rescale(pair, mb, reference)).result).result
        return m, s
    return merge


def start(kernel, lanes: int):
    """A thread's pair before its first element: (-inf, a vector of 0s)."""
    return constant(-math.inf), kernel.widen(constant(0.0), lanes)


def fold(kernel, pair, slots, state, lanes: int):
    """`state` (max, per-lane sums) with the elements at `slots` (a trip's vectors, their loads issued
    together) folded in: the trip's max first, then one rescale and an exp an element."""
    m_old, sums = state
    low = kernel.widen(constant(-math.inf), lanes)
    xs = []
    for point, valid in slots:
        x = kernel.element_of_reduction(pair.z_max, point, lanes)[0]
        xs.append((arith.SelectOp(valid, x, low).result if valid is not None else x, valid))
    top = xs[0][0]
    for x, _ in xs[1:]:
        top = arith.MaximumFOp(top, x).result
    if lanes > 1:
        top = vector.ReductionOp(ir.F32Type.get(), ir.Attribute.parse("#vector.kind<maximumf>"), top).result
    m = arith.MaximumFOp(m_old, top).result
    reference = _reference(m)
    sums = arith.MulFOp(sums, kernel.widen(_rescale(pair, m_old, reference), lanes)).result
    for x, _ in xs:  # a masked slot's x is -inf: its exp is 0
        sums = arith.AddFOp(sums, _op(pair.exp, _op(pair.sub, x, kernel.widen(reference, lanes)))).result
    return m, sums


def fold_edge(kernel, pair, edge, state, lanes: int):
    """`state` with the element at a row's edge slot (`windows.edge_slot`) merged in, where its flag
    holds."""
    point, valid = edge
    x = kernel.element_of_reduction(pair.z_max, point, 1)[0]
    m_old, sums = state
    one = arith.SelectOp(valid, x, constant(-math.inf)).result
    m = arith.MaximumFOp(m_old, one).result
    reference = _reference(m)
    e = arith.SelectOp(valid, _op(pair.exp, _op(pair.sub, x, reference)), constant(0.0)).result
    rescale = kernel.widen(_rescale(pair, m_old, reference), lanes)
    sums = arith.MulFOp(sums, rescale).result
    if lanes > 1:
        e = vector.InsertOp(e, kernel.widen(constant(0.0), lanes), [], [0]).result
    return m, arith.AddFOp(sums, e).result


def finish(kernel, pair, state, lanes: int, block, row, cols) -> None:
    """The row's max and sum from every thread's pair (`block`: tx, threads, the launch body), into
    the reductions' registers: the max combined with its start (-inf), then `c` evaluated from it,
    and the sum as the sum of exp(x - c) defines it."""
    m, sums = state
    if lanes > 1:
        sums = vector.ReductionOp(ir.F32Type.get(), ir.Attribute.parse("#vector.kind<add>"), sums).result
    total_max, total = block_reduce((m, sums), merge_with(pair), (-math.inf, 0.0), *block)
    z_max, z_sum = pair.z_max, pair.z_sum
    kernel.registers[z_max] = ir.Operation.create(
        "arith.maximumf", results=[total_max.type], operands=[start_value(kernel, z_max, row, len(cols)), total_max],
        attributes=attributes(z_max.combiner)).result
    member, j = pair.c_at
    point = row + [const(0)] * len(cols)
    c = kernel.value(member.sources[j], member.inputs[j], apply_map(member.maps[j], point))
    scale = _op(pair.exp, _op(pair.sub, kernel.registers[z_max], c))
    infinite = arith.OrIOp(_is(kernel.registers[z_max], math.inf), _is(kernel.registers[z_max], -math.inf)).result
    value = arith.SelectOp(infinite, scale, arith.MulFOp(total, scale).result).result
    kernel.registers[z_sum] = arith.AddFOp(start_value(kernel, z_sum, row, len(cols)), value).result
