# RUN: %python %s | FileCheck %s

# `fusec bench` against the heuristic (issue 8), without a GPU: rows as run_entry makes them, given to
# the table and the summary. An entry whose compile used tuned schedules is also timed with the
# heuristic's: the text table gets a second line under its row (its columns stay as they are), the
# markdown table two columns after fusec's (`heur us`, `tuned/heur` = heuristic us / tuned us), the
# summary a line. Rows that compared nothing leave both tables as they were.

from fusec.commands.bench_table import HEADER, heuristic_line, markdown_table, row_cells as _cells, summary, text_line


def timing(us, gbs=1000.0, pct=25.0, kernels=1):
    return {"us": us, "GBs": gbs, "pct_copy": pct, "kernels": kernels, "timing": "graph"}


def row(name, fusec_us, heur_us=None, tuned=True, **extra):
    r = {"name": name, "bytes": 1_610_629_120, "working_set_below_240MB": False, "status": "PASS",
         "fusec": timing(fusec_us), "eager": timing(500.0), "compile": timing(400.0), "ratio": 400.0 / fusec_us}
    if heur_us is not None:
        r["heuristic"] = timing(heur_us, 900.0, 22.5)
        r["tuned_over_heuristic"] = heur_us / fusec_us
        if tuned:
            r["tuned"] = {"0": "tune-h200.json: 734fe8e8e147af72|rows<=32768,row=4096|NVIDIA H200|0.1.0"}
    return r | extra


faster = row("rmsnorm_silu_mul/32768x4096/fp32", 380.0, heur_us=400.0, tuned_knobs="0.read_only_cache=inputs")
same = row("softmax_last/32768x4096/fp32", 300.0, heur_us=303.0)
slower = row("layernorm/32768x4096/fp32", 310.0, heur_us=300.0)
plain = row("gelu_bias/32768x4096/fp32", 250.0)
failed = row("add_rmsnorm/32768x4096/fp32", 500.0, heuristic_error="output 0 differs from eager (float64)")
failed["tuned"] = {"0": "tune-h200.json: ..."}
forced = row("gelu_bias/16384x8192/fp32", 250.0, heur_us=251.0, tuned=False)

print("TEST: text")
print(text_line(HEADER))
for r in (faster, plain, failed):
    print(text_line(_cells(r)))
    if heuristic_line(r):
        print(heuristic_line(r))
# CHECK-LABEL: TEST: text
# CHECK:      entry MB fusec us GB/s %copy eager us GB/s %copy compile us GB/s %copy kernels f/e/c us/kernel f/e/c fusec/compile check note{{$}}
# CHECK-NEXT: rmsnorm_silu_mul/32768x4096/fp32 1610.6 380.0 1000 25.0 500.0 1000 25.0 400.0 1000 25.0 1/1/1 1.05 PASS tuned 0.read_only_cache=inputs{{$}}
# CHECK-NEXT: {{^}}  heuristic schedules 400.0 900 22.5 tuned/heur 1.05{{$}}
# CHECK-NEXT: gelu_bias/32768x4096/fp32 1610.6 250.0 1000 25.0 500.0 1000 25.0 400.0 1000 25.0 1/1/1 1.60 PASS{{$}}
# CHECK-NEXT: add_rmsnorm/32768x4096/fp32 1610.6 500.0 {{.*}} 0.80 PASS heuristic: output 0 differs from eager (float64){{$}}

# The heuristic's columns line up under fusec's.
print("TEST: aligned")
lines = [text_line(HEADER), text_line(_cells(faster)), heuristic_line(faster)]
print("fusec us ends at", lines[0].index("fusec us") + len("fusec us"), "; times end at",
      lines[1].index("380.0") + 5, lines[2].index("400.0") + 5)
# CHECK-LABEL: TEST: aligned
# CHECK: fusec us ends at [[END:[0-9]+]] ; times end at [[END]] [[END]]

print("TEST: markdown")
print("\n".join(markdown_table([faster, plain, failed, forced])))
# CHECK-LABEL: TEST: markdown
# CHECK:      | entry | MB | fusec us | GB/s | %copy | heur us | tuned/heur | eager us | GB/s | %copy | compile us | {{.*}} | check | note |
# CHECK-NEXT: |:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|:--|
# CHECK-NEXT: | rmsnorm_silu_mul/32768x4096/fp32 | 1610.6 | 380.0 | 1000 | 25.0 | 400.0 | 1.05 | 500.0 | {{.*}} | PASS | tuned 0.read_only_cache=inputs |
# CHECK-NEXT: | gelu_bias/32768x4096/fp32 | 1610.6 | 250.0 | 1000 | 25.0 |  |  | 500.0 | {{.*}} | PASS |  |
# CHECK-NEXT: | add_rmsnorm/32768x4096/fp32 | 1610.6 | 500.0 | 1000 | 25.0 | - | - | 500.0 | {{.*}} | PASS | heuristic: output 0 differs from eager (float64) |
# CHECK-NEXT: | gelu_bias/16384x8192/fp32 | 1610.6 | 250.0 | 1000 | 25.0 | 251.0 | (1.00) | 500.0 | {{.*}} | PASS |  |

print("TEST: markdown-unchanged")
print("\n".join(markdown_table([plain])))
# CHECK-LABEL: TEST: markdown-unchanged
# CHECK-NOT:  heur us
# CHECK:      | entry | MB | fusec us | GB/s | %copy | eager us |
# CHECK-NEXT: |:--|
# CHECK-NEXT: | gelu_bias/32768x4096/fp32 | 1610.6 | 250.0 | 1000 | 25.0 | 500.0 |

print("TEST: summary")
print("\n".join(summary([faster, same, slower, plain, failed, forced])))
# CHECK-LABEL: TEST: summary
# CHECK:      geomean fusec/torch.compile (> 1: fusec faster): {{.*}} over 6 entries
# CHECK-NEXT: median % of copy
# CHECK-NEXT: tuned schedules: 4 entries tuned; faster than the heuristic on 1 (by > 2%), within noise on 1, slower on 1; the heuristic not timed on 1; geomean tuned/heur 1.01 (> 1: tuned faster)
# CHECK-NEXT: untuned entries timed twice (--heuristic; the noise): geomean 1.004, from 1.004 to 1.004 over 1 entry
# CHECK-NEXT: 6 PASS, 0 FAIL

print("TEST: summary-unchanged")
print("\n".join(summary([plain])))
# CHECK-LABEL: TEST: summary-unchanged
# CHECK-NEXT: geomean fusec/torch.compile (> 1: fusec faster): 1.60 over 1 entry
# CHECK-NEXT: median % of copy (working sets >= 240 MB, 1 entry): fusec 25.0, torch.compile 25.0, eager 25.0
# CHECK-NEXT: 1 PASS, 0 FAIL
