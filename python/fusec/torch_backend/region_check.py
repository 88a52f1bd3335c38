"""Each fusec region checked at its calls against its own FX graph (`options={"check_regions": True}`).

When a whole model's result is off, this says which region is: every call of a compiled region also
runs the region's ATen graph twice, in float64 (the reference: floating inputs widened) and as eager
would (the same inputs), and records for each floating output the RMS error over max |reference|
of fusec's result and of eager's. A region whose error is far above eager's is the place to look;
one at eager's is as exact as eager on the same inputs (the model's error then comes from how
regions' roundings add up, not from one region). The records are kept on the graph's report
(`Report.region_checks`, the worst call of each output) and printed with it. It costs two more runs
of every region per call: a tool for finding bugs, not for speed.

`fusec zoo --check-regions` prints the regions furthest above eager for each check.
"""

from __future__ import annotations

import dataclasses

import torch

from ..numerics import relative_error

__all__ = ["RegionCheck", "checked"]


@dataclasses.dataclass
class RegionCheck:
    region: str
    output: int
    error: float  # fusec's RMS error against float64, over max |reference| (the worst call)
    eager_error: float  # eager's, on the same call

    @property
    def ratio(self) -> float:
        return self.error / max(self.eager_error, 1e-12)

    def line(self) -> str:
        return (f"check   {self.region} output {self.output}: rms error {self.error:.2g} "
                f"(eager {self.eager_error:.2g}, {self.ratio:.2f}x)")


def _widened(args):
    return [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]


def checked(name: str, gm: torch.fx.GraphModule, call, records: list):
    """`call` (a compiled region) that also checks each call's floating outputs against `gm`'s,
    keeping the worst call of each output in `records` (a list of RegionCheck)."""
    def run(*args):
        outs = call(*args)
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            return outs  # inside a CUDA graph's capture (`cuda_graphs`): no host reads there
        with torch.no_grad():
            reference, eager = gm(*_widened(args)), gm(*args)
        as_tuple = isinstance(outs, tuple)
        for i, (got, want, theirs) in enumerate(zip(*(o if as_tuple else (o,) for o in (outs, reference, eager)))):
            if not isinstance(got, torch.Tensor) or not got.is_floating_point() or not got.numel():
                continue
            error, eager_error = relative_error(got, want, rms=True), relative_error(theirs, want, rms=True)
            record = next((r for r in records if r.region == name and r.output == i), None)
            if record is None:
                records.append(RegionCheck(name, i, error, eager_error))
            elif error > record.error:
                record.error, record.eager_error = error, eager_error
        return outs

    return run
