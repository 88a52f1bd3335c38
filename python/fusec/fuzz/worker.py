"""A subprocess that evaluates model files for `fusec fuzz`, so that a crash is a finding.

Some compiler failures end the process instead of raising (MLIR's `LLVM ERROR`, a segfault in JIT
code). The fuzzer therefore compiles and runs models in this worker: one JSON request per line on
stdin (the model's source), one JSON verdict per line back. When the worker dies or hangs, `Worker`
reports a "crash" or "timeout" failure with the tail of its stderr and starts a new one.

    python -m fusec.fuzz.worker --target cpu [--compile-only] [--arch sm_90]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

__all__ = ["Worker"]

_STARTUP_SECONDS = 600
_WARM_UP = """import torch


def warm_up(x):
    return torch.softmax(x, dim=-1) + 1.0


model = warm_up
example_inputs = (torch.randn(2, 3),)
"""


def _serve(argv) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--target", default="cpu")
    p.add_argument("--compile-only", action="store_true")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--dynamic-rows", action="store_true")
    args = p.parse_args(argv)
    # The protocol owns the real stdout; whatever the compiler prints goes to stderr (the log).
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    problem = _startup_problem(args)
    import torch

    # One thread: PyTorch's CPU sums then add up in the same order on every machine (the tolerance
    # uses eager's own error), and lit runs several fuzz tests side by side anyway.
    torch.set_num_threads(1)
    from .oracle import signature, timed_evaluate

    with tempfile.TemporaryDirectory(prefix="fusec-fuzz-") as tmp:
        if not problem:  # the first compile imports and initialises much: not a model's time
            path = os.path.join(tmp, "warm_up.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(_WARM_UP)
            timed_evaluate(path, target=args.target, compile_only=args.compile_only, arch=args.arch)
        channel.write(json.dumps({"ready": problem}) + "\n")
        channel.flush()
        for line in sys.stdin:
            source = json.loads(line)["source"]
            # A file name per model: Python caches source lines by file name.
            path = os.path.join(tmp, f"model_{hashlib.sha1(source.encode()).hexdigest()[:12]}.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
            try:
                verdict = timed_evaluate(path, target=args.target, compile_only=args.compile_only, arch=args.arch,
                                         dynamic_rows=args.dynamic_rows)
            except Exception as err:  # noqa: BLE001 - a bug of the fuzzer's own oracle: report it, do not hide it
                import traceback

                message = f"fusec fuzz's oracle raised {type(err).__name__}: {err}"
                verdict = {"status": "failed", "kind": "oracle", "signature": signature("oracle", message),
                           "message": message, "details": traceback.format_exc().splitlines()[-12:]}
            os.unlink(path)
            channel.write(json.dumps(verdict) + "\n")
            channel.flush()
    return 0


def _startup_problem(args) -> str:
    """'' when the worker can do what it was asked, else why not."""
    import dataclasses

    import torch

    import fusec

    if args.compile_only:
        return ""
    if "target" not in {f.name for f in dataclasses.fields(fusec.CompileOptions)}:
        return f"this fusec has no --target option, so it cannot run models on the {args.target} target: " \
               "use --compile-only"
    if args.target == "cuda" and not torch.cuda.is_available():
        return "--target cuda needs a CUDA GPU and none is available (use --target cpu or --compile-only)"
    return ""


class Worker:
    """The parent's handle on a worker process; `evaluate(source)` -> verdict dict."""

    def __init__(self, *, target: str, compile_only: bool, arch: str, timeout: float, dynamic_rows: bool = False):
        self.args = ["--target", target, "--arch", arch] + (["--compile-only"] if compile_only else []) \
            + (["--dynamic-rows"] if dynamic_rows else [])
        self.timeout = timeout
        self._proc = None
        self._log = None
        self._buffer = b""
        self.starts = 0
        self.hung = False

    def start(self) -> None:
        from .. import FusecError

        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker; closed by close()
        self._proc = subprocess.Popen([sys.executable, "-m", "fusec.fuzz.worker", *self.args],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log)
        self._buffer = b""
        self.starts += 1
        line = self._readline(_STARTUP_SECONDS)
        if line is None:
            raise FusecError(f"the fuzz worker did not start: {self._log_tail(0)}")
        problem = json.loads(line)["ready"]
        if problem:
            self.close()
            raise FusecError(problem)

    def _readline(self, timeout: float) -> bytes | None:
        """One line from the worker, or None when it closed its end (died) or `timeout` seconds
        passed (then self.hung is set)."""
        deadline = time.monotonic() + timeout
        fd = self._proc.stdout.fileno()
        self.hung = False
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.hung = True
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _log_tail(self, start: int, lines: int = 15) -> str:
        self._log.flush()
        self._log.seek(start)
        text = self._log.read().decode("utf-8", "replace")
        self._log.seek(0, os.SEEK_END)
        interesting = [ln for ln in text.splitlines() if ln.strip() and "Warning" not in ln]
        return "\n".join(interesting[-lines:])

    def evaluate(self, source: str) -> dict:
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        self._log.seek(0, os.SEEK_END)
        log_start = self._log.tell()
        start = time.perf_counter()
        try:
            self._proc.stdin.write((json.dumps({"source": source}) + "\n").encode())
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._readline(self.timeout)
        if line is not None:
            return json.loads(line)
        # A dead worker closes its stdout before its exit status can be read: only a worker that
        # sent nothing for `timeout` seconds is hung.
        timed_out = self.hung
        if timed_out:
            self._proc.kill()
        try:
            rc = self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # closed its stdout but lives on
            self._proc.kill()
            rc = self._proc.wait()
        tail = self._log_tail(log_start)
        self._proc = None
        seconds = round(time.perf_counter() - start, 3)
        if timed_out:
            message = f"no verdict after {self.timeout:.0f} s (a hang?); the worker was killed"
            kind = "timeout"
        else:
            name = signal.Signals(-rc).name if rc < 0 and -rc in signal.valid_signals() else f"exit status {rc}"
            crash_line = next((ln for ln in tail.splitlines() if "LLVM ERROR" in ln or "Assertion" in ln), name)
            message = f"the compiler process died ({name}): {crash_line}"
            kind = "crash"
        from .oracle import signature

        return {"status": "failed", "kind": kind, "signature": signature(kind, message), "message": message,
                "details": tail.splitlines(), "seconds": seconds}

    def close(self) -> None:
        if self._proc is not None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1:]))
