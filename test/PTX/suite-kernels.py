# Every kernel of the `fusec bench` suite (each model at each suite row length, fp32 and bf16),
# compiled for sm_90 and assembled by `ptxas -v`: 128-bit global loads and stores, warp shuffles in
# the reductions, and no register spills. Rows: 128 of each length (from 128 rows on, the row count
# changes only the grid; fewer rows spread each row over more threads), and the latency shape 8 x 4096.
# Rows of 65536 too: too long to keep in registers, they take the vectorized row loop.

# REQUIRES: ptxas
# RUN: %python %s | FileCheck %s

# CHECK-NOT: FAIL
# CHECK:     suite kernels: 70 checked, 0 failed

import re
import subprocess
import tempfile

from fusec.backends.cuda_tools import ptxas_path
from fusec.bench_suite import DTYPES, LARGE_SHAPES, compile_entry, suite_entries

REDUCTIONS = ("rmsnorm_silu_mul", "softmax_last", "layernorm", "add_rmsnorm")
failed = 0
entries = suite_entries(sorted({(128, n) for _, n in LARGE_SHAPES} | {(128, 65536), (8, 4096)}), list(DTYPES), None)
for entry in entries:
    ptx = compile_entry(entry)[0].ptx
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(ptx)
        f.flush()
        info = subprocess.run([ptxas_path(), "-arch=sm_90", "-v", f.name, "-o", "/dev/null"],
                              capture_output=True, text=True, check=True).stderr
    spills = sum(int(n) for n in re.findall(r"(\d+) bytes spill (?:stores|loads)", info))
    registers = max(int(n) for n in re.findall(r"Used (\d+) registers", info))
    problems = []
    if "ld.global.v4" not in ptx and "ld.global.nc.v4" not in ptx:
        problems.append("no 128-bit loads")
    if "st.global.v4" not in ptx:
        problems.append("no 128-bit stores")
    if entry.workload.name in REDUCTIONS and "shfl.sync" not in ptx:
        problems.append("no warp shuffles")
    if spills:
        problems.append(f"{spills} bytes of spills")
    failed += bool(problems)
    print(f"{entry.name}: {registers} registers, {spills} spill bytes {'FAIL: ' + ', '.join(problems) if problems else 'ok'}")
print(f"suite kernels: {len(entries)} checked, {failed} failed")
