"""Schedules as data: what `--emit schedule` prints and `--schedule FILE` reads.

The algorithm (what each kernel computes) is fixed by the fusion decisions; its schedule (how the
GPU's threads share the work) is chosen by `--fusec-lower-groups-to-gpu` from the schedule knobs of
`fusec.knobs` (`schedule=True`: `threads_per_block`, `row_registers`, `row_prefetch`, `row_unroll`,
`vectors`, `read_only_cache`, `l2_evict_last` and `row_stash`).
The knobs can also be set per kernel: the kernel's fusion group id, then the knob. `--emit schedule` prints

    {"kernels": [
      {"kernel": "main_kernel_0", "group": 0, "schedule": "row_registers", "grid": [8, 1, 1], "block": [256, 1, 1], ...,
       "knobs": {"threads_per_block": 256, "row_registers": 32, "row_prefetch": true, "row_unroll": 4,
                 "vectors": 0, "read_only_cache": "off", "l2_evict_last": false, "row_stash": false}},
      ...]}

and `--schedule FILE` takes the same document back (edited), applying each kernel's `knobs` to its
group; every other field is a description of what was chosen and is ignored on input. In the pass
pipeline the overrides are one option, `schedule=GROUP.KNOB=VALUE,...`, so a compile with a schedule
file is reproduced by `fusec-opt` like any other.
"""

from __future__ import annotations

import json

from .diagnostics import FusecError
from .knobs import SCHEDULE_KNOBS, check_knob, format_overrides, parse_overrides
from .mlir import ir

__all__ = ["default_knobs", "overrides_from_document", "load_schedule_file", "launch_schedules",
           "describe_kernels", "format_document"]



def default_knobs(options, schedule: str | None = None) -> dict:
    """The knobs every kernel gets from `options` unless its group is overridden; of a kernel whose
    schedule is `schedule`, the ones that schedule reads (the tensor cores' `mma_` knobs for `wgmma`,
    the others for the rest)."""
    return {name: getattr(options, name) for name in SCHEDULE_KNOBS
            if schedule is None or name.startswith("mma_") == (schedule == "wgmma")}


def overrides_from_document(doc, source: str) -> str:
    """The pass option string for a `--schedule` document (see the module docstring)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("kernels"), list):
        raise FusecError(f"{source}: a schedule is a JSON object with a \"kernels\" list (what --emit schedule prints)")
    items = []
    for i, kernel in enumerate(doc["kernels"]):
        where = f"{source}: kernels[{i}]"
        if not isinstance(kernel, dict) or not isinstance(kernel.get("group"), int) or isinstance(kernel["group"], bool):
            raise FusecError(f"{where} needs an integer \"group\" (the kernel's fusion group)")
        knobs = kernel.get("knobs", {})
        if not isinstance(knobs, dict):
            raise FusecError(f"{where}: \"knobs\" must be an object")
        for name, value in knobs.items():
            try:
                check_knob(name, value, where)
            except ValueError as err:
                raise FusecError(str(err)) from None
            items.append((kernel["group"], name, value))
    return format_overrides(items)


def load_schedule_file(path: str) -> str:
    """Read `--schedule FILE` into the pass option string; errors name the file (and line)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise FusecError(f"cannot read the schedule {path}: {err.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise FusecError(f"not JSON: {err.msg}", location=f"{path}:{err.lineno}:{err.colno}") from None
    return overrides_from_document(doc, path)


def launch_schedules(module) -> list[dict]:
    """At the tiled stage: each kernel of the host function, in launch order, with the schedule its
    gpu.launch recorded. The kernels are the gpu.launch ops and the top-level scf.parallel loops
    (ops fusec does not fuse, lowered one kernel each)."""
    chosen = []
    for func in module.body.operations:
        if func.operation.name != "func.func" or not len(func.regions[0].blocks):
            continue
        for op in func.regions[0].blocks[0].operations:
            if op.operation.name == "gpu.launch":
                attr = ir.DictAttr(op.attributes["fusec.schedule"]) if "fusec.schedule" in op.attributes else None
                chosen.append(_fields(attr) if attr is not None else {"schedule": "launch"})
            elif op.operation.name == "scf.parallel":
                chosen.append({"schedule": "loops", "note": "not a fusion group: the generic loop mapping"})
    return chosen


def describe_kernels(chosen: list[dict], manifest: dict, options, tuned: dict | None = None) -> dict:
    """The `--emit schedule` document: each launch of the manifest with its schedule (`chosen`, from
    `launch_schedules` at the tiled stage) and the knobs that produced it."""
    launches = [s for s in manifest["steps"] if s["op"] == "launch"]
    if len(chosen) != len(launches):
        raise FusecError(f"internal error: {len(chosen)} kernels at the tiled stage, {len(launches)} launches")
    overrides = parse_overrides(options.schedule)
    kernels = []
    for step, fields in zip(launches, chosen):
        fields = dict(fields)
        entry = {"kernel": step["kernel"], **({"group": fields.pop("group")} if "group" in fields else {}),
                 "grid": step["grid"], "block": step["block"], **fields}
        if "group" in entry:
            entry["knobs"] = {**default_knobs(options, entry.get("schedule")), **overrides.get(entry["group"], {})}
            if tuned and entry["group"] in tuned:
                entry["tuned"] = tuned[entry["group"]]
        order = ["kernel", "group", "schedule", "grid", "block"]
        kernels.append({k: entry[k] for k in order if k in entry} | {k: v for k, v in entry.items() if k not in order})
    return {"kernels": kernels}


def format_document(doc: dict) -> str:
    """The schedule document as JSON with one kernel per line (and its knobs on the next)."""
    lines = []
    for k in doc["kernels"]:
        head = {key: v for key, v in k.items() if key not in ("knobs", "tuned")}
        text = "  " + json.dumps(head)
        if "knobs" in k:
            text = text[:-1] + ',\n   "knobs": ' + json.dumps(k["knobs"]) + (
                f', "tuned": {json.dumps(k["tuned"])}' if "tuned" in k else "") + "}"
        lines.append(text)
    return '{"kernels": [\n' + ",\n".join(lines) + "\n]}\n"


def _fields(attr) -> dict:
    out = {}
    for i in range(len(attr)):
        named = attr[i]
        a = named.attr
        if isinstance(a, ir.BoolAttr):
            out[named.name] = a.value
        elif isinstance(a, ir.IntegerAttr):
            out[named.name] = a.value
        else:
            out[named.name] = ir.StringAttr(a).value
    return out
