"""Run one zoo model through `torch.compile(model, backend="fusec")` against eager, and judge it.

Two checks per model, each on fresh copies of the same random weights:

- inference: the model's logits, in eval mode, under no_grad;
- training: one step in train mode (dropout is off in every zoo config): the loss
  `mean(logits.float() ** 2)`, its backward, then the loss and every parameter's gradient.

Errors are per tensor, against the same model in a wider type, eager: float64 for a float32 run
(the cpu target in CI), float32 for a bfloat16 run (the GPU). fusec passes when on every tensor its
error is within what eager's own error on that tensor allows:

- float32: max |got - reference| / max |reference| at most FP32_MULTIPLE times eager's (plus FLOOR,
  for tensors eager gets exactly);
- bfloat16: PyTorch's own accuracy rule for compiled models (torch._dynamo.utils.same with a
  float64 reference, what its benchmarks judge Inductor by): the root-mean-square error against the
  reference, here divided by max |reference|, at most `bf16_multiple(numel)` times eager's: 3, 8 for
  tensors of at most 500 elements, 10 for at most 10 (a loss is one number, and eager's error on
  it can be near zero by chance). A tighter rule fails by chance: over 5 seeds of tiny BERT,
  Inductor's worst gradient was 1.1-2.4 times eager's error, and fusec's 1.3-1.9 times.

(Per tensor, because a gradient that is nearly zero by cancellation has a large relative error in
eager too.)

Parameters a config initializes to a constant (norm weights of 1, biases of 0) and batch norm's
running statistics are randomized first, so that a kernel that drops a weight or a bias is caught.

A model must never fail because of fusec: a raise, a region fusec's backend reports as its own bug,
or a graph the backend gave back whole are failures, whatever the numbers. Ops fusec cannot compile
are not failures: they stay in PyTorch, and the result counts them by kind.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import time
import warnings

import torch

from ..numerics import relative_error
from ..torch_backend.kernel import NO_KERNEL
from .models import Unavailable, ZooModel

__all__ = ["FLOOR", "FP32_MULTIPLE", "bf16_multiple", "Check", "GraphCounts", "ZooResult", "run_model"]

FP32_MULTIPLE = 10.0
FLOOR = 1e-6


def bf16_multiple(numel: int) -> float:
    """How many times eager-bfloat16's RMSE a bfloat16 tensor of `numel` elements may be off
    (torch._dynamo.utils.same's multipliers, with its larger ones for small tensors)."""
    return 10.0 if numel <= 10 else 8.0 if numel <= 500 else 3.0
_BUG = "(a fusec bug)"


@dataclasses.dataclass
class GraphCounts:
    """What the graphs of one check became: fusec regions that launch kernels, kernels, and the
    ATen ops left in PyTorch by kind (contraction, attention, view, other) and, for `other`, by op."""

    graphs: int = 0
    ops: int = 0
    regions: int = 0
    kernels: int = 0
    pytorch: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # kind -> ops
    other: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # op -> count
    bugs: list = dataclasses.field(default_factory=list)  # report lines that name a fusec bug
    region_checks: list = dataclasses.field(default_factory=list)  # with check_regions: RegionCheck records

    @property
    def in_pytorch(self) -> int:
        return sum(self.pytorch.values())


def _kind(reason: str) -> str:
    if reason.startswith(("matmul", "convolution")):
        return "contraction"
    if reason.startswith("attention"):
        return "attention"
    if reason.startswith(("a view with no arithmetic", "size arithmetic")):
        return "view"
    return "other"


def count_reports(reports) -> GraphCounts:
    """GraphCounts over partition reports (fusec.torch_backend.report.Report)."""
    counts = GraphCounts(graphs=len(reports))
    for report in reports:
        counts.region_checks += report.region_checks
        counts.ops += report.n_ops
        counts.regions += len(report.fusec_regions)
        counts.kernels += len(report.kernels)
        for (op, reason), n in report.pytorch_ops.items():
            kind = _kind(reason)
            counts.pytorch[kind] += n
            if kind == "other":
                counts.other[op] += n
            if _BUG in reason or "the fusec backend failed" in reason:
                counts.bugs.append(f"graph {report.graph_id}: {op}: {reason}")
        for region in report.regions:
            if region.status == "pytorch":
                kind = "region without a kernel" if region.reason == NO_KERNEL else "region fusec could not take"
                counts.pytorch[kind] += len(region.ops)
                if _BUG in region.reason:
                    counts.bugs.append(f"graph {report.graph_id}: {region.name} ({', '.join(region.ops)}): "
                                       f"{region.reason}")
    return counts


@dataclasses.dataclass
class Check:
    mode: str  # inference | training
    error: float = float("nan")
    eager_error: float = float("nan")
    tolerance: float = float("nan")
    worst: str = ""  # the tensor the numbers are of (logits, loss, grad NAME)
    metric: str = "error"  # what `error` is: "error" (max, float32) or "rms error" (bfloat16)
    counts: GraphCounts = dataclasses.field(default_factory=GraphCounts)
    problem: str = ""  # why it failed other than by its numbers (a raise, a fusec bug)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.problem and not self.counts.bugs and self.error <= self.tolerance


@dataclasses.dataclass
class ZooResult:
    name: str
    checks: list
    unavailable: str = ""  # why the model could not be built here (its library does not import)

    @property
    def passed(self) -> bool:
        return not self.unavailable and all(c.passed for c in self.checks)


def judge(check: "Check", got: dict, want: dict, eager: dict, bf16: bool) -> None:
    """Fill `check` from tensors by name: each tensor is judged against eager's error on it (a
    gradient eager gets to 1e-3 allows fusec 1e-2 in float32; one eager gets to 1e-7 allows 1e-6),
    and the check shows the tensor closest to (or furthest past) its tolerance."""
    worst = None
    for name, w in want.items():
        error, eager_error = relative_error(got.get(name), w, bf16), relative_error(eager[name], w, bf16)
        tolerance = (bf16_multiple(w.numel()) if bf16 else FP32_MULTIPLE) * eager_error + FLOOR
        ratio = error / tolerance
        if worst is None or ratio > worst[0]:
            worst = (ratio, name, error, eager_error, tolerance)
    _, check.worst, check.error, check.eager_error, check.tolerance = worst
    check.metric = "rms error" if bf16 else "error"


def _logits(out) -> torch.Tensor:
    return out if isinstance(out, torch.Tensor) else out["logits"]


def _cast_inputs(inputs: dict, dtype, device) -> dict:
    return {k: v.to(device=device, dtype=dtype if v.is_floating_point() else v.dtype) for k, v in inputs.items()}


def _cast(model, inputs: dict, dtype, device):
    return copy.deepcopy(model).to(device=device, dtype=dtype), _cast_inputs(inputs, dtype, device)


def _inference(model, inputs, compiled=None) -> dict:
    """{"logits": ...} of `compiled` (else `model`) in eval mode."""
    model.eval()
    with torch.no_grad():
        return {"logits": _logits((model if compiled is None else compiled)(**inputs))}


def _training(model, inputs, compiled=None) -> dict:
    """The loss and every parameter's gradient after one backward of `compiled` (else `model`: the
    module whose parameters `compiled` uses) in train mode."""
    model.train()
    model.zero_grad(set_to_none=True)
    loss = _logits((model if compiled is None else compiled)(**inputs)).float().pow(2).mean()
    loss.backward()
    return {"loss": loss.detach(), **{f"grad {name}": p.grad for name, p in model.named_parameters()}}


@contextlib.contextmanager
def _full_precision():
    """No TF32 for the reference (cuDNN's convolutions use it by default on the GPU)."""
    saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved


def _first_line(err: BaseException) -> str:
    return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0][:300]}"


