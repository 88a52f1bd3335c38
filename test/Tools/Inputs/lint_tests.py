"""Lint fusec's lit tests for the two slips that make a test check nothing:

  1. a test file without a `RUN:` line (lit would still find it, and it would test nothing);
  2. a FileCheck directive whose prefix no RUN line names (`TPB128:` with no --check-prefix=TPB128),
     which FileCheck silently ignores;
and a third that breaks one: `RUN:` inside prose (lit runs whatever follows it on any line).

    python lint_tests.py TEST_ROOT

Test files are what lit.cfg.py runs: *.mlir, *.py and *.test outside Inputs/ and Output/ folders,
lit's own configuration files excepted.
"""

import os
import re
import sys

SUFFIXES = (".mlir", ".py", ".test")
NOT_TESTS = {"lit.cfg.py", "lit.site.cfg.py", "lit.local.cfg"}
# lit's own keywords and comment prefixes, which look like directives but are not FileCheck's.
LIT_KEYWORDS = {"RUN", "REQUIRES", "UNSUPPORTED", "XFAIL", "COM", "ALLOW_RETRIES", "END"}

RUN = re.compile(r"^\s*(?://|#)\s*RUN:(.*)$")
DIRECTIVE = re.compile(r"^\s*(?://|#)\s*([A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*?)"
                       r"(?:-(?:LABEL|NEXT|SAME|NOT|DAG|EMPTY|COUNT-\d+))?:")
PREFIX_OPTION = re.compile(r"--check-prefix(?:es)?(?:=|\s+)([\w,-]+)")


def test_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("Inputs", "Output"))
        for name in sorted(filenames):
            if name.endswith(SUFFIXES) and name not in NOT_TESTS:
                yield os.path.join(dirpath, name)


def run_lines(lines):
    """The RUN commands, continuation lines (ending in a backslash) joined."""
    commands, current = [], ""
    for line in lines:
        m = RUN.match(line)
        if not m:
            continue
        current += m.group(1).strip()
        if current.endswith("\\"):
            current = current[:-1] + " "
        else:
            commands.append(current)
            current = ""
    return commands


def named_prefixes(commands):
    prefixes = set()
    for command in commands:
        for stage in command.split("|"):
            if not re.search(r"(?<![\w-])FileCheck(?![\w-])", stage):
                continue
            options = PREFIX_OPTION.findall(stage)
            if not options:
                prefixes.add("CHECK")
            for option in options:
                prefixes.update(p for p in option.split(",") if p)
    return prefixes


def lint(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    commands = run_lines(lines)
    if not commands:
        return ["no RUN: line"]
    named = named_prefixes(commands)
    problems = []
    for number, line in enumerate(lines, 1):
        if "RUN:" in line and not RUN.match(line):
            problems.append(f"line {number}: `RUN:` that is not a RUN line (lit would run it)")
        m = DIRECTIVE.match(line)
        if m and m.group(1) not in LIT_KEYWORDS and m.group(1) not in named:
            problems.append(f"line {number}: prefix {m.group(1)} is named by no RUN line")
    return problems


def main():
    root = os.path.abspath(sys.argv[1])
    count, bad = 0, 0
    for path in test_files(root):
        count += 1
        for problem in lint(path):
            bad += 1
            print(f"FAIL: {os.path.relpath(path, root)}: {problem}")
    print(f"lint: {count} test files, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
