"""Run the commands of the walkthroughs (docs/walkthroughs/*.md) and check their printed output.

A ```console block holds commands, each on a line starting with `$ ` (a trailing `\\` continues it),
and below each the output it prints (standard output and error together). A line `...` stands for
any number of lines, so that long or machine-dependent output (timings) can be left out. A command
that exits non-zero must say so: its output ends with a line `[exit status N]`. Other blocks
(```sh, ```python) are not run.

Each file runs in a fresh temporary folder that holds links to the checkout's top-level entries
(`examples/`, `test/`, ...), so commands use the paths a reader would and files they write go
nowhere else. A file whose commands repeat those of a file already run (the Chinese chapter of an
English one) reuses their output instead of running them again.

    run_walkthroughs.py [--path DIR] [--chapter NN] [--check-pairs] FILE.md|DIR ...

--check-pairs: every chapter X.md has X.zh.md, and both hold the same commands.
Exit status 1 when any output differs (each difference is printed), 0 otherwise.
"""

from __future__ import annotations

import argparse
import difflib
import glob
import os
import re
import subprocess
import sys
import shutil
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*(\S*)")


def examples(path: str) -> list[tuple[int, str, list[str]]]:
    """(line, command, expected output lines) of every command in the file's ```console blocks."""
    out, block, lang, fence, block_start = [], None, None, None, 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if block is None and m:
            fence, lang, block, block_start = m[2], m[3], [], i + 1
        elif block is not None and lines[i].strip() == fence:
            block, lang = None, None
        elif block is not None and lang == "console":
            text = lines[i]
            if text.startswith("$ "):
                start, command = i + 1, text[2:]
                while command.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    command = command[:-1].rstrip() + " " + lines[i].strip()
                out.append((start, command, []))
            elif out and out[-1][0] > block_start:
                out[-1][2].append(text)
        i += 1
    return out


def _trim(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def matches(expected: list[str], actual: list[str]) -> bool:
    """`expected` equals `actual`, a line `...` matching any run of lines (none included)."""
    expected, actual = _trim(expected), _trim(actual)
    memo: dict = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(expected):
                memo[i, j] = j == len(actual)
            elif expected[i].strip() == "...":
                memo[i, j] = any(match(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                memo[i, j] = j < len(actual) and expected[i] == actual[j] and match(i + 1, j + 1)
        return memo[i, j]

    return match(0, 0)


def _workdir() -> str:
    folder = tempfile.mkdtemp(prefix="fusec-walkthrough-")
    for name in os.listdir(ROOT):
        if not name.startswith("."):
            os.symlink(os.path.join(ROOT, name), os.path.join(folder, name))
    return folder


def _run(command: str, cwd: str, env: dict) -> list[str]:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    lines = proc.stdout.splitlines()
    if proc.returncode:
        lines.append(f"[exit status {proc.returncode}]")
    return lines


def run_file(path: str, env: dict, cache: dict) -> int:
    """Run the file's commands; returns the number that printed something else than expected."""
    failures, history, cwd, started = 0, (), None, time.monotonic()
    cases = examples(path)
    for n, (line, command, expected) in enumerate(cases):
        history += (command,)
        if history in cache and cwd is None:
            actual = cache[history]
        else:
            if cwd is None:  # the first command not cached: run the ones before it, for their files
                cwd = _workdir()
                for earlier in history[:-1]:
                    _run(earlier, cwd, env)
            actual = cache[history] = _run(command, cwd, env)
        where = f"{os.path.relpath(path, ROOT)}:{line}"
        if matches(expected, actual):
            print(f"ok: {where}: $ {command}")
            continue
        failures += 1
        print(f"FAIL: {where}: $ {command}")
        for d in difflib.unified_diff(_trim(expected), _trim(actual), "expected", "actual", lineterm=""):
            print(f"  {d}")
    if cwd is not None:
        shutil.rmtree(cwd, ignore_errors=True)
    print(f"{os.path.relpath(path, ROOT)}: {len(cases)} commands, {failures} failed "
          f"({time.monotonic() - started:.0f} s)")
    return failures


def check_pairs(files: list[str]) -> int:
    problems = 0
    for path in files:
        if path.endswith(".zh.md"):
            continue
        zh = path[:-3] + ".zh.md"
        if not os.path.exists(zh):
            print(f"FAIL: {os.path.relpath(path, ROOT)} has no Chinese chapter {os.path.basename(zh)}")
            problems += 1
        elif [c for _, c, _ in examples(path)] != [c for _, c, _ in examples(zh)]:
            print(f"FAIL: {os.path.relpath(zh, ROOT)} does not run the commands of {os.path.basename(path)}")
            problems += 1
    print(f"pairs: {len([f for f in files if not f.endswith('.zh.md')])} chapters, {problems} problems")
    return problems


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("inputs", nargs="+", metavar="FILE.md|DIR")
    p.add_argument("--path", action="append", default=[], help="folders put first on PATH (the tools)")
    p.add_argument("--chapter", help="only the files named NN-*.md (NN: the chapter's number)")
    p.add_argument("--check-pairs", action="store_true", help="check the en/zh pairs instead of running")
    args = p.parse_args(argv)
    files = []
    for item in args.inputs:
        files += sorted(glob.glob(os.path.join(item, "*.md"))) if os.path.isdir(item) else [item]
    if args.chapter:
        files = [f for f in files if os.path.basename(f).startswith(args.chapter + "-")]
    if not files:
        print("no walkthrough files found", file=sys.stderr)
        return 1
    files = [os.path.abspath(f) for f in files]
    if args.check_pairs:
        return int(check_pairs(files) > 0)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(args.path + [env.get("PATH", "")])
    env.setdefault("COLUMNS", "100")
    cache: dict = {}
    failures = sum(run_file(f, env, cache) for f in files)
    print(f"walkthroughs: {len(files)} files, {failures} failed")
    return int(failures > 0)


if __name__ == "__main__":
    sys.exit(main())