def other_shape(inputs: dict) -> dict:
    """Inputs of another shape, for a model compiled with dynamic=True: one more in the batch, and
    token ids 3 longer (random values of the same kind)."""
    other = {}
    for name, v in inputs.items():
        shape = [v.shape[0] + 1, *v.shape[1:]]
        if not v.is_floating_point() and v.dim() == 2:
            shape[1] += 3
        other[name] = torch.randn(shape, dtype=v.dtype) if v.is_floating_point() else \
            torch.randint(0, int(v.max()) + 1, shape, dtype=v.dtype)
    return other


def _labelled(tensors: dict, label: str) -> dict:
    return {f"{name} {label}" if label else name: t for name, t in tensors.items()}


def _check(mode: str, run, model, inputs, dtype, reference_dtype, device, options, dynamic=False) -> Check:
    import fusec.torch_backend as tb

    check, start = Check(mode), time.perf_counter()
    # With dynamic=True the compiled model runs at a second shape too: the same graphs, no recompile.
    shapes = [inputs, other_shape(inputs)] if dynamic else [inputs]
    labels = [" x ".join("x".join(map(str, v.shape)) for v in i.values()) if dynamic else "" for i in shapes]
    want, eager = {}, {}
    try:
        for each, label in zip(shapes, labels):
            with _full_precision():
                want.update(_labelled(run(*_cast(model, each, reference_dtype, device)), label))
            eager.update(_labelled(run(*_cast(model, each, dtype, device)), label))
    except Exception as err:  # noqa: BLE001 (the zoo's own problem: the model does not run eagerly)
        check.problem = f"eager raised (not fusec) {_first_line(err)}"
        return check
    torch._dynamo.reset()
    first = len(tb.reports)
    try:
        compiled_model, _ = _cast(model, inputs, dtype, device)
        compiled = torch.compile(compiled_model, backend="fusec", options=options, dynamic=dynamic or None)
        got = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for each, label in zip(shapes, labels):
                got.update(_labelled(run(compiled_model, _cast_inputs(each, dtype, device), compiled), label))
        judge(check, got, want, eager, bf16=dtype != torch.float32)
        crashes = [str(w.message) for w in caught if str(w.message).startswith("fusec:")
                   and ("crashed" in str(w.message) or "signal" in str(w.message))]
        if crashes:
            check.problem = f"a compile worker crashed: {crashes[0][:300]}"
    except Exception as err:  # noqa: BLE001 (a raise is this model's failure, not the run's)
        check.problem = f"raised {_first_line(err)}"
    check.counts = count_reports(tb.reports[first:])
    check.seconds = time.perf_counter() - start
    return check


