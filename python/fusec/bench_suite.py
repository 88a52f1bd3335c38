"""The bench suites: the models `fusec bench` times, at which shapes and dtypes, and how an entry is
built, compiled and checked. bench/*.py, `fusec tune`'s suite script and tools/check-byte-identity
take their entries from here.

Two suites (SUITES). `core`, the default: each entry (Entry) is (model, M x N shape, dtype), over a
grid of shapes that `fusec tune` tuned (data/tune-h200.json). `reductions`: reduction patterns of
real models (bench_models.py), each at its model's own fixed shapes, none of them in the tuning
table; an entry (ModelEntry) is (model, dtype), named model_pattern/shape/dtype after its first
input's shape. Both kinds of entry answer `name`, `input_shapes`, `make()`, `bytes` and `latency`.

Bandwidth is counted from minimal bytes: each input (weights too) read once, each output written
once (`Entry.bytes`). Working sets below 240 MB (4x the H200's 60 MB L2) stay in L2: those entries
are latency figures (`Entry.latency`).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re

import torch

import fusec

from .bench_models import REDUCTIONS, ModelWorkload
from .diagnostics import FusecError
from .numerics import compare
from .timing import MIN_WORKING_SET

__all__ = ["LARGE_SHAPES", "LATENCY_SHAPES", "DTYPES", "SUITES", "Workload", "SUITE", "REDUCTIONS", "Entry",
           "ModelEntry", "suite_entries", "find_entry", "build_entry", "compile_entry", "reference", "check_outputs",
           "one_line"]

F = torch.nn.functional

LARGE_SHAPES = [(32768, 4096), (16384, 8192), (4096, 32768), (16384, 5120), (16384, 11008)]
LATENCY_SHAPES = [(8, 4096)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


# ---- the models: each once, as in examples/ -------------------------------------------------------

def rmsnorm_silu_mul(x, w, up):  # examples/rmsnorm_silu_mul.py
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return F.silu(h) * up


def softmax_last(x):  # examples/softmax.py
    return torch.softmax(x, dim=-1)


def gelu_bias(x, b):  # test/Fusion/Inputs/gelu_bias.py
    return F.gelu(x + b, approximate="tanh")


def layernorm(n):  # examples/layernorm.py
    model = torch.nn.LayerNorm(n)
    with torch.no_grad():  # not the default ones and zeros, so that a mix-up of the two shows
        model.weight.normal_()
        model.bias.normal_()
    return model


class AddRMSNorm(torch.nn.Module):
    """s = x + residual; returns s (the next residual) and RMSNorm(s) * weight."""

    def __init__(self, n):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(n))

    def forward(self, x, residual):
        s = x + residual
        return s, s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


@dataclasses.dataclass(frozen=True)
class Workload:
    """A model of the suite. Shapes are written "MN" (M x N) or "N"; weights are the module's own."""

    name: str
    make: object  # N -> nn.Module or function, built on the CPU
    inputs: tuple  # shapes of the call's inputs
    weights: tuple = ()  # shapes of the module's parameters
    outputs: int = 1  # M x N outputs


SUITE = [
    Workload("rmsnorm_silu_mul", lambda n: rmsnorm_silu_mul, ("MN", "N", "MN")),
    Workload("softmax_last", lambda n: softmax_last, ("MN",)),
    Workload("layernorm", layernorm, ("MN",), weights=("N", "N")),
    Workload("gelu_bias", lambda n: gelu_bias, ("MN", "N")),
    Workload("add_rmsnorm", AddRMSNorm, ("MN", "MN"), weights=("N",), outputs=2),
]

SUITES = {"core": "the suite's models over a grid of M x N shapes (the tuning table's)",
          "reductions": "reduction patterns of real models at the models' own shapes (bench_models.py)"}


# ---- the entries ----------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Entry:
    workload: Workload
    M: int
    N: int
    dtype: str

    @property
    def name(self) -> str:
        return f"{self.workload.name}/{self.M}x{self.N}/{self.dtype}"

    def shapes(self, codes) -> list[tuple]:
        return [(self.M, self.N) if c == "MN" else (self.N,) for c in codes]

    @property
    def input_shapes(self) -> list[tuple]:
        return self.shapes(self.workload.inputs)

    def make(self):
        return self.workload.make(self.N)

    def fields(self) -> dict:
        """The entry's shape, for a bench row's JSON."""
        return {"M": self.M, "N": self.N}

    @property
    def bytes(self) -> int:
        """Minimal bytes: every input and weight read once, every output written once."""
        w = self.workload
        elements = sum(math.prod(s) for s in self.shapes(w.inputs + w.weights)) + w.outputs * self.M * self.N
        return elements * DTYPES[self.dtype].itemsize

    @property
    def latency(self) -> bool:
        return self.bytes < MIN_WORKING_SET


