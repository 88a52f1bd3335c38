"""The records of `fusec fuzz`'s models: a value with the interval that bounds it, a model and its
MODEL.py text, and the builder that adds inputs and ops to one (fusec.fuzz.ops draws the ops,
fusec.fuzz.generate the whole model)."""

from __future__ import annotations

import dataclasses
import math
import re

from hypothesis import strategies as st

__all__ = ["Value", "Model", "Builder", "broadcast", "promote", "span", "sigmoid", "randn_text"]

DIMS = (1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 33, 64, 100, 127, 128, 255, 256, 257, 1000, 1001)
LONG_ROWS = (4099, 8192)
MAX_ELEMENTS = 1 << 16  # per tensor: keeps eager, the CPU target and the compile of one model fast
MAX_OPS = 8
BOUND = 1e6  # largest magnitude a value may reach; far from fp32 overflow, and checked before fp16
FP16_MAX = 6e4
LOW = ("bfloat16", "float16")
CLAMPS = ((-1.0, 1.0), (0.0, None), (None, 0.5), (-2.5, 3.0))
# (text, the same on a float, whether it rounds nothing)
SCALARS = (("{} * 0.5", lambda x: x * 0.5, True), ("{} + 1.0", lambda x: x + 1.0, False),
           ("2.0 - {}", lambda x: 2.0 - x, False), ("{} / 3.0", lambda x: x / 3.0, False),
           ("{} * -1.5", lambda x: x * -1.5, False))
CONSTANTS = (2.0, 0.5, -1.0, 3.0)
COMPARISONS = (">", "<", ">=", "<=")
THRESHOLDS = (0.0, 0.5, -1.0)

# An input's values: randn mostly, else randn with NaNs or +-infs at random places, or randn scaled
# to huge (1e30: past fp16) or subnormal (1e-40) magnitudes. (text of the extra step, interval scale)
VALUE_CLASSES = {"randn": ("", 1.0), "nan": ('.masked_fill(torch.rand({dims}) < 0.1, float("nan"))', 1.0),
                 "inf": ('.masked_fill(torch.rand({dims}) < 0.05, float("inf"))'
                         '.masked_fill(torch.rand({dims}) < 0.05, float("-inf"))', 1.0),
                 "huge": (" * 1e30", 1e30), "tiny": (" * 1e-40", 1e-40)}
UNARY = ("neg", "relu", "scalar", "exp", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh", "rsqrt", "pow2", "clamp")
BINARY = ("add", "mul", "sub", "div", "where")
FAMILIES = ("unary", "binary", "reduce") * 3 + ("cast", "layout")  # weights 3:3:3:1:1
REDUCE = ("sum", "mean", "amax", "softmax", "log_softmax", "layer_norm", "rms_norm", "cumsum")
# Ops that move elements and compute nothing (a rotate_half negates half of them)
LAYOUT = ("slice", "flip", "roll", "transpose", "chunk", "cat", "rotate_half")

@dataclasses.dataclass(frozen=True)
class Value:
    name: str
    shape: tuple
    dtype: str  # float32 | bfloat16 | float16
    lo: float
    hi: float
    exact: bool = False
    # may also hold non-finite values the interval leaves out: NaN or +-inf from its input class, or
    # -inf from a mask (IEEE arithmetic on them is exact, so eager and fusec must agree on them)
    special: bool = False
    values: str = "randn"  # an input's class, VALUE_CLASSES

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))


