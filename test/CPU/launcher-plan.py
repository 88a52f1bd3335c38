# The launcher's per-call path (issue 23: host cost per kernel): the manifest becomes a plan at the
# first call, each launch's arguments packed once (PreparedLaunch: the `void **` is the same array on
# every call, only the buffer addresses in it change). What the plan skips must still hold: strided
# and misaligned inputs are copied, wrong inputs are refused with the full message, dynamic rows
# size each call, zero rows launch nothing, and two threads calling one model both get their own
# results. The cpu target.

# RUN: %python %s | FileCheck %s

import threading

import torch

import fusec
from fusec.diagnostics import FusecError
from fusec.runtime.executable import PreparedLaunch


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def chain(x, y):
    return torch.sigmoid(x * 1.5) + y


# CHECK-LABEL: TEST: packed_once
# CHECK-NEXT:  launches: [[N:[1-9]]] prepared: [[N]]
# CHECK-NEXT:  same packed arrays: True
# CHECK-NEXT:  matches eager: True True
@run
def packed_once():
    x, y = torch.randn(8, 64), torch.randn(8, 64)
    fn = fusec.compile(chain, (x, y), target="cpu", fusion="none")
    first = fn(x, y)
    plan = fn._executable._plan
    prepared = [s for s in plan.steps if isinstance(s, PreparedLaunch)]
    print("launches:", sum(s["op"] == "launch" for s in fn.manifest["steps"]), "prepared:", len(prepared))
    params = [s.params for s in prepared]
    x2, y2 = torch.randn(8, 64), torch.randn(8, 64)
    second = fn(x2, y2)
    print("same packed arrays:", [s.params for s in fn._executable._plan.steps if isinstance(s, PreparedLaunch)] == params)
    print("matches eager:", torch.allclose(first, chain(x, y), atol=1e-6), torch.allclose(second, chain(x2, y2), atol=1e-6))


# CHECK-LABEL: TEST: strided_and_misaligned
# CHECK-NEXT:  transposed: True
# CHECK-NEXT:  odd offset: True
@run
def strided_and_misaligned():
    x, y = torch.randn(8, 64), torch.randn(8, 64)
    fn = fusec.compile(chain, (x, y), target="cpu")
    fn(x, y)
    xt = torch.randn(64, 8).t()
    print("transposed:", torch.allclose(fn(xt, y), chain(xt, y), atol=1e-6))
    xo = torch.randn(8 * 64 + 1)[1:].view(8, 64)
    print("odd offset:", torch.allclose(fn(xo, y), chain(xo, y), atol=1e-6))


# CHECK-LABEL: TEST: refused
# CHECK-NEXT:  input 1 is float32[8, 32], the compiled model expects float32[8, 64]
# CHECK-NEXT:  input 0 is float64[8, 64], the compiled model expects float32[8, 64]
# CHECK-NEXT:  the model takes 2 input tensors, got 1
@run
def refused():
    x, y = torch.randn(8, 64), torch.randn(8, 64)
    fn = fusec.compile(chain, (x, y), target="cpu")
    fn(x, y)
    for args in [(x, torch.randn(8, 32)), (x.double(), y), (x,)]:
        try:
            fn(*args)
            print("ran")
        except FusecError as err:
            print(err.message)


# CHECK-LABEL: TEST: dynamic_rows
# CHECK-NEXT:  rows 3: True
# CHECK-NEXT:  rows 17: True
# CHECK-NEXT:  rows 0: (0, 64)
@run
def dynamic_rows():
    x, y = torch.randn(8, 64), torch.randn(8, 64)
    rows = torch.export.Dim("rows")
    fn = fusec.compile(chain, (x, y), target="cpu", dynamic_shapes=({0: rows}, {0: rows}))
    for n in (3, 17):
        a, b = torch.randn(n, 64), torch.randn(n, 64)
        print(f"rows {n}:", torch.allclose(fn(a, b), chain(a, b), atol=1e-6))
    print("rows 0:", tuple(fn(torch.randn(0, 64), torch.randn(0, 64)).shape))


# CHECK-LABEL: TEST: two_threads
# CHECK-NEXT:  every result right: True
@run
def two_threads():
    x, y = torch.randn(64, 256), torch.randn(64, 256)
    fn = fusec.compile(chain, (x, y), target="cpu", fusion="none")
    fn(x, y)
    ok = []

    def work(seed):
        g = torch.Generator().manual_seed(seed)
        for _ in range(50):
            a, b = torch.randn(64, 256, generator=g), torch.randn(64, 256, generator=g)
            ok.append(torch.allclose(fn(a, b), chain(a, b), rtol=1e-5, atol=1e-6))

    threads = [threading.Thread(target=work, args=(s,)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("every result right:", len(ok) == 100 and all(ok))


# A cuda-target manifest (compiled to PTX here; nothing launches): each launch's `void **` holds, in
# the kernel's argument order, pointers to this call's buffer addresses and to its size arguments,
# and the grid is evaluated for the rows bound.
# CHECK-LABEL: TEST: cuda_manifest_packing
# CHECK-NEXT:  launches: [[L:[1-9]]], packed right: [[L]]
@run
def cuda_manifest_packing():
    import ctypes

    from fusec.manifest import evaluate

    x, y = torch.randn(8, 64), torch.randn(8, 64)
    rows = torch.export.Dim("rows")
    fn = fusec.compile(chain, (x, y), target="cuda", dynamic_shapes=({0: rows}, {0: rows}))
    manifest, symbols = fn.manifest, {"rows": 5}
    slot_of = {spec["name"]: i for i, spec in enumerate(manifest["inputs"])}
    for buf in manifest["buffers"]:
        slot_of[buf["name"]] = len(slot_of)
    storage = [torch.empty(16) for _ in slot_of]
    launches = [s for s in manifest["steps"] if s["op"] == "launch"]
    right = 0
    for step in launches:
        launch = PreparedLaunch(step, slot_of, None)
        launch.bind(storage, symbols)
        pointers = ctypes.cast(launch.params, ctypes.POINTER(ctypes.c_void_p))
        ok = launch.grid == tuple(evaluate(g, symbols) for g in step["grid"])
        for i, arg in enumerate(step["args"]):
            if arg["kind"] == "buffer":
                ok &= ctypes.c_void_p.from_address(pointers[i]).value == storage[slot_of[arg["name"]]].data_ptr()
            else:
                ctype = {"i64": ctypes.c_int64, "i32": ctypes.c_int32, "i8": ctypes.c_int8,
                         "f32": ctypes.c_float, "f64": ctypes.c_double}[arg["type"]]
                ok &= ctype.from_address(pointers[i]).value == evaluate(arg["value"], symbols)
        right += ok
    print(f"launches: {len(launches)}, packed right: {right}")
