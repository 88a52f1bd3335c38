# --fusec-transpose-tensor-core-operands keeps a model's results: `x @ w` with w [K, N] in bf16 and
# fp16 (with a bias and GELU, odd sizes, and a batch of rows collapsed into M) computed through the
# copy of w transposed to [N, K], on the cpu target. The pass runs only where the tensor cores'
# kernel builds the matmul (cuda, sm_90a); here it is applied by fusec-opt to the linalg stage, and
# the module is then compiled for the cpu target and run against eager.
# RUN: %python %s | FileCheck %s
# CHECK: bf16 gelu(x @ w + b) 300x200 @ 200x1002: 1 transposed copy, ok
# CHECK: fp16 x @ w 2x64x128 @ 128x96: 1 transposed copy, ok
# CHECK-NOT: MISMATCH
import os
import subprocess
import sys
import tempfile

import torch

from fusec import CompiledModel, driver
from fusec.options import CompileOptions

torch.manual_seed(0)
F = torch.nn.functional


def gelu_bias(x, w, b):
    return F.gelu(x @ w + b)


def matmul(x, w):
    return x @ w


def check(name, fn, *inputs):
    with tempfile.TemporaryDirectory() as folder:
        model = os.path.join(folder, "model.py")
        with open(model, "w") as f:
            f.write(f"import torch\nF = torch.nn.functional\n\n\n{_source(fn)}\n\nmodel = {fn.__name__}\n"
                    f"example_inputs = tuple(torch.load({os.path.join(folder, 'inputs.pt')!r}))\n")
        torch.save(list(inputs), os.path.join(folder, "inputs.pt"))
        linalg = subprocess.run(["fusec", model, "--target", "cpu", "--emit", "linalg"], capture_output=True,
                                text=True, check=True).stdout
        moved = subprocess.run(["fusec-opt", "--fusec-contraction-operands", "--fusec-transpose-tensor-core-operands"],
                               input=linalg, capture_output=True, text=True, check=True).stdout
        path = os.path.join(folder, "moved.mlir")
        with open(path, "w") as f:
            f.write(moved)
        copies = moved.count("affine_map<(d0, d1) -> (d1, d0)>")
        got = CompiledModel(driver.compile_mlir_file(path, CompileOptions(target="cpu")), [])(*inputs)
    want = fn(*inputs)
    err = ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()
    print(f"{name}: {copies} transposed cop{'y' if copies == 1 else 'ies'}, {'ok' if err < 1e-2 else 'MISMATCH'} ({err:.1e})",
          flush=True)


def _source(fn):
    import inspect  # noqa: PLC0415
    return inspect.getsource(fn)


bf, hf = dict(dtype=torch.bfloat16), dict(dtype=torch.float16)
check("bf16 gelu(x @ w + b) 300x200 @ 200x1002", gelu_bias, torch.randn(300, 200, **bf), torch.randn(200, 1002, **bf) / 14,
      torch.randn(1002, **bf))
check("fp16 x @ w 2x64x128 @ 128x96", matmul, torch.randn(2, 64, 128, **hf), torch.randn(128, 96, **hf) / 11)
sys.exit(0)
