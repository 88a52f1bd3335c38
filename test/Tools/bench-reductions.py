# `fusec bench --suite reductions` without a GPU (python/fusec/bench_models.py).
#
# The bytes: every entry's declared minimal bytes are what its tensors hold: the inputs, the
# module's parameters and floating buffers (BatchNorm's running statistics), the outputs, which the
# model computes here on the meta device (on the GPU, run_entry checks the real tensors the same way).
#
# The PTX: three entries of distinct schedules compile for the default cuda target at their full
# shapes, with their kernel counts, and no kernel of theirs is in the shipped tuning table (the
# suite's shapes are outside it): an odd-width vocabulary row (one row kernel), a column sum (split
# into partial column sums, then their sums) and the group norm (one kernel: the statistics and the
# normalization of the same rows, the per-channel scale and shift computed inside it).

# RUN: %python %s | FileCheck %s
# CHECK:      bytes: 32 entries, 0 mismatches
# CHECK-NEXT: gpt2_lm_log_softmax/4096x50257/fp32: 1 kernel(s), tuned: none
# CHECK-NEXT: gpt2_bias_grad/32768x3072/fp32: 3 kernel(s), tuned: none
# CHECK-NEXT: sd_groupnorm/32x320x64x64/fp32: 1 kernel(s), tuned: none

import copy

import torch

from fusec.bench_suite import DTYPES, build_entry, compile_entry, find_entry, suite_entries

mismatches = []
entries = suite_entries(None, list(DTYPES), None, "reductions")
for e in entries:
    model, inputs = build_entry(e)
    is_module = isinstance(model, torch.nn.Module)
    meta = copy.deepcopy(model).to("meta") if is_module else model
    outs = meta(*(torch.empty(t.shape, dtype=t.dtype, device="meta") for t in inputs))
    outs = outs if isinstance(outs, tuple) else (outs,)
    weights = [t for t in (*model.parameters(), *model.buffers()) if t.is_floating_point()] if is_module else []
    moved = sum(t.numel() * t.element_size() for t in (*inputs, *weights, *outs))
    if moved != e.bytes or find_entry(e.name) != e:
        mismatches.append(f"{e.name}: declares {e.bytes}, its tensors hold {moved}")
print(f"bytes: {len(entries)} entries, {len(mismatches)} mismatches", *mismatches, sep="\n")

for name in ["gpt2_lm_log_softmax/4096x50257/fp32", "gpt2_bias_grad/32768x3072/fp32", "sd_groupnorm/32x320x64x64/fp32"]:
    compiled, _ = compile_entry(find_entry(name))
    launches = [s for s in compiled.manifest["steps"] if s["op"] == "launch"]
    assert compiled.ptx and ".entry" in compiled.ptx
    print(f"{name}: {len(launches)} kernel(s), tuned: {dict(compiled.compilation.tuned) or 'none'}")
