"""--fusec-reciprocal-divisors: an approximate divide by one value per row becomes a multiply by its reciprocal.

Softmax divides every element of a row by the row's sum; the sum is one scalar, broadcast to each
vector slot. Approximate divides (`fastmath<afn>`, from --fusec-fast-math-16bit or
--fusec-fast-divide-f32) are PTX's div.approx.f32, which the PTX ISA defines as `a * (1/b)`: a
reciprocal (MUFU.RCP, on the SM's special-function units, a quarter of the FP32 rate) and a multiply
for each element. A bf16 softmax over 128256 columns then issued 32 reciprocals and 32 exponentials
(also MUFU) per thread per row, where its long rows run out of issue slots before memory bandwidth.
This pass takes the reciprocal once, where the divisor is defined, and multiplies each element by
it: the same arithmetic as div.approx (one rounding of `1/b`, one of the product), without the
repeated reciprocals.

Only divides that are already approximate change; an IEEE divide (a kernel that stores f64) stays
exact. The divisor must be a scalar, or a vector.broadcast of one (the same value in every lane);
a divisor that differs per element (a sigmoid's `1 / (1 + exp(-x))`) is left alone, and so is a
divisor of one scalar quotient (LayerNorm's merge of two partial means: nothing to share).

Runs on the kernels (gpu.launch bodies) after --fusec-fast-divide-f32.

Before (a softmax's epilogue, each of a thread's slots):
    %b = vector.broadcast %sum : f32 to vector<8xf32>
    %p = arith.divf %e, %b fastmath<afn> : vector<8xf32>
After:
    %r = arith.divf %one, %sum fastmath<afn> : f32      (once, after %sum is computed)
    %rb = vector.broadcast %r : f32 to vector<8xf32>
    %p = arith.mulf %e, %rb fastmath<afn> : vector<8xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, vector

from fusec.codegen.built import gpu_launches

from .fast_math_16bit import fastmath_flags

FLAG = "fusec-reciprocal-divisors"
SUMMARY = "An approximate divide by a scalar (broadcast or not) becomes a multiply by its reciprocal, taken once"


def _approximate(op) -> bool:
    return bool({"afn", "fast"} & set(fastmath_flags(op).split(",")))


def _scalar_divisor(op):
    """The scalar every lane of the divide's divisor holds, or None."""
    divisor = op.operands[1]
    if not isinstance(divisor.type, ir.VectorType):
        return divisor
    owner = divisor.owner
    if not isinstance(owner, ir.Block) and owner.operation.name == "vector.broadcast" \
            and not isinstance(owner.operands[0].type, ir.VectorType):
        return owner.operands[0]
    return None


def _inside(divisor, launch) -> bool:
    """Whether `divisor` is defined in the kernel's body (else it is a value the kernel captures)."""
    owner = divisor.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation.parent
    while op is not None:
        if op == launch:
            return True
        op = op.parent
    return False


def _reciprocal(divisor, flags, launch):
    """1 / `divisor`, built right after its definition (at its block's start for a block argument;
    at the kernel's start for a value the kernel captures: the host computes nothing of a kernel)."""
    owner = divisor.owner
    if not _inside(divisor, launch):
        point = ir.InsertionPoint.at_block_begin(launch.regions[0].blocks[0])
    elif isinstance(owner, ir.Block):
        point = ir.InsertionPoint.at_block_begin(owner)
    else:
        point = ir.InsertionPoint.after(owner.operation)
    with point, ir.Location.unknown():
        one = arith.ConstantOp(divisor.type, ir.FloatAttr.get(divisor.type, 1.0)).result
        return arith.DivFOp(one, divisor, fastmath=flags).result


def _lanes(value) -> int:
    return ir.VectorType(value.type).shape[0] if isinstance(value.type, ir.VectorType) else 1


def run(module_op, pass_) -> None:
    for launch in gpu_launches(module_op):
        # One divisor at a time, the kernel read again after each: a divisor may itself be a
        # quotient (a mean divided by the row length, then x divided by the mean), and its divide is
        # replaced when its own divisor's turn comes. Each turn leaves one scalar divide behind (the
        # reciprocal: one lane), so the loop ends.
        while (found := _next_divisor(launch)) is not None:
            divisor, ops = found
            reciprocal = _reciprocal(divisor, ops[0].attributes["fastmath"], launch)
            for op in ops:
                _multiply(op, reciprocal)


def _next_divisor(launch):
    """(the first scalar divisor of the kernel's approximate divides, in walk order, whose quotients
    have two or more lanes in all; its divides), or None."""
    divides = []
    launch.walk(lambda op: (divides.append(op) if op.name == "arith.divf" else None) or ir.WalkResult.ADVANCE)
    by_divisor = []  # (scalar divisor, its divides): Values compare by identity
    for op in divides:
        divisor = _scalar_divisor(op)
        if divisor is None or not _approximate(op):
            continue
        same = next((ops for d, ops in by_divisor if d == divisor), None)
        if same is None:
            by_divisor.append((divisor, [op]))
        else:
            same.append(op)
    # one scalar quotient: a reciprocal and a multiply would cost what the divide does
    return next(((d, ops) for d, ops in by_divisor if sum(_lanes(op.results[0]) for op in ops) >= 2), None)


def _multiply(op, reciprocal) -> None:
    """Replace divide `op` by its dividend times `reciprocal` (broadcast to its lanes)."""
    with ir.InsertionPoint(op), op.location:
        factor = reciprocal
        if isinstance(op.operands[1].type, ir.VectorType):
            factor = vector.BroadcastOp(op.operands[1].type, reciprocal).result
        product = arith.MulFOp(op.operands[0], factor, fastmath=op.attributes["fastmath"]).result
    op.results[0].replace_all_uses_with(product)
    op.erase()
