# Column reductions on the cuda target (`x.sum(0)`, `x.mean(0)`, a bias gradient `g.sum(dim=(0, 1))`)
# take the columns schedule (codegen/columns.py): a thread per vector of adjacent outputs, summing
# down the rows, its loads 128 bits wide and a warp's contiguous. Before fusion,
# --fusec-split-column-sums splits a long one into partial column sums over blocks of rows (enough
# threads), then their sum. Each case prints its kernels' schedules, the vector types of the loads
# in the tiled IR and whether the PTX has 128-bit global loads. A row reduction (softmax's) still
# plans as before. `column_slices=0` (the heuristic; the default is 1 until it is timed on a GPU):
# the warps of a block share a column's rows, and the split makes longer blocks, fewer partials.

# RUN: %python %s | FileCheck %s

import re

import torch

import fusec

_SCHEDULE = re.compile(r"fusec.schedule = \{([^}]*)\}")


def field(text, name):
    m = re.search(rf"\b{name} = (\"?[\w]+\"?)", text)
    return m[1].strip('"') if m else "-"


def case(name, fn, shape, dtype=torch.float32, **knobs):
    compiled = fusec.compile(fn, (torch.randn(shape).to(dtype),), **knobs)
    tiled = compiled.stages["tiled"]
    kernels = [f"{field(s, 'schedule')}(lanes {field(s, 'lanes')}, rows {field(s, 'rows')}, "
               f"row_length {field(s, 'row_length')}, threads {field(s, 'threads')}"
               + (f", slices {field(s, 'slices')})" if "slices" in s else ")")
               for s in _SCHEDULE.findall(tiled)]
    loads = sorted(set(re.findall(r"vector\.load .*?, (vector<\w+>)", tiled)))
    ptx = compiled.ptx
    wide = "ld.global.v4" in ptx or "ld.global.nc.v4" in ptx
    grids = [step["grid"][0] for step in compiled.manifest["steps"] if step["op"] == "launch"]
    print(f"{name}: {' ; '.join(kernels)}")
    print(f"  loads {' '.join(loads) or 'scalar'}, {'128-bit loads' if wide else 'NO 128-bit loads'}, grids {grids}")


# 32768 rows of 4096 fp32: partials over blocks of 64 rows (512 x 4096 / 4 = 524288 threads), then 32, then 16.
# CHECK-LABEL: sum(0) 32768x4096 f32:
# CHECK-SAME:    columns(lanes 4, rows 2097152, row_length 64, threads 256) ; columns(lanes 4, rows 65536, row_length 32, threads 256) ; columns(lanes 4, rows 4096, row_length 16, threads 256)
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [2048, 64, 4]
case("sum(0) 32768x4096 f32", lambda x: x.sum(0), (32768, 4096))

# bf16: 8 lanes where the kernel reads bf16, accumulated in f32 (the partials are f32: 4 lanes).
# CHECK-LABEL: sum(0) 32768x4096 bf16:
# CHECK-SAME:    columns(lanes 8, rows 2097152, row_length 64, threads 256) ; columns(lanes 4, {{.*}}) ; columns(lanes 8, rows 4096, row_length 16, threads 256)
# CHECK-NEXT:    loads vector<4xf32> vector<8xbf16> vector<8xf32>, 128-bit loads, grids [1024, 64, 2]
case("sum(0) 32768x4096 bf16", lambda x: x.sum(0), (32768, 4096), torch.bfloat16)

# The mean's divide is the last kernel's epilogue.
# CHECK-LABEL: mean(0) 32768x4096 f32:
# CHECK-SAME:    columns(lanes 4, rows 2097152, row_length 64, threads 256) ; columns(lanes 4, {{.*}}) ; columns(lanes 4, rows 4096, row_length 16, threads 256)
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [2048, 64, 4]
case("mean(0) 32768x4096 f32", lambda x: x.mean(0), (32768, 4096))

# CHECK-LABEL: mean(0) 4096x4096 bf16:
# CHECK-SAME:    columns(lanes 8, {{.*}}) ; columns(lanes 8, rows 4096, {{.*}})
# CHECK-NEXT:    loads {{.*}}vector<8xbf16>{{.*}}, 128-bit loads, grids [256, 16, 2]
case("mean(0) 4096x4096 bf16", lambda x: x.mean(0), (4096, 4096), torch.bfloat16)

# A bias gradient: T = 512 read as [16, 32]; the [64, 16] partials are one dim for the next split.
# CHECK-LABEL: sum(0, 1) 64x512x768 f32:
# CHECK-SAME:    columns(lanes 4, rows 786432, row_length 32, threads 256) ; columns(lanes 4, rows 24576, row_length 32, threads 256) ; columns(lanes 4, rows 768, row_length 32, threads 192)
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [768, 24, 1]
case("sum(0, 1) 64x512x768 f32", lambda g: g.sum(dim=(0, 1)), (64, 512, 768))

