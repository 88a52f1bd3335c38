"""Write compiler outputs atomically: all of them appear, or none does.

Each file is written to a temporary name in its own folder and renamed into place only when every
file has been written, so a failed compile (or a full disk, or ^C) leaves no half-written PTX or
manifest, no stale pair, and no temporary file. `check_writable` tells a bad `-o` before any work.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

from ..diagnostics import FusecError

__all__ = ["check_writable", "write_files_atomically"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _is_special(path: str) -> bool:
    """An existing device or pipe (`-o /dev/null`): written in place, as a shell's `>` would."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_writable(path: str, what: str = "-o") -> None:
    """Raise FusecError unless `path` can be written: it names a file (not a folder) in an existing,
    writable folder. Called before compiling, so that a bad output path costs no compile."""
    if not path:
        raise FusecError(f"{what} needs a file name")
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise FusecError(f"cannot write {path}: it is a directory")
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise FusecError(f"cannot write {path}: permission denied")
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FusecError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FusecError(f"cannot write {path}: folder {folder} is not writable")


def _write_temporary(target: str, text: str) -> str:
    """Write `text` to a new temporary file beside `target`; returns its path."""
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".fusec-tmp",
                               dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(text)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)  # if fdopen itself failed; closed already otherwise
        os.unlink(tmp)
        raise
    return tmp


def _keep_previous(target: str) -> str | None:
    """A hard link to the file at `target`, to put back if a later step fails; None when there is no
    such file (or the file system has no links: then a failure removes the new file instead)."""
    if not os.path.isfile(target):
        return None
    backup = f"{os.path.join(os.path.dirname(target), '.' + os.path.basename(target))}.{os.getpid()}.fusec-old"
    try:
        os.link(target, backup)
    except OSError:
        return None
    return backup


def write_files_atomically(files: dict[str, str]) -> None:
    """Write {path: text}: all files, or (on any error) none, with the previous files as they were
    and no temporary file left behind."""
    for path in files:
        check_writable(path)
    staged = []  # (path, final path, temporary file or None for a device, text)
    renamed = []  # (final path, the previous file's backup or None)
    path = None
    try:
        for path, text in files.items():
            target = os.path.realpath(path)  # through a symbolic link, not over it
            staged.append((path, target, None if _is_special(target) else _write_temporary(target, text), text))
        for path, target, tmp, text in staged:
            if tmp is None:
                with open(target, "w", encoding="utf-8") as f:
                    f.write(text)
                continue
            renamed.append((target, _keep_previous(target)))
            os.replace(tmp, target)
    except OSError as err:
        for target, backup in reversed(renamed):  # put back what the renames replaced
            with contextlib.suppress(OSError):
                if backup:
                    os.replace(backup, target)  # a no-op if the rename never happened (same file)
                else:
                    os.unlink(target)
        raise FusecError(f"cannot write {path}: {err.strerror or err}") from None
    finally:
        for _, _, tmp, _ in staged:
            if tmp is not None and os.path.exists(tmp):
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        for _, backup in renamed:
            if backup and os.path.lexists(backup):
                with contextlib.suppress(OSError):
                    os.unlink(backup)
