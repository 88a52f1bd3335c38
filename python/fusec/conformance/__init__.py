"""fusec's conformance suite: the backend's compute ops against PyTorch's OpInfo database.

For every op of `fusec.torch_backend.support.COMPUTE`, its OpInfo entries' sample and reference
inputs (float32, bfloat16, float16, plus strided copies) are compiled one by one with
`fusec.compile(..., target="cpu")` (or "cuda") and compared with eager. `python -m fusec.conformance`
runs it (`--help`); test/Conformance/ runs a shard of it in CI.

    ops.py      OpInfo entries of the table's ATen names
    samples.py  an entry's samples as cases (functions of their tensors), chosen and sharded
    compare.py  the verdict of one case: NaN, inf, signed zeros, tolerances
    worker.py   the child process that compiles and runs cases
    runner.py   the parent: workers, crashes, timeouts
    known.py    failures known today, counted apart
    report.py   the table, the distinct refusals and failures, the summary line
"""
