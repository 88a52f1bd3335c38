"""Time fusec's kernels under several schedule settings, on entries of the bench suite (GPU).

    python bench/sweep.py --filter 'rmsnorm_silu_mul/4096x32768' \
        --variant row_registers=32 --variant row_registers=0,threads_per_block=512

Each variant is a set of CompileOptions fields. For every entry and variant the kernels are compiled,
checked against eager (float64) and timed as `fusec bench` times them (CUDA events around CUDA-graph
replays, median); the table gives µs and % of the same-run device copy. It is how the defaults of the
row schedules were chosen, and the measuring half of autotuning. Only fusec is timed.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from fusec.commands.bench import shape_list
from fusec.bench_suite import DTYPES, LARGE_SHAPES, check_outputs, compile_entry, reference, suite_entries
from fusec.timing import calls_per_replay, device_copy_GBs, gpu_time_us, warm_up


def _variant(text: str) -> dict:
    options = {}
    for item in filter(None, text.split(",")):
        name, _, value = item.partition("=")
        value = value.strip()
        options[name.strip()] = ({"true": True, "false": False}[value.lower()] if value.lower() in ("true", "false")
                                 else int(value) if value.lstrip("-").isdigit() else value)
    return options


def sweep_entry(entry, variants, copy_GBs: float, repeat: int) -> list[dict]:
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(0)
    dtype = DTYPES[entry.dtype]
    inputs = tuple(torch.randn(s, generator=gen, dtype=dtype, device="cuda") for s in entry.input_shapes)
    ref = None
    for options in variants:
        row = {"entry": entry.name, "options": options}
        try:
            compiled, model = compile_entry(entry, **options)
            if ref is None:
                eager = model.to("cuda") if isinstance(model, torch.nn.Module) else model
                ref = reference(eager, inputs)
            check_outputs(compiled(*inputs), ref)
            warm_up(lambda: compiled(*inputs), calls_per_replay(False))  # a first timing can run slow
            us, _ = gpu_time_us(lambda: compiled(*inputs), repeat, calls_per_replay(False))
            step = compiled.manifest["steps"][0]
            row.update(us=us, pct_copy=100 * entry.bytes / us / 1e3 / copy_GBs, grid=step["grid"], block=step["block"])
        except Exception as err:  # noqa: BLE001 - one variant failing is a result, not the end
            row["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--filter", required=True, help="entries whose name matches this regex")
    p.add_argument("--dtype", choices=sorted(DTYPES), action="append", help="dtypes (default: both)")
    p.add_argument("--variant", action="append", type=_variant, required=True,
                   help="CompileOptions fields, comma-separated: row_registers=0,threads_per_block=512")
    p.add_argument("--suite", choices=("core", "reductions"), default="core",
                   help="the entries of this suite of `fusec bench` (reductions: at the models' own shapes)")
    p.add_argument("--shapes", type=shape_list, metavar="MxN[,MxN...]", help="these shapes instead of the core suite's")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--json", help="write every row here")
    args = p.parse_args(argv)
    copy_GBs = device_copy_GBs(args.repeat)
    print(f"device copy: {copy_GBs:.0f} GB/s", flush=True)
    rows = []
    shapes = None if args.suite == "reductions" else args.shapes or LARGE_SHAPES
    for entry in suite_entries(shapes, args.dtype or sorted(DTYPES), args.filter, args.suite):
        rows += sweep_entry(entry, args.variant, copy_GBs, args.repeat)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"copy_GBs": copy_GBs, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
