"""Tuned schedules: keys, shape buckets and the tables `fusec tune` writes and compiles read.

A kernel is known by its *signature*: a hash of its fusion group's ops at the fused stage with the
tensor shapes left out (the same RMSNorm at another size has the same signature) and its values
numbered by position (the printed names depend on the ops around the group). Its *bucket* is
the shape class a schedule is tuned for. The policy, used both when tuning and when compiling:

  - row kernels (a group with reductions): rows rounded up to a power of two, the row length exact
    (threads per row, vectors per thread and the register budget all follow the row length);
  - flat kernels (pointwise only): the element count rounded up to a power of two.

A table entry is keyed `signature|bucket|gpu|fusec version` and holds the knobs that won (see
`fusec.knobs.SCHEDULE_KNOBS`), the time they took and the heuristic's. `gpu` is the GPU's name when a
CUDA device is present at compile time, else the `--arch` (entries record both, and a lookup
tries the name first). Tables: the user's cache (`$FUSEC_TUNE_CACHE`, else
`$XDG_CACHE_HOME/fusec/tune.json`, else `~/.cache/fusec/tune.json`), then the table shipped with
fusec for the H200 (`fusec/data/tune-h200.json`). An unseen bucket compiles with the heuristic
schedule: nothing ever waits on tuning.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re

from .diagnostics import FusecError
from .knobs import SCHEDULE_KNOBS, format_overrides
from .options import gpu_arch
from .mlir import ir
from .version import __version__

__all__ = ["kernel_keys", "bucket_of", "cache_path", "load_table", "lookup_overrides", "apply_tuned_schedules",
           "SHIPPED_TABLE"]

SHIPPED_TABLE = os.path.join(os.path.dirname(__file__), "data", "tune-h200.json")
_DIMS = re.compile(r"(tensor|memref|vector)<([0-9x?]+x)?([a-z]\w*)")
_VALUE = re.compile(r"%[\w$.-]+")


def bucket_of(shape: list[int], reduced_dims: list[int]) -> str:
    if reduced_dims:
        rows = math.prod(d for i, d in enumerate(shape) if i not in reduced_dims)
        row = math.prod(shape[i] for i in reduced_dims)
        return f"rows<={1 << max(0, (rows - 1).bit_length())},row={row}"
    elements = math.prod(shape)
    return f"elements<={1 << max(0, (elements - 1).bit_length())}"


def positional(text: str) -> str:
    """`text` with its SSA values renamed by order of first appearance (%0, %1, ...). The printer
    names values after what comes before them in the function (%cst_3, %14): a signature of the
    printed names would change when an unrelated op moved, and silently miss the tables."""
    names: dict[str, str] = {}
    return _VALUE.sub(lambda m: names.setdefault(m[0], f"%{len(names)}"), text)


def _signature(group) -> str:
    body = "\n".join(str(op) for op in group.regions[0].blocks[0].operations)
    body = positional(_DIMS.sub(lambda m: f"{m[1]}<{'?x' * m[0].count('x')}{m[3]}", body))
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def kernel_keys(module) -> dict[int, tuple[str, str]]:
    """At the fused stage: {group id: (signature, bucket)} for every fusec.group of static shape (a
    dynamic row count has no bucket until launch: its kernels take the heuristic's schedule)."""
    groups = []
    module.operation.walk(lambda op: (groups.append(op) if op.name == "fusec.group" else None)
                          or ir.WalkResult.ADVANCE)
    keys = {}
    for g in groups:
        gid = ir.IntegerAttr(g.attributes["fusec.id"]).value
        shape = list(ir.DenseI64ArrayAttr(g.attributes["shape"])) if "shape" in g.attributes else []
        reduced = list(ir.DenseI64ArrayAttr(g.attributes["reduced_dims"])) if "reduced_dims" in g.attributes else []
        if any(d < 0 for d in shape):
            continue
        keys[gid] = (_signature(g), bucket_of(shape, reduced))
    return keys


def cache_path() -> str:
    if os.environ.get("FUSEC_TUNE_CACHE"):
        return os.environ["FUSEC_TUNE_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fusec", "tune.json")


def load_table(path: str) -> dict:
    """{key: entry} of a table file; a missing file is an empty table, a damaged one an error."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as err:
        raise FusecError(f"cannot read the tuning table {path}: {err}") from None
    if not isinstance(doc, dict) or doc.get("format") != "fusec-tune/1" or not isinstance(doc.get("entries"), dict):
        raise FusecError(f"{path} is not a fusec tuning table (format fusec-tune/1)")
    return doc["entries"]


def key(signature: str, bucket: str, gpu: str) -> str:
    return f"{signature}|{bucket}|{gpu}|{__version__}"


def gpu_names(arch: str) -> list[str]:
    """The names a lookup tries: this machine's GPU (if it is of `arch`), then the arch itself."""
    names = []
    try:
        # torch only here, when a compile asks which GPU this is: the stage table imports this module,
        # and `fusec --help` or an .mlir compile needs no torch
        import torch  # noqa: PLC0415

        if torch.cuda.is_available() and gpu_arch().rstrip("a") == arch.rstrip("a"):
            names.append(torch.cuda.get_device_name())
    except Exception:  # noqa: BLE001 - no usable GPU: look up by arch alone
        pass
    return names + list(dict.fromkeys([arch, arch.rstrip("a")]))  # (sm_90a's tables are sm_90's)


def lookup_overrides(keys: dict, arch: str, tables: list[dict] | None = None) -> tuple[str, dict]:
    """(the `schedule` option string, {group: where its knobs came from}) for the groups whose
    (signature, bucket) a table knows; groups it does not know keep the heuristic."""
    if tables is None:
        tables = [(cache_path(), load_table(cache_path())), (SHIPPED_TABLE, load_table(SHIPPED_TABLE))]
    items, found = [], {}
    for gid, (sig, bucket) in sorted(keys.items()):
        for name in gpu_names(arch):
            hit = next(((path, t[key(sig, bucket, name)]) for path, t in tables if key(sig, bucket, name) in t), None)
            if hit:
                path, entry = hit
                items += [(gid, knob, value) for knob, value in sorted(entry.get("knobs", {}).items()) if knob in SCHEDULE_KNOBS]
                found[gid] = f"{os.path.basename(path)}: {key(sig, bucket, name)}"
                break
    return format_overrides(items), found


def apply_tuned_schedules(comp) -> None:
    """After the fused stage (cuda): each kernel's tuning key; the kernels a tuning table knows get its
    knobs, unless the compile has its own schedule or tuning is off. The compile goes on with those
    knobs as its `schedule` option (`comp.options` is what the later stages' passes run with;
    `comp.tuned` says where each kernel's knobs came from)."""
    o = comp.options
    comp.kernel_keys = kernel_keys(comp.module)
    if not o.tuning or o.schedule:
        return
    overrides, comp.tuned = lookup_overrides(comp.kernel_keys, o.arch)
    if overrides:
        comp.options = dataclasses.replace(o, schedule=overrides)
