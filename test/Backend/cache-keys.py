# What the compile cache keys on, and what it survives: the same graph again is a hit; another
# compile option, another shape or dtype is a miss; a damaged entry is a miss that compiles again
# (never an error); `cache: False` leaves the folder alone; a change to fusec's source is a miss. Keys
# do not depend on FX node names.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize

private_cache()
import fusec.torch_backend as tb
import torch
from fusec.cache import CompileCache
from fusec.torch_backend.kernel import graph_text

MODEL = randomize(MLPBlock())


def compile_once(x=None, **options):
    """A fresh torch.compile (no graph or region left in this process); how its regions were found."""
    torch._dynamo.reset()
    tb._memory.clear()
    x = torch.randn(8, 64) if x is None else x
    with torch.no_grad():
        ok = close(torch.compile(MODEL.to(x.dtype), backend="fusec", options=options)(x), MODEL(x), 1e-2)
    statuses = [r.status for r in tb.reports[-1].regions]
    print(f"{' '.join(statuses)}; matches eager: {ok}; entries: {len(CompileCache().entries())}")


# CHECK-LABEL: TEST: hits_and_misses
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 2
# CHECK-NEXT:  cache cache; matches eager: True; entries: 2
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 4
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 6
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 8
print("TEST: hits_and_misses")
compile_once()
compile_once()
compile_once(fusion="elementwise")
compile_once(torch.randn(4, 64))
compile_once(torch.randn(8, 64, dtype=torch.float64))

# CHECK-LABEL: TEST: damaged_entry
# CHECK-NEXT:  cache compiled; matches eager: True; entries: 8
# CHECK-NEXT:  cache cache; matches eager: True; entries: 8
print("TEST: damaged_entry")
cache = CompileCache()
for key, summary in cache.entries().items():  # the add of the first compile (and of fusion=elementwise's)
    if summary["ops"] == "aten.add" and summary["inputs"] == "float32[8, 64], float32[8, 64]":
        with open(os.path.join(cache.entries_dir, key, "manifest.json"), "w") as f:
            f.write("{ not json")
MODEL.float()
compile_once()
compile_once()

# CHECK-LABEL: TEST: cache_off
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 8
print("TEST: cache_off")
compile_once(cache=False)

# A compiler whose source changed (another digest of fusec's files) misses what the old one stored.
# CHECK-LABEL: TEST: source_changed
# CHECK-NEXT:  compiled compiled; matches eager: True; entries: 10
print("TEST: source_changed")
import fusec.version

fusec.version.source_digest()
fusec.version._digest = "0" * 64  # as if one of fusec's files were edited
compile_once()

# CHECK-LABEL: TEST: key_ignores_node_names
# CHECK-NEXT:  same text: True
print("TEST: key_ignores_node_names")


def traced(names):
    graph = torch.fx.Graph()
    a, b = (graph.placeholder(n) for n in names)
    graph.output(graph.call_function(torch.ops.aten.add.Tensor, (a, b), {}, name=names[0] + "_sum"))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


print("same text:", graph_text(traced(["x", "y"])) == graph_text(traced(["arg0_1", "arg1_1"])))
