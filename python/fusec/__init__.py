"""fusec: an MLIR-based mini compiler that turns PyTorch models into fused GPU kernels.

    import fusec
    fn = fusec.compile(model, (x, w, up))    # -> a callable on CUDA tensors
    y = fn(x, w, up)
    print(fn.ptx, fn.manifest)
    ref = fusec.compile(model, (x, w, up), target="cpu")   # the reference: CPU tensors, no GPU needed

The package's layers: the compiler core (`api` (this facade), `driver` and its stage and target
tables, `frontend`, `passes`, `codegen`, `backends`, `runtime`, `knobs` and `options`), the
torch.compile backend (`torch_backend`), the commands (`commands`: `fusec`, `fusec-opt` and their
subcommands) and the HTML page of `fusec explain --html` (`html`).
"""

from __future__ import annotations

from .api import CompiledModel, compile
from .diagnostics import FusecError
from .options import CompileOptions
from .version import __version__

__all__ = ["compile", "CompiledModel", "CompileOptions", "FusecError", "__version__"]
