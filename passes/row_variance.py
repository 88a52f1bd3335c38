"""A row's mean and variance in one block-wide combination, for `--fusec-lower-groups-to-gpu` (not a
pass itself).

LayerNorm reduces each row twice: `s = sum(x)`, then `q = sum((x - s / N)^2)`, the second waiting
for the first. On the GPU each reduction is one block-wide combination (warp shuffles, a barrier,
a shared-memory step), during which the block issues no loads: with one or two 1024-thread blocks
per SM, each round shows in the bandwidth. The rows are in registers, so the block can do better
(Chan, Golub and LeVeque's parallel variance, what Welford's algorithm becomes across threads):

  1. each thread sums its own elements and takes their mean `m_t`, then the sum of squares about
     it, `q_t = sum((x - m_t)^2)`: exact, from registers, no communication;
  2. the block combines the triples (count, mean, q) of its threads in one round:
         n = na + nb;  d = mb - ma;  m = ma + d * nb / n;  q = qa + qb + d^2 * na * nb / n
  3. `s` is then `m * N` and `q` the variance's sum, both as the two reductions define them.

`match` finds the pair in a group's members: an add-reduction `s` of the row's elements `x`, and an
add-reduction of `(x - s / N) * (x - s / N)` (or of `... * (1 / N)`), where `N` is the row length.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, vector

from .block_reduce import block_reduce
from .classify_ops import combiner, full_input, indexing_maps
from .group_kernel import apply_map, const



def _body(member) -> list:
    """The ops of a member's body, without its linalg.yield."""
    return list(member.op.regions[0].blocks[0].operations)[:-1]


def _operand_key(member, value):
    """What a body operand reads: (the member that wrote it or None, the buffer, the map), or None
    when it is not one of the op's inputs."""
    if not isinstance(value.owner, ir.Block) or value.owner != member.op.regions[0].blocks[0]:
        return None
    j = value.arg_number
    if j >= member.n_inputs:
        return None
    return member.sources[j], member.inputs[j], str(indexing_maps(member.op)[j])


def _element_key(z):
    """The key of what add-reduction `z` folds, if it folds its input as it is."""
    body = _body(z)
    j, _ = full_input(z.op)
    if j is None or len(body) != 1 or combiner(z.op).name != "arith.addf":
        return None
    acc = z.op.regions[0].blocks[0].arguments[z.n_inputs]
    if acc not in list(body[0].operands):
        return None
    x = [v for v in body[0].operands if v != acc]
    return _operand_key(z, x[0]) if len(x) == 1 else None


def _only_op(member, name):
    body = None if member is None else _body(member)
    return body[0] if body and len(body) == 1 and body[0].name == name else None


