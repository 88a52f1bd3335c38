"""The parent of a conformance run: hands OpInfo entries to worker processes, survives their deaths.

Each of `jobs` threads keeps one worker (`python -m fusec.conformance.worker`) and sends it one
entry at a time. A worker that dies (a segfault in MLIR or LLVM, an abort, the OOM killer) or stays
silent for `case_timeout` seconds has its running case recorded as a crash with the exit status;
a fresh worker then goes on with the entry's next case, so one crash costs one case, not the run.
Workers load the OpInfo database once (slow: ~15 s), so they are kept across entries.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

__all__ = ["run"]


class _Worker:
    def __init__(self, python: str):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([python, "-m", "fusec.conformance.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     bufsize=1)
        # A thread reads the events into a queue: select() on the pipe would not see lines that
        # readline() already buffered, and would wait for the next one while the worker waits for us.
        self.events: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.proc.stdout:
            self.events.put(json.loads(line))
        self.events.put(None)  # end of file: the worker died or finished

    def read(self, timeout: float):
        """The next event, or None when the worker died or said nothing for `timeout` seconds."""
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def stop(self) -> str:
        """Ends the worker; how it ended, for the crash message."""
        try:
            rc = self.proc.wait(timeout=10)  # its stdout closed: it is dying
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "no answer in time (killed)"
        return f"the worker died: {'signal ' + str(-rc) if rc < 0 else 'exit status ' + str(rc)}"


def _run_entry(get_worker, task: dict, timeout: float, on_result) -> None:
    skip, current = 0, None
    while True:
        worker = get_worker()
        worker.proc.stdin.write(json.dumps({**task, "skip": skip}) + "\n")
        worker.proc.stdin.flush()
        while True:
            event = worker.read(timeout)
            if event is None:
                how = worker.stop()
                get_worker(reset=True)
                if current is None:  # died before its first case: the entry's setup
                    on_result({"index": -1, "dtype": "-", "label": "(sample generation)", "variant": "-",
                               "status": "crash", "message": how})
                    return
                on_result({**current, "status": "crash", "message": how})
                skip, current = current["index"] + 1, None
                break
            if event["event"] == "start":
                current = event
            elif event["event"] == "result":
                on_result(event)
                current = None
            elif event["event"] == "done":
                return


def run(tasks: list[dict], *, jobs: int = 1, case_timeout: float = 600.0, progress=None) -> dict:
    """{op id: [verdicts]} for `tasks` (worker task dicts), run by `jobs` workers."""
    todo: queue.Queue = queue.Queue()
    for t in tasks:
        todo.put(t)
    results: dict = {t["op"]: [] for t in tasks}
    lock = threading.Lock()

    def thread():
        state = {"worker": None}

        def get_worker(reset=False):
            if reset:
                state["worker"] = None
                return None
            if state["worker"] is None:
                w = _Worker(sys.executable)
                ready = w.read(case_timeout)
                if ready is None or ready.get("event") != "ready":
                    raise RuntimeError(f"a conformance worker did not start: {w.stop()}")
                state["worker"] = w
            return state["worker"]

        while True:
            try:
                task = todo.get_nowait()
            except queue.Empty:
                break
            start = time.perf_counter()

            def on_result(v, op=task["op"]):
                with lock:
                    results[op].append(v)

            _run_entry(get_worker, task, case_timeout, on_result)
            if progress:
                with lock:
                    progress(task["op"], results[task["op"]], time.perf_counter() - start)
        if state["worker"] is not None:
            state["worker"].proc.stdin.close()
            state["worker"].proc.wait()

    threads = [threading.Thread(target=thread) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
