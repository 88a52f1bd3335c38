"""Random models for `fusec fuzz`: a hypothesis strategy whose examples render as MODEL.py text.

A model is a straight-line function of random inputs (torch.randn): pointwise ops, broadcasts
(bias vectors, size-1 dims, scalars), reductions (sum/mean/amax over random axes, softmax,
log-softmax, LayerNorm, RMSNorm from mean/pow/rsqrt) and casts between fp32 and bf16/fp16, on
shapes of rank 1-3 with size-1, odd and sometimes long (4099, 8192) dimensions.

The generator keeps every model well defined, so that a difference between fusec and PyTorch is
fusec's and not the model's:
- each value carries an interval that bounds it (inputs are randn: |x| <= 6 but with negligible
  probability); an op whose result could overflow (exp of a large value, a product of large values)
  is replaced by tanh, rsqrt and division only see values bounded away from zero, and only values
  that fit in fp16 are cast to it. No model produces inf or NaN.
- `exact` marks values computed without rounding (inputs, neg, relu, clamp, where, amax and casts of
  exact values). `where` only compares exact values: a comparison of rounded values flips when
  fusec's last bit differs from PyTorch's, which is a legitimate difference, not a bug.
Every choice is ordered simplest first (fp32, one op, small shapes, the latest value), so hypothesis
shrinks a failure towards a short model.
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import strategies as st

__all__ = ["Model", "isolate_hypothesis", "models"]

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

UNARY = ("neg", "relu", "scalar", "exp", "tanh", "sigmoid", "silu", "gelu", "gelu_tanh", "rsqrt", "pow2", "clamp")
BINARY = ("add", "mul", "sub", "div", "where")
FAMILIES = ("unary", "binary", "reduce") * 3 + ("cast",)  # weights 3:3:3:1
REDUCE = ("sum", "mean", "amax", "softmax", "log_softmax", "layer_norm", "rms_norm")


@dataclasses.dataclass(frozen=True)
class Value:
    name: str
    shape: tuple
    dtype: str  # float32 | bfloat16 | float16
    lo: float
    hi: float
    exact: bool = False

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

    @property
    def narrowest(self) -> str:
        return next((d for d in LOW if d in self.dtypes), "float32")

    def summary(self) -> str:
        shapes = ", ".join(f"{v.dtype}{list(v.shape)}" for v in self.inputs + self.params)
        return f"{', '.join(self.ops)} on {shapes}"

    def source(self) -> str:
        head = [f'"""fusec fuzz model: {self.summary()}."""',
                f"# fuzz-oracle: narrowest={self.narrowest} longest-reduction={self.longest_reduction}",
                "", "import torch", "",
                f"torch.manual_seed({self.seed})  # the same example inputs on every run", "", ""]
        args = ", ".join(v.name for v in self.inputs)
        body = [f"    {line}" for line in self.lines] + [f"    return {', '.join(self.outputs)}"]
        if self.as_module:
            code = ["class FuzzModel(torch.nn.Module):", "    def __init__(self):", "        super().__init__()"]
            code += [f"        self.{p.name} = torch.nn.Parameter({_randn(p)})" for p in self.params]
            code += ["", f"    def forward(self, {args}):"]
            code += [f"        {p.name} = self.{p.name}" for p in self.params]
            code += ["    " + line for line in body] + ["", "", "model = FuzzModel()"]
        else:
            code = [f"def fuzz_model({args}):"] + body + ["", "", "model = fuzz_model"]
        inputs = ", ".join(_randn(v) for v in self.inputs)
        code.append(f"example_inputs = ({inputs}{',' if len(self.inputs) == 1 else ''})")
        return "\n".join(head + code) + "\n"


def _randn(v: Value) -> str:
    dims = ", ".join(str(d) for d in v.shape)
    return f"torch.randn({dims})" if v.dtype == "float32" else f"torch.randn({dims}, dtype=torch.{v.dtype})"


# -- shapes, dtypes and intervals --------------------------------------------------------------

def broadcast(a: tuple, b: tuple) -> tuple | None:
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y) if 1 in (x, y) else x)
    return tuple(out)


def promote(a: Value, b: Value | None) -> str:
    """PyTorch's result dtype of a binary op (a 0-d tensor does not promote a dimensioned one)."""
    if b is None or a.dtype == b.dtype:
        return a.dtype
    if (a.shape == ()) != (b.shape == ()):
        return b.dtype if a.shape == () else a.dtype
    return "float32"  # any two of fp32, bf16, fp16 that differ


