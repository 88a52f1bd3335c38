"""`fusec run MODEL.py`: compile, run (on the GPU, or `--target cpu`), compare with PyTorch eager, time it.

The model runs on its `example_inputs` and on fresh random inputs of the same shapes and dtypes.
Tolerance: max abs error <= 1e-5 x max|ref| in fp32, 1e-2 x max|ref| in bf16/fp16.
"""

from __future__ import annotations

import argparse
import copy
import platform
import statistics
import time

import torch

from ..diagnostics import FusecError
from ..driver import compile_spec
from ..frontend import load_model_file
from ..numerics import compare
from ..manifest import LIBRARY_OPS
from ..runtime.cpu import CpuExecutable
from ..runtime.cuda import CudaExecutable, cuda_available
from .args import add_compile_options, add_debug_option, compile_options


def _parser():
    p = argparse.ArgumentParser(prog="fusec run", description=__doc__.split("\n\n")[0])
    p.add_argument("input", metavar="MODEL.py")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    p.add_argument("--repeat", type=int, default=100, help="timed runs (default: 100)")
    add_compile_options(p)
    add_debug_option(p)
    return p


def random_like(t, generator):
    if t.dtype.is_floating_point:
        return torch.randn(t.shape, generator=generator, dtype=torch.float32).to(t.dtype)
    if t.dtype == torch.bool:
        return torch.rand(t.shape, generator=generator) > 0.5
    if t.numel() and int(t.min()) >= 0:
        # Non-negative integers (token ids, class targets, indices) stay within the example's range:
        # eager raises on an index out of range.
        return torch.randint(0, int(t.max()) + 1, t.shape, generator=generator, dtype=t.dtype)
    return torch.randint(-8, 8, t.shape, generator=generator, dtype=t.dtype)


def _eager(model, inputs):
    model = copy.deepcopy(model).to(inputs[0].device) if isinstance(model, torch.nn.Module) else model
    with torch.no_grad():
        out = model(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def _time_us(fn, inputs, repeat: int) -> float:
    if inputs[0].device.type == "cpu":
        return _time_cpu_us(fn, inputs, repeat)
    for _ in range(3):
        fn(*inputs)
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*inputs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def _time_cpu_us(fn, inputs, repeat: int) -> float:
    fn(*inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*inputs)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def _executable(comp):
    """The runtime of the compile's target, poisoning its buffers; and the device's name."""
    if comp.options.target == "cpu":
        return CpuExecutable(comp.artifact, comp.manifest, poison=True), f"the cpu ({platform.machine()})"
    if not cuda_available():
        raise FusecError("fusec run needs a CUDA GPU and none is available on this machine "
                         "(`fusec run --target cpu` runs the cpu reference target)")
    exe = CudaExecutable(comp.ptx, comp.manifest, poison=True)
    return exe, f"{torch.cuda.get_device_name(exe.device)} ({comp.options.arch})"


def cmd_run(argv) -> int:
    args = _parser().parse_args(argv)
    spec = load_model_file(args.input)
    comp = compile_spec(spec, compile_options(args))
    exe, name = _executable(comp)
    device = exe.device
    library = sum(s["op"] in LIBRARY_OPS for s in comp.manifest["steps"])
    calls = f", {library} library matmul{'s' if library != 1 else ''}" if library else ""
    print(f"fusec run: {args.input} on {name}: {len(comp.kernels)} kernel{'s' if len(comp.kernels) != 1 else ''}{calls}")
    gen = torch.Generator().manual_seed(args.seed)
    cases = [("example inputs", spec.example_inputs),
             ("random inputs", tuple(random_like(t, gen) for t in spec.example_inputs))]
    ok = True
    params = [t.to(device) for _, t in spec.parameters]
    for label, host_inputs in cases:
        inputs = tuple(t.to(device) for t in host_inputs)
        try:
            refs = _eager(spec.model, inputs)
        except (RuntimeError, IndexError) as err:  # a random 0 divisor, a random index out of range
            if label == "example inputs":
                raise
            print(f"  {label:<15} skipped: eager raised {type(err).__name__}: {str(err).splitlines()[0]}")
            continue
        outs = exe(*inputs, *params)
        outs = outs if isinstance(outs, tuple) else (outs,)
        if len(outs) != len(refs):
            raise FusecError(f"fusec returned {len(outs)} outputs, eager {len(refs)}")
        for i, (o, r) in enumerate(zip(outs, refs)):
            max_abs, scale, tol = compare(o, r)
            good = max_abs <= tol
            ok &= good
            rel = max_abs / scale if scale else max_abs
            print(f"  {label:<15} output {i} {str(r.dtype)[6:]}{list(r.shape)}: max abs err {max_abs:.3e}, "
                  f"max rel err {rel:.3e} (max|ref| {scale:.3e}, tolerance {tol:.3e}) {'ok' if good else 'MISMATCH'}")
    inputs = tuple(t.to(device) for t in spec.example_inputs) + tuple(params)
    exe.poison = False  # time the kernels, not the poisoning
    us = _time_us(exe, inputs, args.repeat)
    clock = "CUDA events" if device.type == "cuda" else "wall clock"
    print(f"  time: {us:.1f} us per call (median of {args.repeat}, {clock}, {len(comp.manifest['steps'])} steps)")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1