# An odd width: lanes 1, still a thread per column; 3000 rows in blocks of 40.
# CHECK-LABEL: sum(0) 3000x1001 f32:
# CHECK-SAME:    columns(lanes 1, rows 75075, row_length 40, threads 256) ; columns(lanes 1, rows 1001, row_length 75, threads 256)
# CHECK-NEXT:    loads scalar, NO 128-bit loads
case("sum(0) 3000x1001 f32", lambda x: x.sum(0), (3000, 1001))

# Few rows: one kernel, not split.
# CHECK-LABEL: sum(0) 8x4096 f32:
# CHECK-SAME:    columns(lanes 4, rows 4096, row_length 8, threads 256){{$}}
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [4]
case("sum(0) 8x4096 f32", lambda x: x.sum(0), (8, 4096))

# Sliced (`column_slices=0`): blocks of 2048 rows (16 x 1024 vectors, 32 slices of 64 rows each, 2048
# blocks of 8 vectors x 32 slices), then the 16 partials' sum: two kernels.
# CHECK-LABEL: sliced sum(0) 32768x4096 f32:
# CHECK-SAME:    columns(lanes 4, rows 65536, row_length 2048, threads 256, slices 32) ; columns(lanes 4, rows 4096, row_length 16, threads 256){{$}}
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [2048, 4]
case("sliced sum(0) 32768x4096 f32", lambda x: x.sum(0), (32768, 4096), column_slices=0)

# GPT-2's bias gradient in bf16 (the reductions suite's `gpt2_bias_grad`): 2 kernels where it was 3.
# CHECK-LABEL: sliced sum(0) 32768x3072 bf16:
# CHECK-SAME:    columns(lanes 8, rows 49152, row_length 2048, threads 256, slices 32) ; columns(lanes 8, rows 3072, row_length 16, threads 256){{$}}
case("sliced sum(0) 32768x3072 bf16", lambda x: x.sum(0), (32768, 3072), torch.bfloat16, column_slices=0)

# 100 rows (fewer than the 512 a sliced split needs): one kernel, 4 slices of 25 rows; blocks of 8
# vectors while they are fewer than the SMs (128 blocks).
# CHECK-LABEL: sliced sum(0) 100x4096 f32:
# CHECK-SAME:    columns(lanes 4, rows 4096, row_length 100, threads 32, slices 4){{$}}
# CHECK-NEXT:    loads vector<4xf32>, 128-bit loads, grids [128]
case("sliced sum(0) 100x4096 f32", lambda x: x.sum(0), (100, 4096), column_slices=0)

# An odd width: 32 scalars a slice, 8 slices; T = 512 of a bias gradient whole in a block.
# CHECK-LABEL: sliced sum(0) 3000x1001 f32:
# CHECK-SAME:    columns(lanes 1, rows 10010, row_length 300, threads 256, slices 8) ; columns(lanes 1, rows 1001, row_length 10, threads 256){{$}}
case("sliced sum(0) 3000x1001 f32", lambda x: x.sum(0), (3000, 1001), column_slices=0)
# CHECK-LABEL: sliced sum(0, 1) 64x512x768 f32:
# CHECK-SAME:    columns(lanes 4, rows 49152, row_length 512, threads 256, slices 32) ; columns(lanes 4, rows 768, row_length 64, threads 32, slices 4){{$}}
case("sliced sum(0, 1) 64x512x768 f32", lambda g: g.sum(dim=(0, 1)), (64, 512, 768), column_slices=0)

# A row reduction keeps its row schedule.
# CHECK-LABEL: softmax(-1) 64x4096 f32:
# CHECK-SAME:    row_registers(lanes 4, rows 64, row_length 4096, {{.*}})
case("softmax(-1) 64x4096 f32", lambda x: torch.softmax(x, -1), (64, 4096))

# The cpu target is left as it was: no column split before fusion (its --fusec-blockwise-sums splits
# long sums after fusion), and its result matches float64.
# CHECK-LABEL: cpu sum(0) 32768x64:
# CHECK-SAME:    0 reshapes before fusion, ok
torch.manual_seed(0)  # unseeded, one input in six summed 2.4e-6 off (CI failed once)
x = torch.randn(32768, 64)
cpu = fusec.compile(lambda t: t.sum(0), (x,), target="cpu")
err = float((cpu(x).double() - x.double().sum(0)).abs().max() / x.double().sum(0).abs().max())
print(f"cpu sum(0) 32768x64: {cpu.stages['fused'].count('tensor.expand_shape')} reshapes before fusion, "
      f"{'ok' if err < 2e-6 else 'INACCURATE'} ({err:.1e})")
