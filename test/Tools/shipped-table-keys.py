# The shipped H200 tuning table (python/fusec/data/tune-h200.json) is keyed by each kernel's
# signature: a hash of its fused-stage body, sizes left out (fusec.tuning). Every entry must still
# be found by a compile of the bench model it was measured on: a change to the fused stage that
# changes a signature (even the order in which constants are printed) would silently turn the table
# off. The signature does not depend on the row count, so 8 rows stand for the entry's.

# RUN: %python %s | FileCheck %s
# CHECK: shipped entries: {{[1-9][0-9]*}}, signatures found: all

import json

from fusec.bench_suite import Entry, build_entry, find_entry
from fusec.driver import compile_spec
from fusec.frontend import ModelSpec
from fusec.options import CompileOptions
from fusec.tuning import SHIPPED_TABLE

entries = json.load(open(SHIPPED_TABLE))["entries"]
wanted = {}  # (model, N, dtype) -> signatures the table has for it
for key, entry in entries.items():
    e = find_entry(entry["model"])
    wanted.setdefault((e.workload.name, e.N, e.dtype), set()).add(key.split("|")[0])
missing = []
for (name, n, dtype), signatures in sorted(wanted.items()):
    entry = find_entry(f"{name}/8x{n}/{dtype}")
    model, inputs = build_entry(Entry(entry.workload, 8, n, dtype))
    comp = compile_spec(ModelSpec(model, inputs), CompileOptions(), stop="fused")
    found = {sig for sig, _ in comp.kernel_keys.values()}
    missing += [f"{name}/{n}/{dtype}: {sig}" for sig in sorted(signatures - found)]
print(f"shipped entries: {len(entries)}, signatures found: {'all' if not missing else 'not ' + ', '.join(missing)}")
