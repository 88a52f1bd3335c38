"""The partition report: for one graph torch.compile handed fusec, what ran where and why.

Printed (to stderr) when the backend's `explain` option is set or FUSEC_EXPLAIN=1; always kept in
`fusec.torch_backend.reports` for programs and tests. Example:

    fusec: graph 0: 9 ATen ops -> 2 fusec regions (2 kernels, cpu), 5 ops in PyTorch
      fusec   fusec_region_0  cpu  native_layer_norm, gelu -> main_kernel_0 [compiled 2.1s]
      fusec   fusec_region_1  cpu  add -> main_kernel_0 [cache]
      (a region compiled with dynamic rows says so: `-> main_kernel_0, rows0 dynamic [compiled 1.9s]`)
      pytorch aten.addmm x2   matmul (contraction): PyTorch's cuBLAS/MKL kernel; ...
      pytorch aten.t x2       a view with no arithmetic beside it: stays a free PyTorch view
"""

from __future__ import annotations

import collections
import dataclasses
import os
import sys

__all__ = ["Report", "explain_enabled"]

_STATUS = {"compiled": "compiled {s:.1f}s", "cache": "from the disk cache", "memory": "already compiled",
           "per-shape": "compiled per input shape, at its calls"}


def explain_enabled(options: dict) -> bool:
    """The backend's `explain` option, else FUSEC_EXPLAIN (any value but '', '0', 'false', 'no')."""
    if "explain" in options:
        return bool(options["explain"])
    return os.environ.get("FUSEC_EXPLAIN", "").strip().lower() not in ("", "0", "false", "no")


@dataclasses.dataclass
class Report:
    graph_id: int
    n_ops: int
    regions: list  # RegionResult
    pytorch_ops: collections.Counter  # (op, reason) -> count
    cuda_graphs: bool = False
    padded_matmuls: list = dataclasses.field(default_factory=list)  # pad_matmuls's lines
    region_checks: list = dataclasses.field(default_factory=list)  # region_check.RegionCheck, filled at calls
    constants: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # ops folded at compile

    @property
    def fusec_regions(self) -> list:
        return [r for r in self.regions if r.status != "pytorch"]

    @property
    def kernels(self) -> list[str]:
        """Every kernel fusec emitted for this graph, as `region/kernel`."""
        return [f"{r.name}/{k}" for r in self.fusec_regions for k in r.kernels]

    def ops_in_pytorch(self) -> int:
        return sum(self.pytorch_ops.values()) + sum(len(r.ops) for r in self.regions if r.status == "pytorch")

    def summary(self) -> str:
        regions = self.fusec_regions
        targets = sorted({r.target for r in regions})
        kernels = f" ({len(self.kernels)} kernel{'s' * (len(self.kernels) != 1)}, {', '.join(targets)})" if regions else ""
        graphs = ", replayed as a CUDA graph" if self.cuda_graphs else ""
        return (f"fusec: graph {self.graph_id}: {self.n_ops} ATen ops -> {len(regions)} fusec "
                f"region{'s' * (len(regions) != 1)}{kernels}, {self.ops_in_pytorch()} ops in PyTorch{graphs}")

    def lines(self) -> list[str]:
        rows = [self.summary()]
        for r in self.regions:
            ops = ", ".join(o.removeprefix("aten.") for o in r.ops)
            if r.status == "pytorch":
                rows.append(f"  pytorch {r.name}  {ops}: {r.reason}")
            else:
                status = _STATUS[r.status].format(s=r.seconds)
                symbols = r.compiled.manifest.get("symbols", []) if r.compiled is not None else []
                dynamic = "".join(f", {s} dynamic" for s in symbols)
                kernels = ", ".join(r.kernels) or "kernels at its first call"
                rows.append(f"  fusec   {r.name}  {r.target}  {ops} -> {kernels}{dynamic} [{status}]")
        if self.constants:
            folded = ", ".join(_count(op.removeprefix("aten."), n) for op, n in sorted(self.constants.items()))
            rows.append(f"  once    {folded}: constants (no input reaches them), computed at compile time")
        rows += [f"  pytorch {line}" for line in self.padded_matmuls]
        rows += [f"  {check.line()}" for check in self.region_checks]
        width = max((len(_count(op, n)) for (op, _), n in self.pytorch_ops.items()), default=0)
        for (op, why), n in sorted(self.pytorch_ops.items()):
            rows.append(f"  pytorch {_count(op, n):<{width}}  {why}")
        return rows

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def print(self, stream=None) -> None:
        stream = stream or sys.stderr
        stream.write(str(self) + "\n")
        stream.flush()


def _count(op: str, n: int) -> str:
    return f"{op} x{n}" if n > 1 else op
