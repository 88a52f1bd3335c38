"""Run every bench-suite kernel once at small and odd shapes, checked against eager (GPU).

Meant to run under NVIDIA's compute-sanitizer, which then reports any out-of-bounds or misaligned
access, or any use of uninitialised memory, the kernels make:

    compute-sanitizer --tool memcheck --error-exitcode 1 python3 bench/memcheck.py
    compute-sanitizer --tool initcheck --error-exitcode 1 python3 bench/memcheck.py

The shapes cover each schedule: rows in registers (4x4096), a masked tail (37x1001: not a whole
number of 128-bit vectors, the scalar path), single rows and elements (1x7), rows too long for
registers (2x65536: the row loop, vectorized; 3x40000: its last trip masked) and an odd suite width
(2x11008). `--vectors N` compiles every kernel with that many vectors per thread (the `vectors`
knob: flat kernels then load N vectors together, with a masked last block).
"""

from __future__ import annotations

import argparse
import sys

import torch

from fusec.bench_suite import DTYPES, check_outputs, compile_entry, reference, suite_entries

SHAPES = [(4, 4096), (37, 1001), (1, 7), (2, 11008), (2, 65536), (3, 40000)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vectors", type=int, default=0, help="the `vectors` knob for every kernel (0: the heuristic)")
    args = p.parse_args(argv)
    failed = 0
    entries = suite_entries(SHAPES, sorted(DTYPES), None)
    for entry in entries:
        gen = torch.Generator(device="cuda").manual_seed(0)
        inputs = tuple(torch.randn(s, generator=gen, dtype=DTYPES[entry.dtype], device="cuda")
                       for s in entry.shapes(entry.workload.inputs))
        try:
            compiled, model = compile_entry(entry, vectors=args.vectors)
            eager = model.to("cuda") if isinstance(model, torch.nn.Module) else model
            check_outputs(compiled(*inputs), reference(eager, inputs))
            torch.cuda.synchronize()
            block = compiled.manifest["steps"][0]["block"][0]
            print(f"{entry.name}: ok (block {block})", flush=True)
        except Exception as err:  # noqa: BLE001 - report every entry, then fail
            failed += 1
            print(f"{entry.name}: FAIL {type(err).__name__}: {str(err).splitlines()[0][:200]}", flush=True)
    print(f"memcheck entries: {len(entries)} run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
