"""fusec: an MLIR-based mini compiler that turns PyTorch models into fused GPU kernels.

    import fusec
    fn = fusec.compile(model, (x, w, up))    # -> a callable on CUDA tensors
    y = fn(x, w, up)
    print(fn.ptx, fn.manifest)
    ref = fusec.compile(model, (x, w, up), target="cpu")   # the reference: CPU tensors, no GPU needed
"""

from __future__ import annotations

import dataclasses

from .diagnostics import FusecError
from .options import CompileOptions

__all__ = ["compile", "CompiledModel", "CompileOptions", "FusecError", "__version__"]
__version__ = "0.1.0"


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
            if self.target == "cpu":
                from .runtime.cpu import CpuExecutable

                self._executable = CpuExecutable(self.compilation.artifact, self.manifest)
            else:
                from .runtime.cuda import CudaExecutable

                self._executable = CudaExecutable(self.ptx, self.manifest)
            # Weights already on the device are used in place (later updates are seen); others are
            # copied once, at this first call.
            self._device_parameters = [t if t.device == self._executable.device else t.to(self._executable.device)
                                       for t in self._parameters]
        return self._executable(*tensors, *self._device_parameters)


def compile(model, example_inputs, *, dynamic_shapes=None, **options) -> CompiledModel:
    """Compile `model` (an nn.Module or a function of tensors) for `example_inputs`' shapes and dtypes.

    Keyword options are the fields of `CompileOptions` (target, arch, threads_per_block, ...);
    `target="cpu"` runs on CPU tensors through MLIR's ExecutionEngine.
    """
    from .driver import compile_spec
    from .frontend import ModelSpec, check_spec

    known = {f.name for f in dataclasses.fields(CompileOptions)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise FusecError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    spec = ModelSpec(model, example_inputs, dynamic_shapes)
    check_spec(spec)
    return CompiledModel(compile_spec(spec, CompileOptions(**options)), spec.parameters)
