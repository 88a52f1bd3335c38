"""Round-trip every .mlir file under a folder through fusec-opt: print, parse the printout, print
again, and require the two printouts to be identical.

    python roundtrip.py TEST_ROOT

Files named invalid*.mlir hold IR that must not parse or verify, and are skipped. fusec-opt runs
in this process (its `main`, the `fusec-opt` command's entry point) to keep the test fast.
"""

import contextlib
import io
import os
import sys
import tempfile

from fusec.commands.opt import main as fusec_opt


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = fusec_opt(argv)
    return rc, out.getvalue(), err.getvalue()


def mlir_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "Output")
        for name in sorted(filenames):
            if name.endswith(".mlir") and not name.startswith("invalid"):
                yield os.path.join(dirpath, name)


def roundtrip(path, scratch):
    rc, first, err = run([path, "--split-input-file"])
    if rc != 0:
        return f"does not parse: {err.strip().splitlines()[0] if err.strip() else rc}"
    with open(scratch, "w", encoding="utf-8") as f:
        f.write(first)
    rc, second, err = run([scratch, "--split-input-file"])
    if rc != 0:
        return f"its printout does not parse: {err.strip().splitlines()[0] if err.strip() else rc}"
    if first != second:
        return "printing its printout gives different text"
    return None


def main():
    root = os.path.abspath(sys.argv[1])
    failures, count = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in mlir_files(root):
            count += 1
            problem = roundtrip(path, os.path.join(tmp, "printed.mlir"))
            rel = os.path.relpath(path, root)
            print(f"{'FAIL' if problem else 'ok'}: {rel}{': ' + problem if problem else ''}")
            if problem:
                failures.append(rel)
    print(f"roundtrip: {count} files, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
