"""The public front door: `fusec.compile` and what it returns, `CompiledModel`.

    import fusec
    fn = fusec.compile(model, (x, w, up))    # -> a callable on CUDA tensors
    y = fn(x, w, up)
    print(fn.ptx, fn.manifest)
    ref = fusec.compile(model, (x, w, up), target="cpu")   # the reference: CPU tensors, no GPU needed
"""

from __future__ import annotations

import dataclasses

from . import driver
from .diagnostics import FusecError
from .frontend import ModelSpec, check_spec
from .options import CompileOptions, gpu_options

__all__ = ["compile", "CompiledModel"]


class CompiledModel:
    """The result of `fusec.compile`: the kernels (PTX, or the cpu target's llvm-dialect module), the
    launch manifest, every stage's IR, and a callable."""

    def __init__(self, compilation, parameters=()):
        self.compilation = compilation
        self.target: str = compilation.options.target
        self._parameters = [t for _, t in parameters]  # the model's weights, passed after the inputs
        self._device_parameters = None
        self.ptx: str | None = compilation.ptx
        self.manifest: dict = compilation.manifest
        self.stages: dict = compilation.texts
        self._executable = None

    def __call__(self, *tensors):
        if self._executable is None:
            self._executable = self.compilation.target.load(self.compilation.artifact, self.manifest)
            # Weights already on the device are used in place (later updates are seen); others are
            # copied once, at this first call.
            self._device_parameters = [t if t.device == self._executable.device else t.to(self._executable.device)
                                       for t in self._parameters]
        return self._executable(*tensors, *self._device_parameters)


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(CompileOptions))


def _gpu_present() -> bool:
    """Whether a real GPU backs CUDA tensors (inputs faked on a machine without one, as a trace on
    `FakeTensorMode` makes them, compile for the default --arch)."""
    import torch  # noqa: PLC0415 (the inputs are torch tensors: it is loaded)

    return torch.cuda.is_available()


def compile(model, example_inputs, *, dynamic_shapes=None, strict_export: bool = True, source: str = "<python>",
            **options) -> CompiledModel:
    """Compile `model` (an nn.Module or a function of tensors) for `example_inputs`' shapes and dtypes.

    Keyword options are the fields of `CompileOptions` (target, arch, threads_per_block, ...);
    `target="cpu"` runs on CPU tensors through MLIR's ExecutionEngine. `strict_export=False` exports
    the model non-strict (a graph that is already traced, as the torch.compile backend's regions are:
    strict export would reset dynamo). `source` names the model in error messages.
    """
    unknown = sorted(set(options) - _OPTION_NAMES)
    if unknown:
        raise FusecError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_OPTION_NAMES))}")
    spec = ModelSpec(model, example_inputs, dynamic_shapes, source=source, strict_export=strict_export)
    check_spec(spec)
    gpu = next((t.device for t in spec.example_inputs if getattr(t, "is_cuda", False)), None)
    if options.get("target", "cuda") == "cuda" and gpu is not None and _gpu_present():
        options = gpu_options(gpu, options)  # the inputs' GPU (sm_90a on Hopper: wgmma)
    compilation = driver.compile_spec(spec, CompileOptions(**options))
    return CompiledModel(compilation, spec.parameters)
