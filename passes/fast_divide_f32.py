"""--fusec-fast-divide-f32: approximate divides in kernels whose every store is a float of 32 bits or fewer.

An IEEE f32 divide (div.rn.f32, or rcp.rn.f32 for 1/y) is about 10 instructions with a slow path
for the edge cases; the approximate one (div.approx.f32, rcp.approx.f32) is 1-2, within 2 ulp for
divisors between 2^-126 and 2^126 (beyond that it flushes: 1/y then reads 0 where the exact value is
below 2^-126). Triton, which torch.compile uses, divides this way by default (div.full.f32). It
matters where a kernel is bound by its instructions: RMSNorm·SiLU·up in fp32 at 4096x32768 computes
a sigmoid, 1 / (1 + exp(-h)), per element, and went from 85% to 96% of copy on the H200 with this
pass (from 0.85x to 0.95x torch.compile). An approximate exp (`afn` on math.exp) gained nothing
there, so exp, log and the rest keep their accurate forms in f32; 16-bit kernels get those too
(--fusec-fast-math-16bit). A kernel that stores f64 or integers is left alone, and so is a divide whose quotient is
rounded to an integer (floor_divide: fast_math_16bit.rounded_to_integer).

Runs on the kernels (gpu.launch bodies) after --fusec-lower-groups-to-gpu.

Before (the sigmoid of an fp32 SiLU):
    %s = arith.divf %one, %d : vector<4xf32>
    vector.store %y, %out[...] : memref<4096x32768xf32>, vector<4xf32>
After:
    %s = arith.divf %one, %d fastmath<afn> : vector<4xf32>
"""

from __future__ import annotations

from .fast_math_16bit import approximate, stored_widths
from fusec.codegen.built import gpu_launches

FLAG = "fusec-fast-divide-f32"
SUMMARY = "Approximate divides (fastmath<afn>) in kernels that store only floats of 32 bits or fewer"


def run(module_op, pass_) -> None:
    for launch in gpu_launches(module_op):
        widths = stored_widths(launch)
        if widths and max(widths) <= 32:
            approximate(launch, ("arith.divf",))
