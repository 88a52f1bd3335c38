"""The report of a conformance run: the per-entry table, then every distinct refusal, mismatch and
crash, then the summary line the lit tests check (`new: 0 mismatches, 0 crashes`)."""

from __future__ import annotations

import re

from .known import known_reason

__all__ = ["report", "reason_class"]

_STATUSES = ("pass", "mismatch", "refused", "crash")


def reason_class(message: str) -> str:
    """A message with its numbers, shapes, SSA names and file locations blurred: one line per cause."""
    text = re.sub(r"\S+\.(py|mlir):\d+:\d+:?\s*", "", message)
    text = re.sub(r"\b(tensor|memref|vector)<[^>]*>", r"\1<...>", text)
    text = re.sub(r"%[\w#]+", "%V", text)
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text).strip()


def report(results: dict, dtypes: list[str], seconds: float, write=print) -> dict:
    """Writes the report of `results` ({op id: [verdicts]}); returns the summary counts."""
    counts = {s: 0 for s in (*_STATUSES, "skipped", "known")}
    width = max([len(op) for op in results] + [10])
    write(f"{'entry':<{width}}  " + "  ".join(f"{d:>17}" for d in dtypes) + "   (pass/mismatch/refused/crash)")
    refusals, failures = {}, {}
    for op, verdicts in sorted(results.items()):
        cells = []
        for dtype in dtypes:
            mine = [v for v in verdicts if v["dtype"] in (dtype, "-")]
            cells.append("/".join(str(sum(v["status"] == s for v in mine)) for s in _STATUSES))
        write(f"{op:<{width}}  " + "  ".join(f"{c:>17}" for c in cells))
        for v in verdicts:
            counts[v["status"]] = counts.get(v["status"], 0) + 1
            if v["status"] == "refused":
                refusals.setdefault(reason_class(v["message"]), {}).setdefault(op, 0)
                refusals[reason_class(v["message"])][op] += 1
            elif v["status"] in ("mismatch", "crash"):
                why = known_reason(op, v["dtype"], v)
                counts["known"] += why is not None
                text = re.sub(r"^output \d+: ", "", v["message"])
                kind = text.split(":", 1)[0] if v["status"] == "mismatch" else reason_class(text)
                slot = failures.setdefault((v["status"], op, v["dtype"], kind), {"n": 0, "first": v, "known": why})
                slot["n"] += 1
    write("")
    write(f"refusals ({len(refusals)} distinct reasons):")
    for reason, ops in sorted(refusals.items(), key=lambda kv: -sum(kv[1].values())):
        write(f"  {sum(ops.values()):4d}  {reason}")
        write("        " + ", ".join(f"{op} ({n})" for op, n in sorted(ops.items())))
    write("")
    write(f"mismatches and crashes ({len(failures)} distinct):")
    for (status, op, dtype, kind), slot in sorted(failures.items()):
        first = slot["first"]
        tag = f"known: {slot['known']}" if slot["known"] else "NEW"
        write(f"  {status} {op} {dtype} [{kind}] x{slot['n']} ({tag})")
        write(f"      case: {first['variant']} {first['label']}")
        write(f"      {first['message']}")
    new_m = sum(s["n"] for (st, *_), s in failures.items() if st == "mismatch" and not s["known"])
    new_c = sum(s["n"] for (st, *_), s in failures.items() if st == "crash" and not s["known"])
    total = sum(len(v) for v in results.values())
    write("")
    write(f"fusec conformance: {len(results)} entries, {total} cases in {seconds:.0f} s: {counts['pass']} pass, "
          f"{counts['refused']} refused, {counts['skipped']} skipped (eager raises), {counts['known']} known "
          f"failures; new: {new_m} mismatches, {new_c} crashes")
    return {**counts, "new_mismatches": new_m, "new_crashes": new_c}
