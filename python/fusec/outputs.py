"""Write compiler outputs atomically: all of them appear, or none does."""

from __future__ import annotations

import os
import tempfile

from .diagnostics import FusecError

__all__ = ["write_files_atomically"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_files_atomically(files: dict[str, str]) -> None:
    """Write {path: text}. Each file goes to a temporary name in its own folder first; only when every
    one is written are they renamed into place, so a failure leaves no partial or stale output."""
    staged = []
    try:
        for path, text in files.items():
            folder = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(folder):
                raise FusecError(f"cannot write {path}: folder {folder} does not exist")
            try:
                fd, tmp = tempfile.mkstemp(prefix=".fusec-", dir=folder)
            except OSError as err:
                raise FusecError(f"cannot write {path}: {err.strerror}") from None
            staged.append((tmp, path))
            os.chmod(tmp, 0o666 & ~_umask())
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
        for tmp, path in staged:
            if os.path.isdir(path):
                raise FusecError(f"cannot write {path}: it is a directory")
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
    except OSError as err:
        raise FusecError(f"cannot write output: {err}") from None
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
