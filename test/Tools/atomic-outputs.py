# fusec.commands.outputs.write_files_atomically: all files are written or none is, a failure at any step
# (a full disk while writing, a rename that fails half way) leaves the previous files as they were
# and no temporary file behind.

# RUN: rm -rf %t && mkdir %t
# RUN: %python %s %t | FileCheck %s

import errno
import os
import sys
from unittest import mock

from fusec.diagnostics import FusecError
from fusec.commands.outputs import write_files_atomically

folder = sys.argv[1]
ptx, manifest = os.path.join(folder, "k.ptx"), os.path.join(folder, "k.json")


def run(name):
    print(f"TEST: {name}")
    return name


def show():
    """The folder's files (temporaries too) and their text."""
    for entry in sorted(os.listdir(folder)):
        with open(os.path.join(folder, entry)) as f:
            print(f"{entry}: {f.read().strip()}")


def attempt(files):
    try:
        write_files_atomically(files)
        print("written")
    except FusecError as err:
        print(f"error: {err.message}")


# CHECK-LABEL: TEST: both_written
# CHECK-NEXT:  written
# CHECK-NEXT:  k.json: old manifest
# CHECK-NEXT:  k.ptx: old ptx
# CHECK-NEXT:  mode 644
run("both_written")
os.umask(0o022)
attempt({ptx: "old ptx\n", manifest: "old manifest\n"})
show()
print(f"mode {os.stat(ptx).st_mode & 0o777:o}")

# A full disk while the manifest is written: nothing is replaced, no temporary is left.
# CHECK-LABEL: TEST: disk_full_while_writing
# CHECK-NEXT:  error: cannot write {{.*}}k.json: No space left on device
# CHECK-NEXT:  k.json: old manifest
# CHECK-NEXT:  k.ptx: old ptx
run("disk_full_while_writing")
real_fdopen = os.fdopen


def fdopen_full_on_second(fd, *args, _calls=[], **kwargs):  # noqa: B006 (counts calls)
    _calls.append(fd)
    if len(_calls) == 2:
        os.close(fd)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_fdopen(fd, *args, **kwargs)


with mock.patch("os.fdopen", fdopen_full_on_second):
    attempt({ptx: "new ptx\n", manifest: "new manifest\n"})
show()

# The second rename fails: the first file, already replaced, is put back as it was; no temporary or
# backup file is left.
# CHECK-LABEL: TEST: rename_fails_half_way
# CHECK-NEXT:  error: cannot write {{.*}}k.json: Permission denied
# CHECK-NEXT:  k.json: old manifest
# CHECK-NEXT:  k.ptx: old ptx
# CHECK-NEXT:  TEST: end
run("rename_fails_half_way")
real_replace = os.replace


def replace_fails_on_second(src, dst, _calls=[]):  # noqa: B006 (counts calls)
    _calls.append(dst)
    if len(_calls) == 2:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))
    return real_replace(src, dst)


with mock.patch("os.replace", replace_fails_on_second):
    attempt({ptx: "new ptx\n", manifest: "new manifest\n"})
show()
run("end")
