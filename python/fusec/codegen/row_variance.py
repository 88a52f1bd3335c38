"""A row's mean and variance in one block-wide combination, for the row_registers schedule (the
`one-round-variance` knob of `--fusec-lower-groups-to-gpu`).

LayerNorm reduces each row twice: `s = sum(x)`, then `q = sum((x - s / N)^2)`, the second waiting
for the first. On the GPU each reduction is one block-wide combination (warp shuffles, barriers, a
shared-memory step). With the row in registers the block can have both in one round (Welford's
algorithm within a thread; Chan, Golub and LeVeque's merge across threads):

  1. each thread runs Welford over its elements (`thread_moments`): a running mean and sum of
     squares about it, per lane of its vectors, then the lanes merged; no communication;
  2. the block merges the triples (count, mean, q) of its threads in one round (`block_reduce`):
         n = na + nb;  d = mb - ma;  m = ma + d * nb / n;  q = qa + qb + d^2 * na * nb / n
     (two halves of equal, known counts merge with constants, no division);
  3. `s` is then `m * N` and `q` the variance's sum, both as the two reductions define them.

What it buys, on the H200 (two rounds -> one, the same run, the bench's entries): latency, one
barrier instead of four and one chain of shuffles instead of two: LayerNorm 8x4096 2.48 -> 2.14 us
in fp32, 2.28 -> 1.90 us in bf16. And bandwidth on long fp32 rows: 4096x32768 90% -> 94% of copy,
16384x8192 97% -> 98.5%. One entry lost: bf16 16384x11008, 94% -> 91%. The rest moved less than
0.5%.

`match` finds the pair in a group's members: an add-reduction `s` of the row's elements `x`, and an
add-reduction of `(x - s / N)` squared (`v * v` or `v ** 2`; the mean may be `s * (1 / N)`), where
`N` is the row length: LayerNorm, `var_mean`, `std`, a hand-written `((x - m) ** 2).mean()`.
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, vector

from .combine import block_reduce, constant
from .members import body_ops, fill_value, float_constant


def _operand_key(member, value):
    """What a body operand reads: (the member that wrote it or None, the buffer, the map), or None
    when it is not one of the op's inputs."""
    if not isinstance(value.owner, ir.Block) or value.owner != member.op.regions[0].blocks[0]:
        return None
    j = value.arg_number
    if j >= member.n_inputs:
        return None
    return member.sources[j], member.inputs[j], str(member.maps[j])


def _element_key(z):
    """The key of what add-reduction `z` folds, if it folds its input as it is."""
    body = body_ops(z)
    j, _ = z.full_input
    if j is None or len(body) != 1 or z.combiner.name != "arith.addf":
        return None
    acc = z.op.regions[0].blocks[0].arguments[z.n_inputs]
    if acc not in list(body[0].operands):
        return None
    x = [v for v in body[0].operands if v != acc]
    return _operand_key(z, x[0]) if len(x) == 1 else None


def _only_op(member, name):
    body = None if member is None else body_ops(member)
    return body[0] if body and len(body) == 1 and body[0].name == name else None


def _is_mean_of(member, z, n: int) -> bool:
    """Whether `member` computes `z / n` (or `z * (1 / n)`) from reduction `z`'s value."""
    for name, factor in (("arith.divf", float(n)), ("arith.mulf", float(ir.FloatAttr.get_f32(1.0 / n).value))):
        op = _only_op(member, name)
        if op is None:
            continue
        read, scale = op.operands[0], op.operands[1]
        key = _operand_key(member, read)
        if key is not None and key[0] is z and float_constant(scale) == factor:
            return True
    return False


def _squared(member):
    """The key of what `member` squares (`v * v`, `v ** 2`), or None."""
    body = None if member is None else body_ops(member)
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


def _f32_sum(z) -> bool:
    return ir.MemRefType(z.out.type).element_type == ir.F32Type.get() and _element_key(z) is not None


def match(reductions, n: int) -> dict:
    """{variance reduction: mean's reduction} for the pairs the combined round computes (rows of `n`
    elements): both f32 sums, the mean's from 0."""
    pairs = {}
    for z1 in reductions:
        if not (_f32_sum(z1) and fill_value(z1) == 0.0):
            continue
        x = _element_key(z1)
        for z2 in reductions:
            if z2 is z1 or z2 in pairs or z1 in pairs.values() or not _f32_sum(z2):
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