def randomize_constants(model: torch.nn.Module) -> torch.nn.Module:
    """Every parameter whose elements are all equal gets uniform noise of +-0.5 around its value;
    running means and variances become random (variances in [0.5, 1.5])."""
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and p.numel() > 1 and bool((p == p.flatten()[0]).all()):
                p.add_(torch.rand_like(p) - 0.5)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.normal_(0.0, 0.1)
            elif name.endswith("running_var"):
                b.uniform_(0.5, 1.5)
    return model


def run_model(entry: ZooModel, *, size: str = "tiny", device: str = "cpu", dtype=torch.float32,
              modes=("inference", "training"), options: dict | None = None, dynamic: bool = False) -> ZooResult:
    """Build `entry` at `size` (random weights, seed 0) and run its checks on `device` (`dynamic`:
    compiled with dynamic=True, and checked at a second shape too)."""
    torch.manual_seed(0)
    try:
        model, inputs = entry.build(size)
        randomize_constants(model)
    except Unavailable as err:
        return ZooResult(entry.name, [], unavailable=str(err))
    reference_dtype = torch.float64 if dtype == torch.float32 else torch.float32
    runs = {"inference": _inference, "training": _training}
    checks = [_check(mode, runs[mode], model, inputs, dtype, reference_dtype, torch.device(device), options or {},
                     dynamic) for mode in modes]
    return ZooResult(entry.name, checks)
