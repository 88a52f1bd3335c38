"""Compile regions in worker processes, so that no MLIR, LLVM or llvmlite crash ends the user's program.

MLIR's Python bindings, its LLVM IR translation and llvmlite run native code that can die on a bad
module (a SIGSEGV after "missing LLVMTranslationDialectInterface registration", issue 22) instead
of raising. As Inductor's compile workers do, the backend therefore compiles each region in a
worker process: the region's graph (node by node, `graph_pickle`), its input shapes and dtypes
and the compile options go in; the artifact (PTX, or the cpu target's llvm-dialect module) and
the launch manifest come back, and the parent builds the CompiledModel from them as the disk cache
does. A cpu-target worker also JIT-loads the module and runs it once on zeros before answering,
so that a crash in MLIR's ExecutionEngine happens there, not in the parent's load of the same text.

A worker that dies (a signal, an abort) costs only its region: `RegionCrashed` names the signal,
the region runs in PyTorch with a warning, and the pool starts another worker for the next region.
An error the compile raises comes back as itself (`FusecError`) or by name (a fusec bug).

A worker is a fresh Python (`python -c "...serve()"`, jobs and answers pickled over its stdin and
stdout), not a multiprocessing child: spawn and forkserver children re-run the user's main script,
which rarely guards itself with `if __name__ == "__main__"`, and a fork of a process that already
ran PyTorch (OpenMP's threads, CUDA) is not safe. The pool is one per process, started at the
backend's first graph (in the background, so a worker's imports of torch and torch-mlir overlap
dynamo's tracing) and kept for the process's later graphs; a worker answers one job at a time and
regions of one graph compile in parallel, one per worker.

Environment: FUSEC_COMPILE_IN_PROCESS=1 compiles in the calling process (no isolation: for
debugging, and for tests that replace fusec's functions), FUSEC_COMPILE_WORKERS=N sets the pool's
size (default: half the CPU cores, 1 to 4), FUSEC_COMPILE_TIMEOUT=S the seconds a worker may take
for one region (default 600) before it is killed and the region runs in PyTorch (a compile that
hangs costs its region, not the program). Test hook: FUSEC_TEST_WORKER_CRASH=OP[:SIGNAL] makes
a worker kill itself (SIGNAL: SEGV by default, ABRT, or any signal name; HANG: sleep forever) on a
region that holds the ATen op OP (`aten.gelu`), before it compiles: the crash tests use it.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading

from ..diagnostics import FusecError
from . import graph_pickle
from .kernel import RegionCrashed, WorkerError, compile_graph

__all__ = ["compile_in_worker", "in_process", "pool_size", "warm_up"]

IN_PROCESS_ENV, WORKERS_ENV = "FUSEC_COMPILE_IN_PROCESS", "FUSEC_COMPILE_WORKERS"
TIMEOUT_ENV = "FUSEC_COMPILE_TIMEOUT"
TEST_CRASH_ENV = "FUSEC_TEST_WORKER_CRASH"


def in_process() -> bool:
    return os.environ.get(IN_PROCESS_ENV, "").strip().lower() not in ("", "0", "false", "no")


def pool_size() -> int:
    if os.environ.get(WORKERS_ENV):
        return max(1, int(os.environ[WORKERS_ENV]))
    return max(1, min(4, (os.cpu_count() or 2) // 2))


def _death(exitcode) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return "gone without an answer" if exitcode is None else f"exited with status {exitcode}"


class _Worker:
    """One worker: a Python process running `serve()`, jobs and answers pickled over its stdin and stdout."""

    def __init__(self):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        main = "from fusec.torch_backend.workers import serve; serve()"
        self.process = subprocess.Popen([sys.executable, "-c", main], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=env)

    def run(self, job):
        seconds = float(os.environ.get(TIMEOUT_ENV) or 600)
        watchdog = threading.Timer(seconds, self.process.kill)
        watchdog.daemon = True
        try:
            pickle.dump(job, self.process.stdin)
            self.process.stdin.flush()
            watchdog.start()
            return pickle.load(self.process.stdout)
        except (EOFError, OSError, pickle.UnpicklingError):
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            late = f" after {seconds:g} s ({TIMEOUT_ENV})" if watchdog.finished.is_set() else ""
            raise RegionCrashed(f"its compile worker (pid {self.process.pid}) was "
                                f"{_death(self.process.returncode)}{late}") from None
        finally:
            watchdog.cancel()

    def close(self, seconds: float) -> None:
        """End the worker: its stdin closed, `serve` returns; killed if it has not within `seconds`."""
        try:
            self.process.stdin.close()
            self.process.wait(seconds)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()


class _Pool:
    """Up to `size` workers; `run` takes an idle one (starting one if fewer are alive) for one job."""

    def __init__(self, size: int):
        self.size, self.alive, self.lock = size, 0, threading.Lock()
        self.idle: queue.Queue = queue.Queue()

    def _take(self) -> _Worker:
        with self.lock:
            start = self.idle.empty() and self.alive < self.size
            self.alive += start
        if not start:
            return self.idle.get()
        try:
            return _Worker()
        except BaseException:
            with self.lock:
                self.alive -= 1
            raise

    def warm(self) -> None:
        self.idle.put(self._take())

    def run(self, job):
        worker = self._take()
        try:
            answer = worker.run(job)
        except BaseException:
            with self.lock:
                self.alive -= 1
            raise
        self.idle.put(worker)
        return answer

    def close(self) -> None:
        """End the idle workers (at the process's exit: each is reaped, none left running)."""
        while True:
            try:
                worker = self.idle.get_nowait()
            except queue.Empty:
                return
            worker.close(5)


_pool: _Pool | None = None
_pool_lock = threading.Lock()


def _get_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(pool_size())
            atexit.register(_pool.close)
        return _pool


def warm_up() -> None:
    """Start the pool's first worker in the background (once per process; nothing in process mode)."""
    if in_process() or _pool is not None:
        return
    threading.Thread(target=lambda: _get_pool().warm(), daemon=True, name="fusec-compile-warm-up").start()


def compile_in_worker(gm, sig, opts: dict, ops: list):
    """The CompiledModel of region `gm` (inputs `sig`), compiled by a worker process."""
    from torch._subclasses.fake_tensor import unset_fake_temporarily  # noqa: PLC0415 (torch only here)

    with unset_fake_temporarily():
        graph = graph_pickle.dumps(gm)  # node by node: pickling the module re-traces its code
    job = {"graph": graph, "sig": [(shape, dtype) for shape, dtype, _ in sig], "options": opts, "ops": ops,
           "crash": os.environ.get(TEST_CRASH_ENV)}
    ok, value = _get_pool().run(job)  # RegionCrashed if the worker dies
    if not ok:
        kind, message, *where = value  # a FusecError's location and notes come too
        raise FusecError(message, *where) if kind == "FusecError" else WorkerError(kind, message)
    from ..cache import compiled_from_artifact  # noqa: PLC0415

    return compiled_from_artifact(**value)


def _crash_if_asked(hook: str | None, ops: list) -> None:
    if not hook:
        return
    op, _, name = hook.partition(":")
    if op in ops:
        if name.upper() == "HANG":
            threading.Event().wait()
        if name.upper() == "ERROR":  # test/Backend/worker-error.py: a refusal with a place and a note
            raise FusecError("the test hook refuses this region", location="model.py:7",
                             notes=["a note the worker wrote"])
        sig = getattr(signal, f"SIG{(name or 'SEGV').upper().removeprefix('SIG')}")
        if sig == signal.SIGABRT:
            os.abort()
        os.kill(os.getpid(), sig)


def serve() -> None:
    """A worker's loop (its process's main): compile each job read from stdin, answer on stdout with
    (True, artifact) or (False, error). What the compile prints goes to stderr."""
    import dataclasses  # noqa: PLC0415

    import torch  # noqa: PLC0415

    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # fd 1 (print, native code) now writes to stderr: the answers' pipe is private
    jobs = sys.stdin.buffer
    while True:
        try:
            job = pickle.load(jobs)
        except EOFError:
            return
        try:
            _crash_if_asked(job["crash"], job["ops"])
            sig = [(shape, dtype, torch.device("cpu")) for shape, dtype in job["sig"]]
            compiled = compile_graph(graph_pickle.loads(job["graph"]), sig, job["options"], trial_run=True)
            comp = compiled.compilation
            answer = (True, {"options": dataclasses.asdict(comp.options), "manifest": comp.manifest,
                             "artifact": comp.artifact, "source": comp.source_name,
                             "parameters": list(comp.parameters)})
        except FusecError as err:
            answer = (False, ("FusecError", err.message, err.location, err.notes))
        except Exception as err:  # noqa: BLE001 (sent back: the parent decides)
            answer = (False, (type(err).__name__, str(err)))
        pickle.dump(answer, answers)
        answers.flush()