def _span(*xs) -> tuple[float, float]:
    return min(xs), max(xs)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x > -700 else 0.0


class _Builder:
    def __init__(self, draw, model: Model):
        self.draw, self.m = draw, model
        self.values: list[Value] = []

    def new_input(self, shape: tuple, dtype: str, *, parameter: bool = False) -> Value:
        n = len(self.m.inputs) + len(self.m.params)
        v = Value(f"{'p' if parameter else 'x'}{n}", tuple(shape), dtype, -6.0, 6.0, exact=True)
        (self.m.params if parameter else self.m.inputs).append(v)
        self.values.append(v)
        self.m.dtypes.add(dtype)
        return v

    def emit(self, op: str, expr: str, shape: tuple, dtype: str, lo: float, hi: float, exact: bool = False) -> Value:
        v = Value(f"v{len(self.m.lines)}", tuple(shape), dtype, lo, hi, exact)
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
            return f"(torch.sigmoid({v.name}) + 0.5)", _sigmoid(v.lo) + 0.5, _sigmoid(v.hi) + 0.5
        if v.magnitude ** 2 + 1.0 > limit:
            return f"(torch.sigmoid({v.name}) + 0.5)", _sigmoid(v.lo) + 0.5, _sigmoid(v.hi) + 0.5
        return f"({v.name}.pow(2) + 1.0)", 1.0, v.magnitude ** 2 + 1.0


# -- ops -----------------------------------------------------------------------------------------

def _unary(b: _Builder, op: str, a: Value):
    n, lo, hi = a.name, a.lo, a.hi
    if op == "neg":
        return f"-{n}", -hi, -lo, a.exact
    if op == "relu":
        return f"torch.relu({n})", max(lo, 0.0), max(hi, 0.0), a.exact
    if op == "scalar":
        fmt, f, exact = b.draw(st.sampled_from(SCALARS))
        return fmt.format(n), *_span(f(lo), f(hi)), a.exact and exact
    if op == "exp":
        if hi > 13.0:  # exp(13) ~ 4.4e5 < BOUND
            n, lo, hi = f"torch.clamp({n}, max=10.0)", min(lo, 10.0), 10.0
        return f"torch.exp({n})", math.exp(lo), math.exp(hi), False
    if op == "tanh":
        return f"torch.tanh({n})", math.tanh(lo), math.tanh(hi), False
    if op == "sigmoid":
        return f"torch.sigmoid({n})", _sigmoid(lo), _sigmoid(hi), False
    if op in ("silu", "gelu", "gelu_tanh"):
        expr = {"silu": f"torch.nn.functional.silu({n})", "gelu": f"torch.nn.functional.gelu({n})",
                "gelu_tanh": f'torch.nn.functional.gelu({n}, approximate="tanh")'}[op]
        return expr, (-0.28 if lo < 0 else 0.0), max(hi, 0.0), False  # min of silu -0.2785, gelu -0.17
    if op == "rsqrt":
        expr, plo, phi = b.positive(a)
        return f"torch.rsqrt({expr})", 1.0 / math.sqrt(phi), 1.0 / math.sqrt(plo), False
    if op == "pow2":
        return f"{n}.pow(2)", (0.0 if lo <= 0.0 <= hi else min(lo * lo, hi * hi)), a.magnitude ** 2, False
    if op == "clamp":
        cmin, cmax = b.draw(st.sampled_from(CLAMPS))
        args = ", ".join(f"{k}={c}" for k, c in (("min", cmin), ("max", cmax)) if c is not None)
        clo = lo if cmin is None else min(max(lo, cmin), cmax if cmax is not None else math.inf)
        chi = hi if cmax is None else max(min(hi, cmax), cmin if cmin is not None else -math.inf)
        return f"torch.clamp({n}, {args})", min(clo, chi), max(clo, chi), a.exact
    raise AssertionError(op)


