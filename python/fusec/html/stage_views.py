"""The stages of one compile as the walkthrough page shows them: each stage's IR, the passes that
made it (from the stage table in stages.py, with a one-line note for each), the ops that appeared
and disappeared, and a unified diff from the previous stage (difflib) when both are MLIR."""

from __future__ import annotations

import collections
import dataclasses
import difflib
import re

from fusec.passes import lookup



__all__ = ["StageView", "stage_views", "PASS_NOTES"]

# What each upstream pass of the stage table does, in a line (fusec's own passes say it themselves:
# fusec.passes.REGISTRY).
PASS_NOTES = {
    "torch-backend-to-linalg-on-tensors-backend-pipeline":
        "torch-mlir: decompose ATen ops, then convert torch to linalg, tensor, arith and math on tensors",
    "canonicalize": "fold constants and simplify ops by their canonical patterns",
    "cse": "common subexpression elimination",
    "one-shot-bufferize": "tensors to buffers (memrefs), in place where it is safe, whole program",
    "convert-linalg-to-parallel-loops": "linalg ops no group took become scf.parallel loop nests",
    "scf-parallel-loop-tiling": "tile those loops: the inner tile becomes the threads of a block",
    "gpu-map-parallel-loops": "map the tiled loops to GPU blocks and threads (an attribute)",
    "convert-parallel-loops-to-gpu": "mapped scf.parallel loops become gpu.launch regions",
    "lower-affine": "affine maps and ops to plain arith",
    "gpu-launch-sink-index-computations": "move constants into the launch bodies before outlining",
    "gpu-kernel-outlining": "each gpu.launch becomes a gpu.func in a gpu.module + a gpu.launch_func",
    "math-expand-ops": "expand math ops with no direct lowering (powi) into simpler ones",
    "convert-scf-to-cf": "structured loops to branches between blocks",
    "convert-gpu-to-nvvm": "gpu, arith, math and memref to the llvm + nvvm dialects (math as libdevice calls)",
    "reconcile-unrealized-casts": "remove the casts the conversions left between type systems",
    "expand-strided-metadata": "memref views to explicit offsets and strides",
    "convert-linalg-to-loops": "linalg ops to scf.for loop nests",
    "math-extend-to-supported-types": "math on bf16 computed in f32",
    "arith-emulate-unsupported-floats": "bf16 arithmetic computed in f32",
    "arith-expand": "expand arith ops with no direct lowering",
    "convert-math-to-libm": "math ops to libm calls",
    "convert-math-to-llvm": "math ops to LLVM intrinsics",
    "convert-arith-to-llvm": "arith to the llvm dialect",
    "finalize-memref-to-llvm": "memrefs to LLVM pointers and descriptors",
    "convert-cf-to-llvm": "branches to the llvm dialect",
    "convert-func-to-llvm": "functions to llvm.func (bare-pointer calling convention)",
}

_OP = re.compile(r'^\s*(?:%[^=]*= )?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?[\s(<{:@]', re.M)


@dataclasses.dataclass
class StageView:
    index: int
    name: str
    summary: str
    language: str  # mlir | llvm | ptx
    passes: list  # [(pass pipeline element, note)]
    text: str
    diff: list | None  # unified diff lines from the previous stage, None when not comparable
    appeared: list  # [(op, count)] ops this stage has and the previous had not
    disappeared: list

    @property
    def lines(self) -> int:
        return self.text.count("\n") + (not self.text.endswith("\n"))


def op_counts(text: str) -> collections.Counter:
    """Ops of a printed MLIR module, by name (generic and custom forms)."""
    return collections.Counter(m for m in _OP.findall(text) if not m.startswith(("loc.", "attributes.")))


def _note(element: str) -> str:
    name = element.split("{", 1)[0]
    nested = re.match(r"^([\w.]+)\((.*)\)$", element)
    if nested:  # func.func(convert-linalg-to-parallel-loops): the note of the nested pass(es)
        inner = [e.strip() for e in re.split(r",\s*(?![^{]*\})", nested[2])]
        return f"on each {nested[1]}: " + "; ".join(_note(e) for e in inner)
    info = lookup(name)
    return info.summary if info else PASS_NOTES.get(name, "")


def stage_views(comp) -> list[StageView]:
    """The stages `comp` reached, in order, with what made each and what changed."""
    views, previous = [], None
    for i, stage in enumerate(comp.target.stages):
        if stage.name not in comp.texts:
            continue
        text = comp.texts[stage.name]
        if stage.passes is not None:
            passes = [(e, _note(e)) for e in stage.passes(comp.options)]
        else:
            passes = [(p.split(":", 1)[0], p.split(": ", 1)[1]) for p in stage.steps]
        language = stage.language
        diff, appeared, disappeared = None, [], []
        if previous is not None and previous.language == language == "mlir":
            diff = list(difflib.unified_diff(previous.text.splitlines(), text.splitlines(),
                                             f"{previous.index:02d}-{previous.name}", f"{i:02d}-{stage.name}",
                                             n=2, lineterm=""))
            before, after = op_counts(previous.text), op_counts(text)
            appeared = sorted((op, n) for op, n in after.items() if op not in before)
            disappeared = sorted((op, n) for op, n in before.items() if op not in after)
        previous = StageView(i, stage.name, stage.summary, language, passes, text, diff, appeared, disappeared)
        views.append(previous)
    return views
