"""`fusec fuzz`: random models, compiled by fusec and checked against PyTorch eager.

    fusec fuzz --target cpu --count 50 --seed 1 --failures-dir DIR
    fusec fuzz --compile-only --count 50 --seed 1       compile to PTX (and ptxas it), run nothing
    fusec fuzz --replay DIR/*.py --target cpu           check model files again
    fusec fuzz --target cpu --dynamic-rows --seed 1     the rows of every input symbolic

Hypothesis generates the models (fusec.fuzz.generate) from --seed, deterministically and with no
example database. Each model is MODEL.py text, checked by a worker process (fusec.fuzz.worker,
which survives compiler crashes) with the oracle of fusec.fuzz.oracle. A model passes, is rejected
(a FusecError about a construct fusec does not support: counted and listed, not a failure) or fails
(a numeric mismatch, a crash, a hang, any other error). Each distinct failure is then shrunk by
hypothesis and written to --failures-dir as a minimal MODEL.py, the error in a comment at its top.

How a failure is shrunk: the first pass runs --count models and records every verdict. Then, for
each distinct failure signature, hypothesis runs again from the same seed; its examples repeat the
first pass (their verdicts come from the record, nothing is recompiled) until the first model with
that signature, which hypothesis then shrinks, every candidate compiled and checked. Exit status 1
when anything failed.

--dynamic-rows compiles each model once with dim 0 of its inputs symbolic (`dynamic_shapes`: the
inputs of rank 2 or more with the first one's row count share one `Dim`) and checks it on inputs
with 3 more rows, against eager on those. A model with no rows to vary, or one torch.export will
not make dynamic (its rows meet a fixed size), is rejected.
"""

from __future__ import annotations

import argparse
import collections
import os
import time

from ..commands.args import ArgumentParser
from ..diagnostics import FusecError
from .generate import isolate_hypothesis
from .known import known_failure

__all__ = ["cmd_fuzz"]


def _parser():
    # fusec's own parser: a bad argument is one `error:` line, as every fusec error is
    p = ArgumentParser(prog="fusec fuzz", description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--target", choices=["cpu", "cuda"], default="cpu",
                   help="where the compiled models run (default: cpu, MLIR's ExecutionEngine)")
    p.add_argument("--count", type=int, default=100, help="distinct models to try (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (default: 0)")
    p.add_argument("--failures-dir", metavar="DIR", default="fuzz-failures",
                   help="where minimal failing models are written (default: fuzz-failures)")
    p.add_argument("--compile-only", action="store_true",
                   help="compile each model to PTX and assemble it with ptxas when found; run nothing")
    p.add_argument("--no-shrink", action="store_true", help="write failing models as found, unshrunk")
    p.add_argument("--shrink-seconds", type=float, default=120,
                   help="time to spend shrinking each distinct failure (default: 120)")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds one model may take before it counts as a hang (default: 300)")
    p.add_argument("--arch", default="sm_90", help="GPU architecture (default: sm_90)")
    p.add_argument("--dynamic-rows", action="store_true",
                   help="compile each model with dim 0 of its inputs symbolic (dynamic_shapes) and check it "
                        "at another row count")
    p.add_argument("--replay", nargs="+", metavar="MODEL.py", help="check these model files instead of fuzzing")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per model")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks for errors")
    return p


class _Session:
    """The worker and every verdict so far, by model source."""

    def __init__(self, args):
        from .worker import Worker

        self.args = args
        self.worker = Worker(target=args.target, compile_only=args.compile_only, arch=args.arch,
                             timeout=args.timeout, dynamic_rows=args.dynamic_rows)
        self.verdicts: dict[str, dict] = {}

    def verdict(self, source: str) -> dict:
        if source not in self.verdicts:
            verdict = self.worker.evaluate(source)
            known = known_failure(verdict)
            if known:  # listed, not failed: see fusec.fuzz.known
                verdict = {**verdict, "status": "known", "known": known}
            self.verdicts[source] = verdict
        return self.verdicts[source]


def _settings(count: int, phases):
    from hypothesis import HealthCheck, Verbosity, settings

    return settings(max_examples=count, database=None, deadline=None, derandomize=False, phases=phases,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                    verbosity=Verbosity.quiet, print_blob=False)


