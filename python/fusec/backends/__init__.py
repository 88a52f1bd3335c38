"""Back ends: from the `nvvm` stage to LLVM IR and PTX (llvmlite's NVPTX target)."""