def merge(a, b):
    """Chan et al.'s merge of two (count, mean, sum of squares about the mean) triples. A count known
    at compile time (a Python float: every thread holds as many elements) folds into constants: two
    equal halves merge without a division. A side may be empty only where the counts are not known
    (threads past a short row's end): its `d^2 * na * nb / n` must be 0, not inf * 0 = NaN, when d is
    huge (LayerNorm of 33 values of 1e30 was NaN, eager's 0: test/Runtime/layer-norm-value-classes.py)."""
    (na, ma, qa), (nb, mb, qb) = a, b
    known = isinstance(na, float) and isinstance(nb, float)
    if known:
        n, wb, na_wb = na + nb, constant(nb / (na + nb)), constant(na * nb / (na + nb))
    else:
        na, nb = (constant(c) if isinstance(c, float) else c for c in (na, nb))
        n = arith.AddFOp(na, nb).result
        wb = arith.DivFOp(nb, arith.MaximumFOp(n, constant(1.0)).result).result  # 0 when both are empty
        na_wb = arith.MulFOp(na, wb).result
    d = arith.SubFOp(mb, ma).result
    m = arith.AddFOp(ma, arith.MulFOp(d, wb).result).result
    if known:
        cross = arith.MulFOp(arith.MulFOp(d, d).result, na_wb).result
    else:  # d * (d * na_wb): an empty side (na_wb = 0) adds 0, where d^2 of huge values is inf and inf * 0 NaN
        cross = arith.MulFOp(d, arith.MulFOp(d, na_wb).result).result
    return n, m, arith.AddFOp(arith.AddFOp(qa, qb).result, cross).result


def block_moments(moments, tx, threads: int, body):
    """The row's (count, mean, sum of squares about the mean) from every thread's, in one round
    (`block_reduce`)."""
    return block_reduce(moments, merge, (0.0, 0.0, 0.0), tx, threads, body)


def thread_moments(kernel, z1, slots, lanes: int):
    """(count, mean, sum of squares about the mean) of this thread's elements of reduction `z1`, in
    one pass (Welford): each lane of the thread's vectors keeps a running mean and sum of squares,
    updated with each slot's element, `1 / count` a constant (slot j is the (j+1)-th element of its
    lane); a masked slot (past the row: only the last ones) leaves them as they are. Then the lanes,
    which all hold as many elements, merge: mean = their average, squares = theirs plus count times
    the squared distances of their means from it. One pass: the hybrid schedule reads the elements
    it does not hold once here, not twice (on the H200 no faster than two passes, mean first)."""
    f32 = ir.F32Type.get()
    zero = kernel.widen(constant(0.0), lanes)
    mean, squares, count = zero, None, 0.0  # squares None: none yet (0)
    for j, (point, valid) in enumerate(slots):
        x = kernel.element_of_reduction(z1, point, lanes)[0]
        if j == 0:  # the first element is the mean, with no squares yet
            mean = x if valid is None else arith.SelectOp(valid, x, zero).result
            count = 1.0 if valid is None else arith.SelectOp(valid, constant(1.0), constant(0.0)).result
            continue
        delta = arith.SubFOp(x, mean).result
        new_mean = arith.AddFOp(mean, arith.MulFOp(delta, kernel.widen(constant(1.0 / (j + 1)), lanes)).result).result
        new_squares = arith.MulFOp(delta, arith.SubFOp(x, new_mean).result).result
        new_squares = new_squares if squares is None else arith.AddFOp(squares, new_squares).result
        if valid is None:
            mean, squares, count = new_mean, new_squares, float(j + 1)
        else:
            mean = arith.SelectOp(valid, new_mean, mean).result
            squares = arith.SelectOp(valid, new_squares, zero if squares is None else squares).result
            count = arith.SelectOp(valid, constant(float(j + 1)), constant(count) if isinstance(count, float) else count).result
    if lanes == 1:
        return count, mean, constant(0.0) if squares is None else squares
    add = ir.Attribute.parse("#vector.kind<add>")
    lane_mean = arith.MulFOp(vector.ReductionOp(f32, add, mean).result, constant(1.0 / lanes)).result
    d = arith.SubFOp(mean, kernel.widen(lane_mean, lanes)).result
    spread = vector.ReductionOp(f32, add, arith.MulFOp(d, d).result).result
    total = arith.MulFOp(constant(count) if isinstance(count, float) else count, spread).result
    if squares is not None:
        total = arith.AddFOp(vector.ReductionOp(f32, add, squares).result, total).result
    n = count * lanes if isinstance(count, float) else arith.MulFOp(count, constant(float(lanes))).result
    return n, lane_mean, total