class _Reproduced(Exception):
    pass


def _explore(session: _Session, on_model) -> list[str]:
    """First pass: `--count` distinct models, in order; every verdict recorded."""
    import hypothesis
    from hypothesis import Phase, given
    from hypothesis.errors import Unsatisfiable

    from .generate import models

    order: list[str] = []

    @_settings(session.args.count, [Phase.generate])
    @hypothesis.seed(session.args.seed)
    @given(models(rows=session.args.dynamic_rows))
    def test(model):
        source = model.source()
        if source in order:  # an example seen already is not a new model: it does not count
            hypothesis.reject()
        order.append(source)
        on_model(len(order), model, session.verdict(source))

    try:
        test()
    except Unsatisfiable:
        pass
    return order


def _shrink(session: _Session, target_signature: str) -> tuple[str | None, int]:
    """Second pass for one failure signature: the smallest model hypothesis finds that fails so, and
    how many new models shrinking compiled."""
    import hypothesis
    from hypothesis import Phase, given

    from .generate import models

    seen: set[str] = set()
    state = {"best": None, "deadline": None}
    known = len(session.verdicts)

    @_settings(session.args.count, [Phase.generate, Phase.shrink])
    @hypothesis.seed(session.args.seed)
    @given(models(rows=session.args.dynamic_rows))
    def test(model):
        source = model.source()
        if state["best"] is None:  # replaying the first pass: decide as it did
            if source in seen:
                hypothesis.reject()
            seen.add(source)
        elif source not in session.verdicts and time.monotonic() > state["deadline"]:
            return  # out of shrinking time: an unseen candidate counts as passing
        if session.verdict(source)["signature"] == target_signature:
            if state["best"] is None:
                state["deadline"] = time.monotonic() + session.args.shrink_seconds
            state["best"] = source
            raise _Reproduced(target_signature)

    try:
        test()
    except _Reproduced:
        pass
    except Exception as err:  # noqa: BLE001 - hypothesis gave up (flaky, ...): keep the smallest model seen
        print(f"  (shrinking stopped: {type(err).__name__})")
    return state["best"], len(session.verdicts) - known


def _summary(source: str) -> str:
    """The generator's one-line summary (the docstring) of a model's source."""
    first = source.split("\n", 1)[0]
    return first.strip('"').removeprefix("fusec fuzz model: ").rstrip(".")


def _write_model(directory: str, name: str, source: str, verdict: dict, args, note: str) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    where = "cuda, compile only" if args.compile_only else args.target
    head = [f"# fusec fuzz {note} (target {where}, seed {args.seed}): {verdict['kind']}"]
    body = verdict["message"].splitlines() + [d for d in verdict.get("details", []) if d not in verdict["message"]]
    head += [f"#   {line}" for line in body[:40]]
    replay = f"fusec fuzz --replay {path} " + ("--compile-only" if args.compile_only else f"--target {args.target}") \
        + (" --dynamic-rows" if args.dynamic_rows else "")
    head.append(f"# reproduce: {replay}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(head) + "\n" + source)
    return path


def _fuzz(args) -> int:
    session = _Session(args)
    mode = "compile only (PTX" + (", ptxas)" if _has_ptxas() else ")") if args.compile_only else f"target {args.target}"
    mode += ", dynamic rows" if args.dynamic_rows else ""
    print(f"fusec fuzz: {mode}, seed {args.seed}, {args.count} models", flush=True)
    try:
        return _fuzz_with(session, args)
    finally:
        session.worker.close()


def _fuzz_with(session: _Session, args) -> int:
    session.worker.start()
    start = time.perf_counter()

    def on_model(i, model, verdict):
        if args.verbose or verdict["status"] == "failed":
            status = verdict["status"] if verdict["status"] != "failed" else f"FAILED {verdict['signature']}"
            print(f"  [{i:3d}] {verdict.get('seconds', 0):5.1f} s  {model.summary()}: {status}", flush=True)

    order = _explore(session, on_model)
    wall = time.perf_counter() - start
    verdicts = [session.verdicts[s] for s in order]
    counts = collections.Counter(v["status"] for v in verdicts)
    _list_rejected(order, verdicts, args)
    failed = [(s, v) for s, v in zip(order, verdicts) if v["status"] == "failed"]
    if failed:
        _report_failures(session, failed, args)
    per_model = sum(v.get("seconds", 0) for v in verdicts) / max(len(verdicts), 1)
    for source, v in zip(order, verdicts):
        if v["status"] == "known":
            print(f"known failure (see test/Fuzz/Inputs/regressions/{v['known']}): {v['signature']}")
    print(f"fusec fuzz: tried {len(order)}, passed {counts['pass']}, rejected {counts['rejected']}, "
          f"failed {counts['failed']}, known {counts['known']} ({per_model:.2f} s per model, {wall:.0f} s in all)")
    return 1 if counts["failed"] else 0


def _has_ptxas() -> bool:
    from ..backends.cuda_tools import ptxas_path

    return ptxas_path() is not None


def _list_rejected(order, verdicts, args) -> None:
    groups = collections.defaultdict(list)
    for i, (source, v) in enumerate(zip(order, verdicts), 1):
        if v["status"] == "rejected":
            groups[v["signature"]].append((i, source, v))
    if not groups:
        return
    print(f"rejected: {sum(len(g) for g in groups.values())} models, {len(groups)} reasons")
    for k, (sig, group) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1])), 1):
        i, source, v = group[0]
        path = _write_model(os.path.join(args.failures_dir, "rejected"), f"seed{args.seed}-{k}.py", source, v, args,
                            "rejection")
        print(f"  {len(group)}x {v['message'].splitlines()[0]}\n      e.g. model #{i} -> {path}")


