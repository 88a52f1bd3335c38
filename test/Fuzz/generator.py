# The fuzzer's model generator, without fusec: 300 models from one seed load as MODEL.py files, run
# in PyTorch eager with finite results unless the model says it holds specials (the generator bounds
# every value it makes; NaN and inf come only from an input's value class or a -inf mask, and then
# the model's hints say `specials=1`), stay within the size limit, and together use every op family,
# dtype, model form, value class, mask and zero-size dim the generator has.

# RUN: %python %s | FileCheck %s

import collections
import os
import tempfile

import torch
from fusec.frontend import load_model_file
from fusec.fuzz import generate
from fusec.fuzz.oracle import _references
from hypothesis import HealthCheck, Phase, given, seed, settings

seen = collections.Counter()
problems = []


def check(model, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(model.source())
    spec = load_model_file(path)
    plain, ref32, ref64, unrounded, _ = _references(spec)
    for out in plain + ref32 + ref64 + unrounded:
        if not model.specials and not torch.isfinite(out.float()).all():
            problems.append(f"non-finite output: {model.summary()}")
    if model.specials != ("specials=1" in model.source()):
        problems.append(f"hints do not say specials: {model.summary()}")
    for t in spec.example_inputs:
        if t.numel() > generate.MAX_ELEMENTS:
            problems.append(f"input of {t.numel()} elements: {model.summary()}")
    seen.update(model.ops)
    seen.update(model.dtypes)
    seen["module"] += model.as_module
    seen["long row"] += any(d in generate.LONG_ROWS for v in model.inputs for d in v.shape)
    seen["two outputs"] += len(model.outputs) == 2
    seen.update(v.values for v in model.inputs)
    seen["-inf mask"] += model.masked
    seen["zero-size dim"] += any(0 in v.shape for v in model.inputs)


with tempfile.TemporaryDirectory() as tmp:
    generate.isolate_hypothesis(tmp)  # no .hypothesis/ where the test runs; models from the seed alone

    @settings(max_examples=300, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @seed(7)
    @given(generate.models())
    def test(model):
        check(model, os.path.join(tmp, "model.py"))

    test()

print("TEST: generator")
print(f"problems: {len(problems)}")
for p in problems[:10]:
    print(f"  {p}")
wanted = generate.UNARY + generate.BINARY + generate.REDUCE + generate.LAYOUT + (
    "cast", "float32", "bfloat16", "float16", "module", "long row", "two outputs", *generate.VALUE_CLASSES,
    "-inf mask", "zero-size dim")
print("missing:", " ".join(w for w in wanted if not seen[w]) or "none")
print("layout ops:", sum(seen[w] for w in generate.LAYOUT))

# CHECK-LABEL: TEST: generator
# CHECK-NEXT:  problems: 0
# CHECK-NEXT:  missing: none

# Shapes the generator derives: a size-1 dim takes the other operand's size, a zero one included (it
# took the larger, 1, and a layer_norm over the result then had the wrong normalized_shape: eager
# raised on a generated model, `fusec fuzz --target cuda` seed 32).
from fusec.fuzz.model import broadcast  # noqa: E402

print("TEST: broadcast")
print(broadcast((0, 255), (1, 255)), broadcast((1, 1), (0, 7)), broadcast((3, 1), (1, 4)), broadcast((3,), (4,)))
# CHECK-LABEL: TEST: broadcast
# CHECK-NEXT:  (0, 255) (0, 7) (3, 4) None

# An input of huge values (1e30) makes a model `specials`: eager's layer_norm of it is NaN on the CPU
# (E[x^2] overflows), and such a reference was refused as a generator bug (cuda fuzz, seeds 31, 65).
import torch.nn.functional as F  # noqa: E402
from fusec.fuzz.model import Builder, Model  # noqa: E402

print("TEST: huge")
print("layer_norm of 1e30:", F.layer_norm(torch.full((1, 1), 1e30), (1, 1)).item())
huge = Builder(lambda strategy: "huge" if "sampled_from" in repr(strategy) else 0, Model(seed=0, as_module=False))
huge.new_input((1, 1), "float32")
print("specials:", huge.m.specials)
# CHECK-LABEL: TEST: huge
# CHECK-NEXT:  layer_norm of 1e30: nan
# CHECK-NEXT:  specials: True
