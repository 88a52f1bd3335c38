"""The kernels of fused groups: what `--fusec-lower-groups-to-gpu` builds, in three steps.

  1. facts   (`facts.read_group`) read a group's ops on buffers once: its members, reductions,
             outputs, rows, widths, and what would keep a schedule from building it;
  2. plan    (`plan.plan`) decide, in plain Python, the schedule and its numbers from those facts
             and the pass's knobs: a frozen `Plan`, or a `Refusal` with its reason;
  3. build   (`row_registers`, `row_loop`, `flat`: one builder per schedule) turn the plan into a
             gpu.launch, with the kernel-body evaluator (`kernel`), the block-wide combinations
             (`combine`), the prefetch, the one-round variance and the stash.

Nothing here is a pass (`fusec.passes` holds those). Only `facts` reads linalg ops through
`fusec.passes.classify_ops` (the builders get what it says from each `kernel.Member`); `plan`
imports no MLIR (of fusec, only the knob table).
"""
