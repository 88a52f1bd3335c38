"""The cases of one OpInfo entry: its samples as functions of their tensors, chosen deterministically.

A `SampleInput` (input, args, kwargs) becomes a `Case`: a function of its tensor arguments alone, the
non-tensor arguments baked in (torch.export then sees them as constants, as a model would). Its
tensors are the sample's own; a 2-D-or-larger tensor also gets a strided copy (the same values, laid
out transposed in memory: `t.mT.contiguous().mT`), run through the same compiled function, since
fusec's runtime takes whatever layout it is given.

The compile key is what `fusec.compile` depends on: the entry, the tensors' shapes and dtypes and the
baked arguments. Cases of one key (OpInfo's reference inputs give many value sets per shape, extremal
values included) share one compile, so the cost of a run is its number of keys. `select` keeps up to
`max_keys` keys per entry and dtype (half of them with NaN or inf among their inputs), and every case
of a kept key (up to `max_cases`); `in_shard` picks (entry, dtype) pairs by a stable hash, so a
shard is the same on every machine.
"""

from __future__ import annotations

import dataclasses
import zlib

__all__ = ["Case", "cases", "in_shard", "select"]


@dataclasses.dataclass
class Case:
    key: str  # the compile key (see the module docstring)
    label: str  # what the sample is, for reports: shapes, dtypes, the baked arguments
    fn: object  # a function of `tensors`
    tensors: tuple
    variant: str  # "sample", "reference", or "strided" for the transposed-layout copy


class _Slot:
    """Where a tensor argument was in the sample: replaced by the function's parameter."""

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"T{self.index}"


def _lift(value, tensors):
    import torch

    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _Slot(len(tensors) - 1)
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        return type(value)(_lift(v, tensors) for v in value)
    return value


def _fill(value, tensors):
    if isinstance(value, _Slot):
        return tensors[value.index]
    if isinstance(value, (list, tuple)) and any(isinstance(v, _Slot) for v in value):
        return type(value)(_fill(v, tensors) for v in value)
    return value


def _describe(t) -> str:
    dtype = str(t.dtype).replace("torch.", "")
    return f"{dtype}{list(t.shape)}"


def _bake(op, sample):
    """(function of the sample's tensors, the tensors, label) or None when it has no tensor."""
    tensors = []
    inp = _lift(sample.input, tensors)
    args = [_lift(a, tensors) for a in sample.args]
    kwargs = {k: _lift(v, tensors) for k, v in sample.kwargs.items()}
    if not tensors:
        return None
    call = op.op

    def fn(*ts):
        return call(_fill(inp, ts), *(_fill(a, ts) for a in args), **{k: _fill(v, ts) for k, v in kwargs.items()})

    shown = ", ".join([repr(inp)] + [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    label = f"({shown}) with " + ", ".join(f"T{i}={_describe(t)}" for i, t in enumerate(tensors))
    return fn, tuple(tensors), label


def _strided(t):
    """The same values in a transposed memory layout (non-contiguous for 2-D+ with two dims > 1)."""
    return t.mT.contiguous().mT if t.dim() >= 2 else t


def _fingerprint(tensors) -> str:
    """A cheap summary of the values, to drop the cases PyTorch repeats exactly."""
    import torch

    parts = []
    for t in tensors:
        parts.append(f"{t.stride()}:{t.storage_offset()}")
        if t.numel():
            f = t.detach().double() if t.dtype.is_floating_point or t.dtype == torch.bool else t.detach().double()
            parts.append(f"{float(torch.nan_to_num(f, nan=7.0, posinf=11.0, neginf=13.0).sum()):.10g}"
                         f":{int(torch.isnan(f).sum())}")
    return ";".join(parts)


def cases(op_id: str, op, dtype: str) -> list[Case]:
    """Every distinct case of `op` for `dtype` on cpu: sample inputs, reference inputs, strided copies."""
    import torch

    dt = getattr(torch, dtype)
    out, seen = [], set()
    sources = (("sample", op.sample_inputs("cpu", dt)), ("reference", op.reference_inputs("cpu", dt)))
    for variant, samples in sources:
        for sample in samples:
            baked = _bake(op, sample)
            if baked is None:
                continue
            fn, tensors, label = baked
            key = f"{op_id}|{dtype}|{label}"
            todo = [(variant, tensors)]
            if any(t.dim() >= 2 and sorted(t.shape)[-2] > 1 for t in tensors):
                todo.append(("strided", tuple(_strided(t) for t in tensors)))
            for v, ts in todo:
                mark = (key, _fingerprint(ts))
                if mark not in seen:
                    seen.add(mark)
                    out.append(Case(key, label, fn, ts, v))
    return out


def in_shard(op_id: str, dtype: str, shard: tuple[int, int] | None) -> bool:
    """Whether entry `op_id` at `dtype` belongs to shard K of N (1-based): a stable hash (crc32, not
    Python's salted hash), so a shard is the same everywhere and the N shards cover the suite once."""
    if shard is None:
        return True
    k, n = shard
    return zlib.crc32(f"{op_id}|{dtype}".encode()) % n == k - 1


def _nonfinite(case: Case) -> bool:
    import torch

    return any(t.dtype.is_floating_point and t.numel() and not bool(torch.isfinite(t).all()) for t in case.tensors)


def _spread(items: list, n: int) -> list:
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def select(all_cases: list[Case], *, max_keys: int, max_cases: int) -> list[Case]:
    """The cases of up to `max_keys` compile keys, up to `max_cases` cases per key. Half the keys
    come from those with NaN or inf among their inputs (the reference inputs' extremal values),
    spread evenly over them in their order, the rest spread evenly over the others (the first
    sample, small and large shapes, 0-d and empty tensors)."""
    keys = list(dict.fromkeys(c.key for c in all_cases))
    if max_keys and len(keys) > max_keys:
        odd = list(dict.fromkeys(c.key for c in all_cases if _nonfinite(c)))
        picked = _spread(odd, max_keys // 2)
        rest = [k for k in keys if k not in picked]
        picked += _spread(rest, max_keys - len(picked))
        keys = [k for k in keys if k in picked]
    kept, per_key = set(keys), {}
    chosen = []
    for c in all_cases:
        if c.key in kept and per_key.get(c.key, 0) < max_cases:
            per_key[c.key] = per_key.get(c.key, 0) + 1
            chosen.append(c)
    return chosen
