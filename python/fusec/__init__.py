"""fusec: an MLIR-based mini compiler that turns PyTorch models into fused GPU kernels.

    import fusec
    fn = fusec.compile(model, (x, w, up))    # -> a callable on CUDA tensors
    y = fn(x, w, up)
    print(fn.ptx, fn.manifest)
    ref = fusec.compile(model, (x, w, up), target="cpu")   # the reference: CPU tensors, no GPU needed

The package's layers: the compiler core (`api`, which this facade exposes; `driver` and its stage and
target tables; `frontend`, `passes`, `codegen`, `backends`, `runtime`, `knobs` and `options`), the
torch.compile backend (`torch_backend`), the commands (`commands`: `fusec`, `fusec-opt` and their
subcommands) and the HTML page of `fusec explain --html` (`html`).
"""

from __future__ import annotations

from .diagnostics import FusecError
from .options import CompileOptions
from .version import __version__

__all__ = ["compile", "CompiledModel", "CompileOptions", "FusecError", "__version__"]


def __getattr__(name: str):
    """`fusec.compile` and `fusec.CompiledModel`, from fusec.api on first use (PEP 562): `import fusec`
    stays light (no torch-mlir) for the commands' `--help` and for modules that need no compiler, as
    the schedule plan (fusec.codegen.plan) and the knob table."""
    if name in ("compile", "CompiledModel"):
        from . import api  # noqa: PLC0415 (lazy on purpose: see above)

        return getattr(api, name)
    raise AttributeError(f"module 'fusec' has no attribute {name!r}")