def _report_failures(session, failed, args) -> None:
    by_signature = collections.OrderedDict()
    for source, v in failed:
        by_signature.setdefault(v["signature"], []).append(source)
    print(f"failed: {len(failed)} models, {len(by_signature)} distinct failures")
    for k, (sig, sources) in enumerate(by_signature.items(), 1):
        first = sources[0]
        start = time.perf_counter()
        best, tried = (None, 0) if args.no_shrink else _shrink(session, sig)
        source = best or first
        note = "failure"
        if best and best != first:
            note = (f"failure, shrunk by hypothesis ({tried} models in {time.perf_counter() - start:.0f} s) "
                    f"from: {_summary(first)}")
        prefix = (args.target if not args.compile_only else "ptx") + ("-dynamic" if args.dynamic_rows else "")
        path = _write_model(args.failures_dir, f"{prefix}-seed{args.seed}-{k}.py",
                            source, session.verdicts[source], args, note)
        print(f"  {len(sources)}x {sig}\n      {note} -> {path}")


def _replay(args) -> int:
    from .worker import Worker

    worker = Worker(target=args.target, compile_only=args.compile_only, arch=args.arch, timeout=args.timeout,
                    dynamic_rows=args.dynamic_rows)
    try:
        counts = _replay_with(worker, args)
    finally:
        worker.close()
    print(f"fusec fuzz: tried {len(args.replay)}, passed {counts['pass']}, rejected {counts['rejected']}, "
          f"failed {counts['failed']}")
    return 1 if counts["failed"] else 0


def _replay_with(worker, args) -> collections.Counter:
    worker.start()
    counts = collections.Counter()
    for path in args.replay:
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except OSError as err:
            raise FusecError(f"cannot read {path}: {err.strerror}") from None
        v = worker.evaluate(source)
        counts[v["status"]] += 1
        print(f"{path}: {v['status'].upper() if v['status'] == 'failed' else v['status']}"
              + (f": {v['message'].splitlines()[0]}" if v["message"] else ""))
        if args.verbose or v["status"] == "failed":
            for line in v.get("details", []):
                print(f"    {line}")
    return counts


def cmd_fuzz(argv) -> int:
    args = _parser().parse_args(argv)
    if args.count < 1:
        raise FusecError(f"--count must be at least 1, not {args.count}")
    if args.replay:
        return _replay(args)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fusec-fuzz-hypothesis-") as home:
        isolate_hypothesis(home)
        return _fuzz(args)
