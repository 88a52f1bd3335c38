"""`python -m fusec.conformance`: run the OpInfo conformance suite and print its report."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .ops import DTYPES


def _parser():
    p = argparse.ArgumentParser(prog="python -m fusec.conformance", description=__doc__)
    p.add_argument("--ops", help="comma-separated ATen names of the op table (add, _softmax) or OpInfo "
                   "entries (div.trunc_rounding); default: every compute op of the table")
    p.add_argument("--dtypes", default=",".join(DTYPES), help=f"comma-separated, of {', '.join(DTYPES)}")
    p.add_argument("--shard", help="K/N: only the (entry, dtype) pairs of shard K of N (a stable hash of each pair)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--max-keys", type=int, default=4, help="compiles per entry and dtype (0: all; default 4)")
    p.add_argument("--max-cases", type=int, default=6, help="cases per compile (value sets, layouts; default 6)")
    p.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds a case may take before it is a crash")
    p.add_argument("--json", help="also write every verdict to this file")
    p.add_argument("--log", help="append each entry's verdicts to this file as it finishes (JSON lines)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    if any(d not in DTYPES for d in dtypes):
        sys.exit(f"--dtypes: each of {', '.join(DTYPES)}")
    shard = None
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        if not 1 <= k <= n:
            sys.exit("--shard K/N: 1 <= K <= N")
        shard = [k, n]
    import warnings

    warnings.filterwarnings("ignore")
    from ..torch_backend.support import COMPUTE
    from .ops import entries
    from .runner import run
    from .samples import in_shard

    start = time.perf_counter()
    found, missing = entries(COMPUTE)
    wanted = set(args.ops.split(",")) if args.ops else None
    tasks, seen = [], set()
    for aten, hits in found.items():
        for oid, _, supported in hits:
            if oid in seen or (wanted and aten not in wanted and oid not in wanted):
                continue
            seen.add(oid)
            mine = [d for d in dtypes if d in supported and in_shard(oid, d, shard)]
            if mine:
                tasks.append({"op": oid, "dtypes": mine, "max_keys": args.max_keys, "max_cases": args.max_cases,
                              "target": args.target})
    if wanted and not tasks:
        sys.exit(f"--ops: none of {args.ops} is an op of the table or an OpInfo entry of one")
    print(f"fusec conformance: target {args.target}, {len(tasks)} OpInfo entries, dtypes {', '.join(dtypes)}"
          + (f", shard {shard[0]}/{shard[1]}" if shard else "") + f", up to {args.max_keys} compiles each")
    if missing and not wanted:
        print(f"ops of the table with no OpInfo entry: {', '.join(missing)}")
    sys.stdout.flush()
    log = open(args.log, "a", encoding="utf-8") if args.log else None

    def progress(op, verdicts, seconds):
        done.append(op)
        print(f"[{len(done)}/{len(tasks)}] {op}: {len(verdicts)} cases, {seconds:.0f} s", file=sys.stderr, flush=True)
        if log:
            log.write(json.dumps({"op": op, "verdicts": verdicts}) + "\n")
            log.flush()

    done: list = []
    results = run(tasks, jobs=args.jobs, case_timeout=args.timeout, progress=progress)
    from .report import report

    counts = report(results, dtypes, time.perf_counter() - start)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 1 if counts["new_mismatches"] or counts["new_crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
