"""Find CUDA's files: libdevice (PyPI `nvidia-nvvm`, else $CUDA_HOME) and ptxas (PyPI
`nvidia-cuda-nvcc`, else $CUDA_HOME, else PATH)."""

from __future__ import annotations

import functools
import glob
import os
import shutil

from ..diagnostics import FusecError

try:  # the PyPI CUDA packages (nvidia-nvvm, nvidia-cuda-nvcc): optional, a CUDA toolkit does too
    import nvidia
except ImportError:
    nvidia = None

__all__ = ["libdevice_path", "ptxas_path"]


def _nvidia_roots() -> list[str]:
    if nvidia is None:
        return []
    roots = []
    for base in list(getattr(nvidia, "__path__", [])):
        roots += sorted(glob.glob(os.path.join(base, "cu*"))) + [base]
    return roots


def _cuda_homes() -> list[str]:
    homes = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    return [h for h in homes if h]


@functools.cache
def libdevice_path() -> str:
    candidates = [os.path.join(r, "nvvm", "libdevice", "libdevice.10.bc") for r in _nvidia_roots()]
    candidates += [os.path.join(h, "nvvm", "libdevice", "libdevice.10.bc") for h in _cuda_homes()]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise FusecError("libdevice.10.bc not found: install the `nvidia-nvvm` package "
                     "(pip install nvidia-nvvm) or set CUDA_HOME to a CUDA toolkit")


def ptxas_path() -> str | None:
    candidates = [os.path.join(r, "bin", "ptxas") for r in _nvidia_roots()]
    candidates += [os.path.join(h, "bin", "ptxas") for h in _cuda_homes()]
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return shutil.which("ptxas")
