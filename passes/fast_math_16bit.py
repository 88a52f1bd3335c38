"""--fusec-fast-math-16bit: approximate exp, log and divide in kernels whose every store is a 16-bit float.

A bf16 (or fp16) kernel computes in f32, as PyTorch does, then rounds each result to 8 (or 11) bits
of mantissa. libdevice's correctly-rounded-ish expf (about 10 instructions), logf and the IEEE
divide (div.rn.f32: about 10 SASS instructions with its slow path) buy accuracy that rounding to
bf16 throws away: their fast forms (`fastmath<afn>`: __nv_fast_expf = ex2.approx(x * log2 e),
__nv_fast_logf, div.approx.f32) are within a few f32 ulp, 2^-20 of the value, far below half a bf16
ulp (2^-9) or an fp16 one (2^-12). And it matters there: a bf16 element is half the bytes of an f32
one for the same arithmetic, so long bf16 rows run out of issue slots before they run out of memory
bandwidth (bf16 softmax over 32768 columns was at 61% of copy on the H200, fp32 at 96%). Triton,
which torch.compile uses, computes exp this way for every type. Kernels that store any f32 (or
wider) value keep the accurate forms; a divide whose quotient is rounded to an integer
(floor_divide, `rounding_mode="trunc"`) keeps the IEEE one.

Runs on the kernels (gpu.launch bodies, after --fusec-lower-groups-to-gpu), before they are lowered to
NVVM, where the flag picks libdevice's fast function or PTX's approximate divide.

Before (a bf16 softmax's epilogue):
    %e = math.exp %d : vector<8xf32>
    %p = arith.divf %e, %sum : vector<8xf32>
    %b = arith.truncf %p : vector<8xf32> to vector<8xbf16>
    vector.store %b, %out[...] : memref<4096x32768xbf16>, vector<8xbf16>
After:
    %e = math.exp %d fastmath<afn> : vector<8xf32>
    %p = arith.divf %e, %sum fastmath<afn> : vector<8xf32>
"""

from __future__ import annotations

from fusec.mlir import ir

from fusec.codegen.built import gpu_launches

FLAG = "fusec-fast-math-16bit"
SUMMARY = "Approximate exp, log and divide (fastmath<afn>) in kernels that store only 16-bit floats"

APPROXIMATED = ("math.exp", "math.log", "arith.divf")
_STORES = ("vector.store", "memref.store")


def stored_widths(launch) -> set[int]:
    """The bit widths of the float elements the kernel stores to global memory (anything else counts
    as 64). A store to shared or private memory (a block's partial sum, a cluster's exchange, a
    stash) is the kernel's own scratch: its f32 partials are no output."""
    widths = set()

    def visit(op):
        if op.name in _STORES and ir.MemRefType(op.operands[1].type).memory_space is None:
            element = ir.MemRefType(op.operands[1].type).element_type
            widths.add(element.width if isinstance(element, ir.FloatType) else 64)
        return ir.WalkResult.ADVANCE

    launch.walk(visit)
    return widths


def fastmath_flags(op) -> str:
    """The op's fastmath flags as written inside `#arith.fastmath<...>` ("none" when it has none)."""
    current = str(op.attributes["fastmath"]) if "fastmath" in op.attributes else "#arith.fastmath<none>"
    return current[len("#arith.fastmath<"):-1]


def with_afn(flags: str) -> str:
    names = set() if flags in ("", "none") else set(flags.split(","))
    return "fast" if "fast" in names else ",".join(sorted(names | {"afn"}))


def run(module_op, pass_) -> None:
    for launch in gpu_launches(module_op):
        widths = stored_widths(launch)
        if widths and max(widths) <= 16:
            approximate(launch, APPROXIMATED)


# A quotient that is rounded to an integer keeps the IEEE divide: floor_divide, div(rounding_mode=
# "trunc"/"floor"). 2 ulp off an integer quotient (6.0 / 3.0 = 1.9999998) floors to the wrong integer
# (found by the cuda conformance run: floor_divide of float16 and bfloat16, 4 to 9 of 16384 off by 1).
_ROUNDING = ("math.floor", "math.ceil", "math.trunc", "math.round", "math.roundeven", "arith.fptosi",
             "arith.fptoui")
_CASTS = ("arith.extf", "arith.truncf")


def rounded_to_integer(value) -> bool:
    """Whether `value` is rounded to an integer (through float casts) by some use of it."""
    for use in value.uses:
        owner = use.owner
        if owner.name in _ROUNDING or (owner.name in _CASTS and rounded_to_integer(owner.results[0])):
            return True
    return False


def approximate(launch, names) -> None:
    """Add `afn` to the fastmath flags of every op of the kernel named in `names`, but a divide whose
    quotient is rounded to an integer."""
    ops = []
    launch.walk(lambda op: (ops.append(op) if op.name in names else None) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name == "arith.divf" and rounded_to_integer(op.results[0]):
            continue
        op.attributes["fastmath"] = ir.Attribute.parse(f"#arith.fastmath<{with_afn(fastmath_flags(op))}>")
