"""Launch a compiled model on an NVIDIA GPU with cuda-python (the CUDA driver API).

The manifest's steps run in order on the current PyTorch stream, with no host copies (the checks,
buffers and steps are `Executable`'s; this file loads the PTX and launches a kernel). A launch is
one cuLaunchKernel with the `void **` of arguments `Executable` packed once per step (an address:
cuda-python then packs nothing), on the stream read once per call.
"""

from __future__ import annotations


import torch
from cuda.bindings import driver

from ..diagnostics import FusecError
from .executable import Executable, strided_allocator

__all__ = ["cuda_available", "CudaExecutable"]


def cuda_available() -> bool:
    return torch.cuda.is_available()


def _check(result, what: str):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, text = driver.cuGetErrorString(err)
        raise FusecError(f"CUDA driver call {what} failed: {err.name}: "
                         f"{text.decode() if isinstance(text, bytes) else text}")
    return rest[0] if len(rest) == 1 else rest


class CudaExecutable(Executable):
    """A loaded PTX module plus its manifest; call it with CUDA tensors."""

    def __init__(self, ptx: str, manifest: dict, device: int | None = None, *, poison: bool = False):
        if not cuda_available():
            raise FusecError("no CUDA GPU is available: the cuda target needs one")
        super().__init__(manifest, torch.device("cuda", torch.cuda.current_device() if device is None else device),
                         poison=poison)
        self._index = self.device.index
        torch.cuda.init()
        with torch.cuda.device(self.device):
            torch.empty(1, device=self.device)  # make PyTorch's (primary) context current
            _check(driver.cuInit(0), "cuInit")
            self._module = _check(driver.cuModuleLoadData(ptx.encode() + b"\0"), "cuModuleLoadData")
            self._functions = {name: _check(driver.cuModuleGetFunction(self._module, name.encode()),
                                            f"cuModuleGetFunction({name})")
                               for name in manifest["kernels"]}
            for name, handle in self._functions.items():
                _allow_wide_clusters(handle, name)
            shared = {}  # kernel -> the most dynamic shared memory a launch of it asks for
            for step in manifest["steps"]:
                if isinstance(step.get("shared_bytes"), int):
                    shared[step["kernel"]] = max(shared.get(step["kernel"], 0), step["shared_bytes"])
            for name, size in shared.items():
                if size > _DEFAULT_SHARED:
                    _allow_shared(self._functions[name], name, size)

    _empty = strided_allocator("_empty_strided_cuda")  # on the current device

    def _launching(self):
        # Switching devices costs microseconds: only when another device is current (asked of
        # torch._C, without torch.cuda.current_device()'s lazy-initialization check: the module
        # loaded means CUDA is initialized).
        if torch._C._cuda_getDevice() == self._index:
            return None
        return torch.cuda.device(self.device)

    def _call_context(self):
        return _current_stream(self._index)

    def _function(self, name: str):
        return self._functions[name]

    def _resident_blocks(self, handle, step: dict) -> int | None:
        shared = step["shared_bytes"] if isinstance(step["shared_bytes"], int) else 0
        if step["persistent_clusters"] == 1:  # no clusters: blocks an SM, times the SMs
            with torch.cuda.device(self.device):
                per_sm = _check(driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(handle, step["block"][0], shared),
                                "cuOccupancyMaxActiveBlocksPerMultiprocessor")
            return max(int(per_sm), 1) * torch.cuda.get_device_properties(self.device).multi_processor_count
        # The kernel's PTX requires its cluster size (.reqnctapercluster): the config gives none.
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = step["persistent_clusters"], 1, 1
        config.blockDimX, config.blockDimY, config.blockDimZ = step["block"]
        config.sharedMemBytes = shared
        with torch.cuda.device(self.device):
            clusters = _check(driver.cuOccupancyMaxActiveClusters(handle, config), "cuOccupancyMaxActiveClusters")
        return max(int(clusters), 1) * step["persistent_clusters"]

    def _launch(self, launch, stream):
        result = driver.cuLaunchKernel(launch.handle, *launch.grid, *launch.block, launch.shared_bytes, stream,
                                       launch.params, 0)
        if (result[0] if isinstance(result, tuple) else result) != driver.CUresult.CUDA_SUCCESS:
            _check(result, f"cuLaunchKernel({launch.kernel})")


_PORTABLE_CLUSTER = 8  # blocks a cluster may have without the kernel's opt-in


def _allow_wide_clusters(handle, name: str) -> None:
    """Opt a kernel whose PTX asks for clusters wider than the portable 8 blocks (`row-cluster` 16:
    `.reqnctapercluster 16`) into them; without it the driver refuses its launch and occupancy."""
    attribute = driver.CUfunction_attribute
    result, width = driver.cuFuncGetAttribute(attribute.CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, handle)
    if result == driver.CUresult.CUDA_SUCCESS and int(width) > _PORTABLE_CLUSTER:  # (no clusters before sm_90)
        _check(driver.cuFuncSetAttribute(handle, attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
               f"cuFuncSetAttribute({name}, non-portable cluster size)")


_DEFAULT_SHARED = 48 * 1024  # dynamic shared memory a block may have without the kernel's opt-in


def _allow_shared(handle, name: str, size: int) -> None:
    """Opt a kernel into `size` bytes of dynamic shared memory (the `wgmma` schedule's stages)."""
    attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    _check(driver.cuFuncSetAttribute(handle, attribute, size), f"cuFuncSetAttribute({name}, {size} bytes of shared memory)")


def _current_stream(index: int) -> int:
    """The raw handle of PyTorch's current stream on device `index` (what torch.cuda.current_stream
    returns, without making a Stream object)."""
    return torch._C._cuda_getCurrentRawStream(index)