@dataclasses.dataclass
class Model:
    """One generated model; `source()` is its MODEL.py text."""

    seed: int
    as_module: bool
    inputs: list = dataclasses.field(default_factory=list)  # Values: function arguments
    params: list = dataclasses.field(default_factory=list)  # Values: nn.Parameters (module form)
    lines: list = dataclasses.field(default_factory=list)  # "vN = ..." statements
    outputs: list = dataclasses.field(default_factory=list)
    ops: list = dataclasses.field(default_factory=list)
    dtypes: set = dataclasses.field(default_factory=set)
    longest_reduction: int = 1
    masked: bool = False  # a -inf mask (masked_fill, where) is in the model
    rows: bool = False  # dim 0 of the first input varies (`--dynamic-rows`): layout ops leave dim 0 be

    @property
    def specials(self) -> bool:
        """Whether a value may be NaN or infinite (an input class, a mask). Huge inputs count: eager's
        layer_norm of 1e30 values is NaN on the CPU (its E[x^2] overflows), though fusec's Welford
        is finite; the reference was called invalid (cuda fuzz, seeds 31 and 65)."""
        return self.masked or any(v.special or 0 in v.shape for v in self.inputs)  # a mean of no elements: NaN

    @property
    def narrowest(self) -> str:
        return next((d for d in LOW if d in self.dtypes), "float32")

    def summary(self) -> str:
        shapes = ", ".join(f"{v.dtype}{list(v.shape)}" for v in self.inputs + self.params)
        return f"{', '.join(self.ops)} on {shapes}"

    def source(self) -> str:
        head = [f'"""fusec fuzz model: {self.summary()}."""',
                f"# fuzz-oracle: narrowest={self.narrowest} longest-reduction={self.longest_reduction}"
                + (" specials=1" if self.specials else ""),
                "", "import torch", "",
                f"torch.manual_seed({self.seed})  # the same example inputs on every run", "", ""]
        args = ", ".join(v.name for v in self.inputs)
        body = [f"    {line}" for line in self.lines] + [f"    return {', '.join(self.outputs)}"]
        if self.as_module:
            code = ["class FuzzModel(torch.nn.Module):", "    def __init__(self):", "        super().__init__()"]
            code += [f"        self.{p.name} = torch.nn.Parameter({randn_text(p)})" for p in self.params]
            code += ["", f"    def forward(self, {args}):"]
            code += [f"        {p.name} = self.{p.name}" for p in self.params]
            code += ["    " + line for line in body] + ["", "", "model = FuzzModel()"]
        else:
            code = [f"def fuzz_model({args}):"] + body + ["", "", "model = fuzz_model"]
        inputs = ", ".join(randn_text(v) for v in self.inputs)
        code.append(f"example_inputs = ({inputs}{',' if len(self.inputs) == 1 else ''})")
        return "\n".join(head + code) + "\n"


def randn_text(v: Value) -> str:
    dims = ", ".join(str(d) for d in v.shape)
    extra = VALUE_CLASSES[v.values][0].format(dims=dims or "()")
    if v.dtype == "float32":
        return f"torch.randn({dims}){extra}"
    return f"(torch.randn({dims}){extra}).to(torch.{v.dtype})" if extra else \
        f"torch.randn({dims}, dtype=torch.{v.dtype})"


# -- shapes, dtypes and intervals --------------------------------------------------------------

def broadcast(a: tuple, b: tuple) -> tuple | None:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(y if x == 1 else x)  # a 1 takes the other size, 0 included: (0,) with (1,) is (0,)
    return tuple(out)


def promote(a: Value, b: Value | None) -> str:
    """PyTorch's result dtype of a binary op (a 0-d tensor does not promote a dimensioned one)."""
    if b is None or a.dtype == b.dtype:
        return a.dtype
    if (a.shape == ()) != (b.shape == ()):
        return b.dtype if a.shape == () else a.dtype
    return "float32"  # any two of fp32, bf16, fp16 that differ


def span(*xs) -> tuple[float, float]:
    return min(xs), max(xs)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