def _constant(value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    return ir.FloatAttr(owner.attributes["value"]).value


def _is_mean_of(member, z, n: int) -> bool:
    """Whether `member` computes `z / n` (or `z * (1 / n)`) from reduction `z`'s value."""
    for name, factor in (("arith.divf", float(n)), ("arith.mulf", float(ir.FloatAttr.get_f32(1.0 / n).value))):
        op = _only_op(member, name)
        if op is None:
            continue
        read, scale = op.operands[0], op.operands[1]
        key = _operand_key(member, read)
        if key is not None and key[0] is z and _constant(scale) == factor:
            return True
    return False


def _squared(member):
    """The key of what `member` squares (`v * v`, `v ** 2`), or None."""
    body = None if member is None else _body(member)
    if not body or len(body) != 1:
        return None
    op = body[0]
    if op.name == "arith.mulf":
        a, b = (_operand_key(member, v) for v in op.operands)
        return a if a is not None and a == b else None
    exponent = op.operands[1].owner if op.name in ("math.fpowi", "math.powf") else None
    if exponent is None or isinstance(exponent, ir.Block) or exponent.name != "arith.constant" \
            or str(exponent.attributes["value"]).split(" :")[0] not in ("2", "2.000000e+00"):
        return None
    return _operand_key(member, op.operands[0])


def match(reductions, n: int) -> dict:
    """{variance reduction: mean's reduction} for the pairs the combined round computes (rows of `n`
    elements)."""
    pairs = {}
    for z1 in reductions:
        x = _element_key(z1)
        if x is None or ir.MemRefType(z1.out.type).element_type != ir.F32Type.get():
            continue
        for z2 in reductions:
            if z2 is z1 or z2 in pairs or z1 in pairs.values() or _element_key(z2) is None:
                continue
            a = _squared(_element_key(z2)[0])
            if a is None:
                continue
            diff = _only_op(a[0], "arith.subf")
            if diff is None or _operand_key(a[0], diff.operands[0]) != x:
                continue
            mean = _operand_key(a[0], diff.operands[1])
            if mean is not None and _is_mean_of(mean[0], z1, n):
                pairs[z2] = z1
    return pairs


def _f32(v: float):
    return arith.ConstantOp(ir.F32Type.get(), v).result


def _merge(a, b):
    """Chan et al.'s merge of two (count, mean, sum of squares about the mean) triples. A count known
    at compile time (a Python float: every thread holds as many elements) folds into constants: two
    equal halves merge without a division."""
    (na, ma, qa), (nb, mb, qb) = a, b
    if isinstance(na, float) and isinstance(nb, float):
        n, wb, na_wb = na + nb, _f32(nb / (na + nb)), _f32(na * nb / (na + nb))
    else:
        na, nb = (_f32(c) if isinstance(c, float) else c for c in (na, nb))
        n = arith.AddFOp(na, nb).result
        wb = arith.DivFOp(nb, arith.MaximumFOp(n, _f32(1.0)).result).result  # 0 when both are empty
        na_wb = arith.MulFOp(na, wb).result
    d = arith.SubFOp(mb, ma).result
    m = arith.AddFOp(ma, arith.MulFOp(d, wb).result).result
    cross = arith.MulFOp(arith.MulFOp(d, d).result, na_wb).result
    return n, m, arith.AddFOp(arith.AddFOp(qa, qb).result, cross).result


def block_moments(moments, tx, threads: int, body):
    """The row's (count, mean, sum of squares about the mean) from every thread's, in one round
    (`block_reduce`)."""
    return block_reduce(moments, _merge, (0.0, 0.0, 0.0), tx, threads, body)


def thread_moments(kernel, z1, slots, lanes: int, forget):
    """(count, mean, sum of squares about the mean) of this thread's elements of reduction `z1`; the
    squares are taken in a second pass over the same elements (`forget` drops those read again from
    memory, in the hybrid schedule)."""
    f32 = ir.F32Type.get()

    def fold(term):
        acc = kernel.widen(_f32(0.0), lanes)
        for point, valid in slots:
            folded = arith.AddFOp(acc, term(kernel.element_of_reduction(z1, point, lanes)[0])).result
            acc = arith.SelectOp(valid, folded, acc).result if valid is not None else folded
        if lanes > 1:
            acc = vector.ReductionOp(f32, ir.Attribute.parse("#vector.kind<add>"), acc).result
        return acc

    count = float(lanes * sum(valid is None for _, valid in slots))  # known at compile time, unless masked
    for _, valid in slots:
        if valid is not None:
            count = arith.AddFOp(_f32(count) if isinstance(count, float) else count,
                                 arith.SelectOp(valid, _f32(float(lanes)), _f32(0.0)).result).result
    total = fold(lambda x: x)
    mean = arith.DivFOp(total, _f32(count) if isinstance(count, float) else
                        arith.MaximumFOp(count, _f32(1.0)).result).result
    forget()
    shift = kernel.widen(mean, lanes)
    squares = fold(lambda x: (lambda d: arith.MulFOp(d, d).result)(arith.SubFOp(x, shift).result))
    return count, mean, squares


def start_value(kernel, z, row, n_cols):
    """Reduction `z`'s initial value for the row (what its output held: a fill's constant)."""
    return kernel.value(z.sources[-1], z.out, apply_map(indexing_maps(z.op)[-1], row + [const(0)] * n_cols))