def _binary(b: _Builder, op: str, a: Value):
    if op == "where":
        return _where(b, a)
    c = b.operand(a)
    if isinstance(c, float):
        other, clo, chi, shape, cval = repr(c), c, c, a.shape, None
    else:
        other, clo, chi, shape, cval = c.name, c.lo, c.hi, broadcast(a.shape, c.shape), c
    dtype = promote(a, cval)
    if op == "add":
        return f"{a.name} + {other}", shape, dtype, a.lo + clo, a.hi + chi, False
    if op == "sub":
        return f"{a.name} - {other}", shape, dtype, a.lo - chi, a.hi - clo, False
    if op == "mul":
        return f"{a.name} * {other}", shape, dtype, *_span(a.lo * clo, a.lo * chi, a.hi * clo, a.hi * chi), False
    # div: by a value bounded away from zero
    if isinstance(c, float):
        return f"{a.name} / {other}", shape, dtype, *_span(a.lo / c, a.hi / c), False
    expr, dlo, dhi = b.positive(c)
    return (f"{a.name} / {expr}", shape, dtype,
            *_span(a.lo / dlo, a.lo / dhi, a.hi / dlo, a.hi / dhi), False)


def _where(b: _Builder, a: Value):
    e = b.pick(lambda v: v.exact and broadcast(v.shape, a.shape) is not None)
    if e is None:
        e = b.new_input(a.shape or (1,), a.dtype)
    cmp = b.draw(st.sampled_from(COMPARISONS))
    f = b.pick(lambda v: v.exact and v is not e and broadcast(v.shape, e.shape) is not None
               and broadcast(v.shape, a.shape) is not None) if b.draw(st.booleans()) else None
    cond = f"{e.name} {cmp} {f.name if f else b.draw(st.sampled_from(THRESHOLDS))}"
    shape = broadcast(a.shape, e.shape if f is None else broadcast(e.shape, f.shape))
    c = b.operand(a)
    if isinstance(c, float):
        return f"torch.where({cond}, {a.name}, {c!r})", shape, a.dtype, min(a.lo, c), max(a.hi, c), a.exact
    return (f"torch.where({cond}, {a.name}, {c.name})", broadcast(shape, c.shape), promote(a, c),
            min(a.lo, c.lo), max(a.hi, c.hi), a.exact and c.exact)


def _dims(b: _Builder, rank: int, *, several: bool) -> tuple:
    mode = b.draw(st.integers(0, 2 if several and rank > 1 else 1))
    if mode == 0:
        return (rank - 1,)
    if mode == 1:
        return (b.draw(st.integers(0, rank - 1)),)
    return tuple(i for i in range(rank) if b.draw(st.booleans())) or (rank - 1,)


def _dim_text(dims: tuple, rank: int) -> str:
    if dims == (rank - 1,):
        return "-1"
    return str(dims[0]) if len(dims) == 1 else str(tuple(dims))