class Builder:
    def __init__(self, draw, model: Model):
        self.draw, self.m = draw, model
        self.values: list[Value] = []

    def new_input(self, shape: tuple, dtype: str, *, parameter: bool = False) -> Value:
        n = len(self.m.inputs) + len(self.m.params)
        kinds = [k for k in VALUE_CLASSES if not (k == "huge" and dtype == "float16")]
        values = "randn" if parameter or self.draw(st.integers(0, 4)) else self.draw(st.sampled_from(kinds))
        scale = VALUE_CLASSES[values][1]
        v = Value(f"{'p' if parameter else 'x'}{n}", tuple(shape), dtype, -6.0 * scale, 6.0 * scale, exact=True,
                  special=values in ("nan", "inf", "huge"), values=values)  # huge: eager's own squares overflow
        (self.m.params if parameter else self.m.inputs).append(v)
        self.values.append(v)
        self.m.dtypes.add(dtype)
        return v

    def emit(self, op: str, expr: str, shape: tuple, dtype: str, lo: float, hi: float, exact: bool = False,
             special: bool = False) -> Value:
        named = set(re.findall(r"\b[xpv]\d+\b", expr))
        special = special or any(u.special for u in self.values if u.name in named)
        v = Value(f"v{len(self.m.lines)}", tuple(shape), dtype, lo, hi, exact, special)
        self.m.lines.append(f"{v.name} = {expr}")
        self.m.ops.append(op)
        self.m.dtypes.add(dtype)
        self.values.append(v)
        return v

    def pick(self, ok=lambda v: True) -> Value | None:
        """A value: mostly the most recent one (chains of ops, little dead code), else any."""
        candidates = [v for v in reversed(self.values) if ok(v)]
        if not candidates:
            return None
        if self.draw(st.integers(0, 2)) < 2:
            return candidates[0]
        return candidates[self.draw(st.integers(0, len(candidates) - 1))]

    def other_dtype(self, dtype: str) -> str:
        if self.draw(st.integers(0, 5)) < 5:
            return dtype
        return self.draw(st.sampled_from([d for d in ("float32",) + LOW if d != dtype]))

    def operand(self, a: Value, *, constant: bool = True) -> Value | float:
        """The second operand of a binary op with `a`: an earlier value, a new input of a's shape, a
        bias vector, an input with size-1 dims (broadcast), or a Python float."""
        kind = self.draw(st.integers(0, 4 if constant else 3))
        shape = a.shape or (1,)
        if kind == 0:
            return self.pick(lambda v: broadcast(v.shape, a.shape) is not None)
        if kind == 1:
            return self.new_input(shape, self.other_dtype(a.dtype))
        if kind == 2:
            return self.new_input(shape[-1:], self.other_dtype(a.dtype), parameter=self.m.as_module)
        if kind == 3:
            ones = tuple(1 if self.draw(st.booleans()) else d for d in shape)
            return self.new_input(ones[self.draw(st.integers(0, len(ones) - 1)):], self.other_dtype(a.dtype))
        return self.draw(st.sampled_from(CONSTANTS))

    def positive(self, v: Value) -> tuple[str, float, float]:
        """An expression of `v` that is >= 0.5 (or v itself when it already is far from zero); in
        fp16 (computed op by op in fp16) no step of it may overflow."""
        if v.lo >= 0.5:
            return v.name, v.lo, v.hi
        kind = self.draw(st.integers(0, 2))
        limit = FP16_MAX if v.dtype == "float16" else BOUND
        if kind == 2 and -20.0 <= v.lo and v.hi <= math.log(limit):
            return f"torch.exp({v.name})", math.exp(v.lo), math.exp(v.hi)
        if kind == 1:
            return f"(torch.sigmoid({v.name}) + 0.5)", sigmoid(v.lo) + 0.5, sigmoid(v.hi) + 0.5
        if v.magnitude ** 2 + 1.0 > limit:
            return f"(torch.sigmoid({v.name}) + 0.5)", sigmoid(v.lo) + 0.5, sigmoid(v.hi) + 0.5
        return f"({v.name}.pow(2) + 1.0)", 1.0, v.magnitude ** 2 + 1.0
