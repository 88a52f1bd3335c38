# The fusec backend never breaks a model: a region fusec fails to compile, a compiled region its
# runtime refuses, a bug inside fusec, a whole graph the backend fails on, and graphs of views and
# matmuls only all run in PyTorch, match eager, and the report says why (dynamic shapes beyond the
# rows: test/Backend/dynamic-rows.py).
# Bad backend options are errors that name the option. The compiles run in this process
# (FUSEC_COMPILE_IN_PROCESS): the tests replace fusec's functions here, which a compile worker would
# not see (a worker that crashes: test/Backend/worker-crash.py).

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize

private_cache()
os.environ["FUSEC_COMPILE_IN_PROCESS"] = "1"
import fusec
import fusec.driver
import fusec.torch_backend as tb
import fusec.torch_backend.partition
import torch

MODEL = randomize(MLPBlock())
X = torch.randn(8, 64)


def run(test):
    print(f"TEST: {test.__name__}", flush=True)
    torch._dynamo.reset()
    tb._memory.clear()  # compile again: no region from an earlier test
    test()
    return test


def compile_and_check(model=MODEL, x=X, **kwargs):
    with torch.no_grad():
        print("matches eager:", close(torch.compile(model, backend="fusec", **kwargs)(x), model(x)))


class patched:
    """Replace module.name by value inside a `with` block."""

    def __init__(self, module, name, value):
        self.module, self.name, self.value = module, name, value

    def __enter__(self):
        self.saved = getattr(self.module, self.name)
        setattr(self.module, self.name, self.value)

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.saved)


def fail_on_gelu(error):
    compile_spec = fusec.driver.compile_spec

    def compile_or_fail(spec, options, **kwargs):
        ops = [str(n.target) for n in spec.model.graph.nodes]
        if "aten.gelu.default" in ops:
            raise error
        return compile_spec(spec, options, **kwargs)

    return compile_or_fail


# CHECK-LABEL: TEST: region_fails_to_compile
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 7 ATen ops -> 1 fusec region (1 kernel, cpu), 6 ops in PyTorch
# CHECK-NEXT:    pytorch fusec_region_0  native_layer_norm, gelu: fusec could not compile it: no gelu today
# CHECK-NEXT:    fusec   fusec_region_1  cpu  add -> main_kernel_0 [compiled
@run
def region_fails_to_compile():
    with patched(fusec.driver, "compile_spec", fail_on_gelu(fusec.FusecError("no gelu today\nmore detail"))):
        compile_and_check()
    print("\n".join(str(tb.reports[-1]).splitlines()[:3]))


# CHECK-LABEL: TEST: bug_in_fusec
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  pytorch fusec_region_0  native_layer_norm, gelu: fusec failed on it (a fusec bug): KeyError: 'oops'
@run
def bug_in_fusec():
    with patched(fusec.driver, "compile_spec", fail_on_gelu(KeyError("oops"))):
        compile_and_check()
    print(str(tb.reports[-1]).splitlines()[1].strip())


# CHECK-LABEL: TEST: runtime_refuses
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  region 0: pytorch: fusec's runtime refused it: the kernel did not load
@run
def runtime_refuses():
    def refuse(self, *tensors):
        raise fusec.FusecError("the kernel did not load")

    with patched(fusec.CompiledModel, "__call__", refuse):
        compile_and_check()
    region = tb.reports[-1].regions[0]
    print(f"region 0: {region.status}: {region.reason}")


# CHECK-LABEL: TEST: backend_fails_on_graph
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  warning: fusec: graph {{[0-9]+}} runs in PyTorch: the fusec backend failed on it: RuntimeError: partitioner broke
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 7 ATen ops -> 0 fusec regions, 7 ops in PyTorch
# CHECK-NEXT:    pytorch (every op) x7  the fusec backend failed on this graph: RuntimeError: partitioner broke
@run
def backend_fails_on_graph():
    def broken(gm):
        raise RuntimeError("partitioner broke")

    with patched(fusec.torch_backend.partition, "partition_graph", broken), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_and_check()
    print("warning:", next(str(w.message) for w in caught if "fusec" in str(w.message)))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: views_and_matmuls_only
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 4 ATen ops -> 0 fusec regions, 4 ops in PyTorch
@run
def views_and_matmuls_only():
    def project(x):
        return (x.t() @ x).view(-1).unsqueeze(0)

    compile_and_check(project)
    print(tb.reports[-1].summary())


# CHECK-LABEL: TEST: bad_options
# CHECK-NEXT:  FusecError: unknown fusec backend option(s) fuse; known: arch, cache, cache_dir, {{.*}}cuda_graphs, explain, {{.*}}threads_per_block, {{.*}}upcast_low_precision
# CHECK-NEXT:  FusecError: the fusec backend picks the target from the tensors' device: drop the `target` option
# CHECK-NEXT:  FusecError: --fusion must be none, elementwise or full, not 'most'
@run
def bad_options():
    for options in ({"fuse": "full"}, {"target": "cpu"}, {"fusion": "most"}):
        torch._dynamo.reset()
        try:
            compile_and_check(options=options)
        except Exception as err:  # noqa: BLE001 (dynamo wraps the backend's error)
            inner = getattr(err, "inner_exception", err)
            print(f"{type(inner).__name__}: {getattr(inner, 'message', inner)}")