@dataclasses.dataclass(frozen=True)
class ModelEntry:
    """An entry of the `reductions` suite: a model at its own shapes, in one dtype."""

    workload: ModelWorkload
    dtype: str

    @property
    def shape(self) -> str:
        """The first input's shape, as the name gives it (4096x50257)."""
        return "x".join(map(str, self.workload.inputs[0]))

    @property
    def name(self) -> str:
        return f"{self.workload.name}/{self.shape}/{self.dtype}"

    @property
    def input_shapes(self) -> list[tuple]:
        return list(self.workload.inputs)

    def make(self):
        return self.workload.make()

    def fields(self) -> dict:
        return {"shapes": [list(s) for s in self.workload.inputs]}

    @property
    def bytes(self) -> int:
        """Minimal bytes: every input and weight read once, every output written once."""
        return self.workload.elements * DTYPES[self.dtype].itemsize

    @property
    def latency(self) -> bool:
        return self.bytes < MIN_WORKING_SET


def suite_entries(shapes, dtypes, pattern, suite: str = "core") -> list:
    """The entries of `suite` in `dtypes` whose name matches `pattern` (a regex; None: all). The core
    suite's at `shapes` (M, N); the reductions suite's shapes are fixed (`shapes` must be None)."""
    if suite == "core":
        entries = [Entry(w, m, n, d) for d in dtypes for m, n in shapes for w in SUITE]
    elif suite == "reductions":
        if shapes:
            raise FusecError("--shapes applies to the core suite only: the reductions suite's entries have fixed "
                             "shapes, their models' (use --filter to pick entries)")
        entries = [ModelEntry(w, d) for d in dtypes for w in REDUCTIONS]
    else:
        raise FusecError(f"no bench suite is called {suite!r} (suites: {', '.join(SUITES)})")
    return [e for e in entries if re.search(pattern, e.name)] if pattern else entries


def find_entry(name: str):
    """The entry called `name`: model/MxN/dtype of the core suite, at any shape, or an entry of the
    reductions suite (model_pattern/shape/dtype, its shape fixed)."""
    found = next((e for e in suite_entries(None, list(DTYPES), None, "reductions") if e.name == name), None)
    if found:
        return found
    m = re.fullmatch(r"(\w+)/(\d+)x(\d+)/(\w+)", name)
    workload = next((w for w in SUITE if m and w.name == m[1]), None)
    if workload is None or m[4] not in DTYPES:
        raise FusecError(f"no bench entry is called {name!r} "
                         "(see `fusec bench --list`, `fusec bench --suite reductions --list`)")
    return Entry(workload, int(m[2]), int(m[3]), m[4])


def build_entry(entry) -> tuple:
    """(the entry's model, example inputs of its shapes and dtype), on the CPU; the same weights in
    every process (the seed is fixed). `entry`: an Entry or a ModelEntry."""
    dtype = DTYPES[entry.dtype]
    torch.manual_seed(0)
    model = entry.make()
    model = model.to(dtype).requires_grad_(False) if isinstance(model, torch.nn.Module) else model
    return model, tuple(torch.empty(s, dtype=dtype) for s in entry.input_shapes)


def compile_entry(entry, **options):
    """(fusec's compile of the entry's model at its shapes, the model); built on the CPU."""
    model, inputs = build_entry(entry)
    return fusec.compile(model, inputs, **options), model


# ---- checking an entry's outputs ------------------------------------------------------------------

def reference(model, inputs) -> tuple:
    """Eager in float64, rounded to the entry's dtype: the check then measures fusec's error alone
    (eager's own fp32 rounding over rows of 32K elements is of the order of the fp32 tolerance)."""
    wide = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    outs = wide(*(t.double() for t in inputs))
    return tuple(o.to(inputs[0].dtype) for o in (outs if isinstance(outs, tuple) else (outs,)))


def check_outputs(outs, refs: tuple) -> None:
    """fusec's outputs against the reference, with `fusec run`'s tolerances."""
    outs = outs if isinstance(outs, tuple) else (outs,)
    if len(outs) != len(refs):
        raise FusecError(f"fusec returned {len(outs)} outputs, eager {len(refs)}")
    for i, (o, r) in enumerate(zip(outs, refs)):
        if o.shape != r.shape or o.dtype != r.dtype:
            raise FusecError(f"output {i} is {str(o.dtype)[6:]}{list(o.shape)}, eager's {str(r.dtype)[6:]}{list(r.shape)}")
        max_abs, _, tol = compare(o, r)
        if not max_abs <= tol:
            raise FusecError(f"output {i} differs from eager (float64): max abs err {max_abs:.3e} > tolerance {tol:.3e}")


def one_line(err: BaseException) -> str:
    """An entry's failure in one line (a bench row's note, a tuning log line)."""
    text = err.message if isinstance(err, FusecError) else f"{type(err).__name__}: {err}"
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else type(err).__name__)[:200]
