"""The references the fuzz oracle (fusec.fuzz.oracle) compares fusec's outputs with: PyTorch eager
on the model's inputs (as given, with bf16/fp16 computed in fp32, on the GPU), the fp64 reference
(casts to fp32 become fp64, casts to bf16/fp16 round but stay fp64), the same without the model's
bf16/fp16 roundings, and the fp64 reference with every op's result moved by up to an fp32 half-ulp
(what a correct fp32 implementation may do to the model's outputs). The oracle's docstring says how
each enters the tolerance."""

from __future__ import annotations

__all__ = ["as_tuple", "eager", "eager_on_gpu", "references"]


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def eager(spec, upcast, device=None):
    """Run the model in eager with every floating input and weight cast by `upcast` (dtype -> dtype),
    on `device` (default: where the model and inputs are, the CPU)."""
    import torch

    from ..frontend import model_state

    def cast(t):
        t = t.to(upcast(t.dtype)) if t.dtype.is_floating_point else t
        return t if device is None else t.to(device)

    inputs = tuple(cast(t) for t in spec.example_inputs)
    with torch.no_grad():
        if isinstance(spec.model, torch.nn.Module):
            state = {name: cast(t) for name, t in model_state(spec.model)}
            return as_tuple(torch.func.functional_call(spec.model, state, inputs))
        return as_tuple(spec.model(*inputs))


def references(spec):
    """(eager outputs, fp32-compute reference raw outputs, fp64 reference raw outputs, the fp64
    reference with the model's casts to bf16/fp16 not rounding, the fp64 reference with every op's
    result moved by up to an fp32 half-ulp)."""
    import torch

    low = (torch.bfloat16, torch.float16)
    plain = eager(spec, lambda d: d)
    ref32 = eager(spec, lambda d: torch.float32 if d in low else d)
    with _float32_as_float64():
        ref64 = eager(spec, lambda d: torch.float64)
    with _float32_as_float64(round_low=False):
        unrounded = eager(spec, lambda d: torch.float64)
    return plain, ref32, ref64, unrounded, _perturbed(spec, len(ref64))


def _perturbed(spec, count: int):
    """The fp64 reference with every ATen op's result moved by up to an fp32 half-ulp (times
    1 + u * 2^-24, u uniform in [-1, 1] per element), composite ops decomposed first (a LayerNorm's
    mean is an op of its own): what the model does to the roundings any correct fp32 implementation
    makes, whatever its order of evaluation. Views are left alone. None where it cannot be traced.
    Running sums and products stay whole, like sums: PyTorch decomposes them through an n × n
    triangular mask (a cumsum along 8192 made 3.7 GB temporaries per op and took two minutes)."""
    import torch
    from torch._decomp import decomposition_table
    from torch.fx.experimental.proxy_tensor import make_fx

    scans = (torch.ops.aten.cumsum, torch.ops.aten.cumprod)
    decompositions = {op: fn for op, fn in decomposition_table.items()
                      if getattr(op, "overloadpacket", None) not in scans}

    noise = torch.Generator().manual_seed(0)

    class Perturbing(torch.fx.Interpreter):
        def run_node(self, node):
            out = super().run_node(node)
            if node.op != "call_function" or not isinstance(out, torch.Tensor) or out.dtype != torch.float64 \
                    or not out.numel():
                return out
            storage = out.untyped_storage().data_ptr()
            if any(isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() == storage
                   for a in self.fetch_args_kwargs_from_env(node)[0]):
                return out
            u = torch.rand(out.shape, generator=noise, dtype=torch.float64) * 2 - 1
            return out * (1 + u * 2.0 ** -24)

    try:
        with _float32_as_float64():
            graph = make_fx(lambda: eager(spec, lambda d: torch.float64),
                            decomposition_table=decompositions)()
        with torch.no_grad():
            outs = as_tuple(Perturbing(graph).run())
    except Exception:  # noqa: BLE001 - a model make_fx cannot trace: eager's fp32 error alone
        return (None,) * count
    return outs if len(outs) == count else (None,) * count


def _float32_as_float64(round_low: bool = True):
    import torch
    from torch.overrides import TorchFunctionMode

    low = (torch.bfloat16, torch.float16)

    class Mode(TorchFunctionMode):
        """The fp64 reference computes everything in fp64: a cast to fp32 in the model (`x.float()`)
        is a cast to fp64, and a cast to bf16/fp16 rounds to that type but stays in fp64, so that
        the rest of the model is computed exactly (its difference from the fp32 reference then
        includes PyTorch's own rounding of bf16 ops). With `round_low` false a cast to bf16/fp16
        does not round either: what the model's roundings do to its outputs."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is torch.Tensor.float:
                return args[0].to(torch.float64)
            if func in (torch.Tensor.bfloat16, torch.Tensor.half):
                return func(*args, **kwargs).to(torch.float64) if round_low else args[0].to(torch.float64)
            if func is torch.Tensor.to:
                dtypes = [a for a in (*args[1:], kwargs.get("dtype")) if isinstance(a, torch.dtype)]
                if torch.float32 in dtypes:
                    args = tuple(torch.float64 if a is torch.float32 else a for a in args)
                    kwargs = {k: torch.float64 if v is torch.float32 else v for k, v in kwargs.items()}
                elif any(d in low for d in dtypes):
                    return func(*args, **kwargs).to(torch.float64) if round_low else args[0].to(torch.float64)
            return func(*args, **kwargs)

    return Mode()


def eager_on_gpu(spec):
    """The fp32-compute reference by eager on the GPU: where NaN and inf come out differs by device
    (gelu(+inf) is inf in CUDA's eager and fusec's kernel, NaN in the CPU's: regressions/gelu_of_infinity.py)."""
    import torch

    return eager(spec, lambda d: torch.float32 if d in (torch.bfloat16, torch.float16) else d, device="cuda")