def _reduce(b: _Builder, op: str, a: Value):
    rank = len(a.shape)
    if op in ("sum", "mean", "amax"):
        dims = _dims(b, rank, several=True)
        keep = b.draw(st.booleans())
        n = math.prod(a.shape[d] for d in dims)
        shape = tuple(1 if i in dims else s for i, s in enumerate(a.shape)) if keep else \
            tuple(s for i, s in enumerate(a.shape) if i not in dims)
        kd = ", keepdim=True" if keep else ""
        d = _dim_text(dims, rank)
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        if op == "amax":
            return f"torch.amax({a.name}, dim={d}{kd})", shape, a.dtype, a.lo, a.hi, a.exact
        lo, hi = (a.lo * n, a.hi * n) if op == "sum" else (a.lo, a.hi)
        return f"{a.name}.{op}(dim={d}{kd})", shape, a.dtype, lo, hi, False
    if op in ("softmax", "log_softmax"):
        (dim,) = _dims(b, rank, several=False)
        n = a.shape[dim]
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        lo = 0.0 if op == "softmax" else a.lo - a.hi - math.log(n)
        return f"torch.{op}({a.name}, dim={_dim_text((dim,), rank)})", a.shape, a.dtype, lo, \
            (1.0 if op == "softmax" else 0.0), False
    if op == "layer_norm":
        k = 2 if rank >= 2 and b.draw(st.integers(0, 3)) == 3 else 1
        norm = a.shape[-k:]
        n = math.prod(norm)
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        bound = math.sqrt(max(n - 1, 0))  # |x - mean| / std <= sqrt(n - 1)
        affine = b.draw(st.integers(0, 2))  # 0: none, 1: weight, 2: weight and bias
        w = b.new_input(norm, a.dtype, parameter=b.m.as_module) if affine >= 1 else None
        bias = b.new_input(norm, a.dtype, parameter=b.m.as_module) if affine == 2 else None
        scale = 6.0 if w else 1.0
        shift = 6.0 if bias else 0.0
        expr = (f"torch.nn.functional.layer_norm({a.name}, {tuple(norm)}, {w.name if w else None}, "
                f"{bias.name if bias else None}, eps=1e-5)")
        return expr, a.shape, a.dtype, -bound * scale - shift, bound * scale + shift, False
    if op == "rms_norm":
        (dim,) = _dims(b, rank, several=False)
        n = a.shape[dim]
        if a.magnitude ** 2 > (FP16_MAX if a.dtype == "float16" else BOUND):
            return f"torch.tanh({a.name})", a.shape, a.dtype, math.tanh(a.lo), math.tanh(a.hi), False
        b.m.longest_reduction = max(b.m.longest_reduction, n)
        bound = math.sqrt(n)  # |x| / sqrt(mean(x^2)) <= sqrt(n)
        expr = f"{a.name} * torch.rsqrt({a.name}.pow(2).mean({_dim_text((dim,), rank)}, keepdim=True) + 1e-6)"
        if b.draw(st.booleans()):
            w = b.new_input(a.shape[-1:], a.dtype, parameter=b.m.as_module)
            return f"{expr} * {w.name}", a.shape, a.dtype, -6.0 * bound, 6.0 * bound, False
        return expr, a.shape, a.dtype, -bound, bound, False
    raise AssertionError(op)


def _cast(b: _Builder, a: Value):
    if a.dtype != "float32":
        return "cast", f"{a.name}.float()", a.shape, "float32", a.lo, a.hi, a.exact
    kind = b.draw(st.integers(0, 2))
    # rounding moves a value by < 1%: widen its interval by that
    lo, hi = min(a.lo * 1.01, a.lo * 0.99), max(a.hi * 1.01, a.hi * 0.99)
    if kind == 1 and a.magnitude <= FP16_MAX:
        return "cast", f"{a.name}.to(torch.float16)", a.shape, "float16", lo, hi, a.exact
    if kind == 2:
        b.m.dtypes.add("bfloat16")
        return "cast", f"{a.name}.to(torch.bfloat16).float()", a.shape, "float32", lo, hi, a.exact
    return "cast", f"{a.name}.to(torch.bfloat16)", a.shape, "bfloat16", lo, hi, a.exact


@st.composite
def _one_step(draw, b: _Builder, first: bool) -> bool:
    """Whether to go on, then one op: one span, so that the shrinker deletes an op as one piece."""
    if not first and draw(st.integers(0, 7)) == 0:
        return False
    outer, b.draw = b.draw, draw
    try:
        _step(b)
    finally:
        b.draw = outer
    return True


