"""The child process of a conformance run: runs the cases of the OpInfo entries it is sent.

The parent (runner.py) writes one JSON task a line on stdin: {"op": id, "dtypes": [...], "skip": n,
...}; the worker answers on its stdout, one JSON event a line: "start" before each case (so that the
parent knows which case was running when a segfault in MLIR or LLVM kills this process), "result"
after it, "done" after the entry's last case. Everything else the process prints, fusec's or LLVM's
own output at the C level included, goes to stderr: file descriptor 1 is moved aside at start-up.

A case is compiled once per compile key (samples.py) and its verdict is one of
  pass      fusec's outputs match eager's (compare.py);
  mismatch  they do not: the first difference, one line;
  refused   fusec.compile raised FusecError: the message's first line;
  crash     any other exception, in compiling or in running, or the process died (runner.py).
Cases whose eager call raises are not fusec's to answer: counted as "skipped".
"""

from __future__ import annotations

import json
import os
import sys
import time

__all__ = ["main", "run_case"]

# Reductions and norms: a result is a sum of terms larger than itself (compare.py's `scaled`).
_SCALED = ("sum", "mean", "var", "amax", "amin", "softmax", "log_softmax", "layer_norm", "rms_norm", "group_norm",
           "batch_norm", "instance_norm")


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


def _device(target: str):
    import torch

    return torch.device("cuda" if target == "cuda" else "cpu")


def _compile(fn, tensors, target: str):
    import fusec

    return fusec.compile(fn, tensors, target=target)  # (CUDA tensors: fusec.compile takes their GPU's arch)


def run_case(case, target: str, compiled: dict, scaled: bool) -> dict:
    """The verdict on one case; `compiled` caches fusec.compile's result (or error) by compile key."""
    import torch

    from fusec import FusecError

    from .compare import compare, reference

    device = _device(target)
    tensors = tuple(t.to(device) for t in case.tensors)  # keeps a dense tensor's strides
    with torch.no_grad():
        try:
            eager = case.fn(*tensors)
        except Exception as err:  # noqa: BLE001 - an input eager itself rejects
            return {"status": "skipped", "message": f"eager raises {type(err).__name__}: {_first_line(str(err))}"}
        eager32 = reference(case.fn, tensors, torch.float32)
        ref64 = reference(case.fn, tensors, torch.float64)
    if case.key not in compiled:
        try:
            compiled[case.key] = _compile(case.fn, tuple(t.contiguous() for t in tensors), target)
        except FusecError as err:
            compiled[case.key] = ("refused", _first_line(str(err)))
        except Exception as err:  # noqa: BLE001 - an exception that is not a FusecError is fusec's bug
            compiled[case.key] = ("crash", f"compile raised {type(err).__name__}: {_first_line(str(err))}")
    fused = compiled[case.key]
    if isinstance(fused, tuple):
        return {"status": fused[0], "message": fused[1]}
    try:
        outs = fused(*tensors)
        if target == "cuda":
            torch.cuda.synchronize()
    except Exception as err:  # noqa: BLE001 - a compiled model that raises at its call is a crash
        return {"status": "crash", "message": f"the compiled call raised {type(err).__name__}: {_first_line(str(err))}"}
    try:
        what = compare(outs, eager, eager32, ref64, scaled=scaled)
    except Exception as err:  # noqa: BLE001 - the harness's own bug: said as one, and the worker lives on
        return {"status": "crash", "message": f"the comparison itself raised {type(err).__name__}: "
                f"{_first_line(str(err))} (a bug of fusec.conformance)"}
    return {"status": "pass" if what is None else "mismatch", "message": what or ""}


def _run_task(task: dict, op_db, emit) -> None:
    from .ops import op_id
    from .samples import cases, select

    info = next(i for i in op_db if op_id(i) == task["op"])
    scaled = any(s in task["op"] for s in _SCALED)
    index = 0
    for dtype in task["dtypes"]:
        chosen = select(cases(task["op"], info, dtype), max_keys=task["max_keys"], max_cases=task["max_cases"])
        compiled: dict = {}
        for case in chosen:
            if index >= task.get("skip", 0):
                emit({"event": "start", "index": index, "dtype": dtype, "label": case.label, "variant": case.variant})
                if os.environ.get("FUSEC_CONFORMANCE_ABORT") == f"{task['op']}:{index}":
                    os.abort()  # test/Conformance/harness-crash.test: a dying worker must be a crash
                start = time.perf_counter()
                verdict = run_case(case, task["target"], compiled, scaled)
                emit({"event": "result", "index": index, "dtype": dtype, "label": case.label,
                      "variant": case.variant, "seconds": round(time.perf_counter() - start, 3), **verdict})
            index += 1
    emit({"event": "done", "count": index})


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else writes to stdout (Python or C) goes to stderr
    sys.stdout = sys.stderr

    def emit(event):
        protocol.write(json.dumps(event) + "\n")
        protocol.flush()

    import warnings

    warnings.filterwarnings("ignore")
    from .ops import load_op_db

    op_db = load_op_db()
    emit({"event": "ready"})
    for line in sys.stdin:
        if line.strip():
            _run_task(json.loads(line), op_db, emit)


if __name__ == "__main__":
    main()