def _step(b: _Builder) -> None:
    family = b.draw(st.sampled_from(FAMILIES))
    a = b.pick()
    if family == "reduce" and a.shape == ():
        family = "unary"
    if family == "unary":
        op = b.draw(st.sampled_from(UNARY))
        expr, lo, hi, exact = _unary(b, op, a)
        shape, dtype = a.shape, a.dtype
    elif family == "binary":
        op = b.draw(st.sampled_from(BINARY))
        expr, shape, dtype, lo, hi, exact = _binary(b, op, a)
    elif family == "reduce":
        op = b.draw(st.sampled_from(REDUCE))
        expr, shape, dtype, lo, hi, exact = _reduce(b, op, a)
    else:
        op, expr, shape, dtype, lo, hi, exact = _cast(b, a)
    if max(abs(lo), abs(hi)) > BOUND or (dtype == "float16" and max(abs(lo), abs(hi)) > FP16_MAX):
        # could overflow: a bounded op instead
        op, expr, shape, dtype, lo, hi, exact = "tanh", f"torch.tanh({a.name})", a.shape, a.dtype, \
            math.tanh(a.lo), math.tanh(a.hi), False
    b.emit(op, expr, shape, dtype, lo, hi, exact)


def _shape(draw, rows: bool = False) -> tuple:
    """A tensor shape; with `rows`, of rank 2 or more with 2 rows or more (a row count to vary)."""
    rank = draw(st.integers(2 if rows else 1, 3))
    dims = [draw(st.sampled_from(DIMS[1:] if rows and i == 0 else DIMS)) for i in range(rank)]
    if draw(st.integers(0, 5)) == 5:
        dims[-1] = draw(st.sampled_from(LONG_ROWS))
    for i in range(rank - 1):  # shrink leading dims until the tensor is small enough
        least = 2 if rows and i == 0 else 1
        while math.prod(dims) > MAX_ELEMENTS and dims[i] > least:
            dims[i] = max(least, dims[i] // 2 | 1) if dims[i] > 2 else least
    return tuple(dims)


@st.composite
def models(draw, rows: bool = False) -> Model:
    """A hypothesis strategy of random models; with `rows`, the first input has rows to vary (rank 2
    or more, 2 rows or more: `fusec fuzz --dynamic-rows`)."""
    dtype = ("float32",) * 7 + ("bfloat16",) * 2 + ("float16",)
    # One seed for the inputs of every model: two examples that differ only in their random inputs
    # are one model (and are not both tried); the structure is what is random.
    m = Model(seed=0, as_module=draw(st.integers(0, 3)) == 3)
    b = _Builder(draw, m)
    b.new_input(_shape(draw, rows), dtype[draw(st.integers(0, 9))])
    for i in range(MAX_OPS):  # 1 to MAX_OPS ops
        if not draw(_one_step(b, i == 0)):
            break
    computed = [v for v in b.values if v.name.startswith("v")]
    m.outputs = [computed[-1].name]
    if len(computed) > 1 and draw(st.integers(0, 3)) == 3:  # a second output, as multi-output models have
        m.outputs.append(computed[draw(st.integers(0, len(computed) - 2))].name)
    return m


def isolate_hypothesis(home: str) -> None:
    """Make hypothesis a pure function of --seed that writes nothing where it runs.

    Besides its example database (off: database=None), hypothesis keeps a cache under ./.hypothesis
    and, since 6.131, mixes literals found in the "local" (not installed) modules of sys.modules
    into its choices: the models of one seed would depend on fusec's own source text, on whether
    fusec is installed editable, and on what was imported when, and the shrinking pass must replay
    the first pass exactly. Its home goes to a temporary folder and the local constants are off."""
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(home)
    try:
        from hypothesis.internal.conjecture import providers

        no_constants = providers.Constants()
        providers._get_local_constants = lambda: no_constants
    except (ImportError, AttributeError):  # a hypothesis without the feature
        pass
