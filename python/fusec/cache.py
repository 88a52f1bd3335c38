"""The compile cache on disk: a compiled model is stored once and loaded by any later process.

A key is the SHA-256 of what decides the compiled code: the graph (as canonical text), the input
shapes and dtypes, the target and GPU architecture, every compile option, and the versions of fusec
and torch. Loading an entry rebuilds a `CompiledModel` from the stored PTX (cuda) or llvm-dialect
module (cpu) and its launch manifest: nothing is recompiled.

The directory is meant to be read by people:

    $FUSEC_CACHE_DIR (default $XDG_CACHE_HOME/fusec, else ~/.cache/fusec)
      index.json                  {key: summary}: what, when, kernels, hits
      entries/KEY/kernel.ptx      the PTX (cuda target), or module.mlir (cpu target)
      entries/KEY/manifest.json   the launch manifest
      entries/KEY/entry.json      the key's ingredients and the compile options

`fusec cache list` and `fusec cache clear` show and empty it. Writes are atomic (a finished entry
is renamed into place; the index is replaced under a lock), so processes compiling at the same
time never see half an entry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import time

import torch

from .api import CompiledModel
from .compilation import Compilation
from .diagnostics import FusecError
from .options import CompileOptions
from .targets import target_of
from .version import __version__, source_digest

try:
    import fcntl
except ImportError:  # no fcntl (Windows): the rename is still atomic
    fcntl = None

__all__ = ["FORMAT", "CompileCache", "cache_dir", "cache_key", "compiled_from_artifact"]

FORMAT = "fusec-cache/1"


def cache_dir() -> str:
    """$FUSEC_CACHE_DIR, else $XDG_CACHE_HOME/fusec, else ~/.cache/fusec."""
    if os.environ.get("FUSEC_CACHE_DIR"):
        return os.environ["FUSEC_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fusec")


def cache_key(ingredients: dict) -> str:
    """SHA-256 of `ingredients` (JSON-able) plus the cache format, the fusec and torch versions and
    fusec's source (`source_digest`: a changed compiler misses the entries an older one stored)."""
    text = json.dumps({"format": FORMAT, "fusec": __version__, "source": source_digest(), "torch": torch.__version__,
                       **ingredients},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def compiled_from_artifact(options, manifest: dict, artifact: str, source: str = "<cache>", parameters=(),
                           tensors=()) -> CompiledModel:
    """A CompiledModel rebuilt from what a compile made: its options (CompileOptions or their dict), launch
    manifest and artifact (a cache entry, or a compile worker's answer); `parameters` are the names of
    its trailing state inputs, `tensors` their values."""
    options = options if isinstance(options, CompileOptions) else CompileOptions(**options)
    comp = Compilation(options, source, manifest=manifest, parameters=list(parameters))
    comp.texts[target_of(options.target).artifact_stage] = artifact
    comp.ptx = comp.texts.get("ptx")  # what CompiledModel shows as .ptx (cuda)
    return CompiledModel(comp, tensors)


class CompileCache:
    """One cache directory. `load` and `store` never raise for a damaged cache: an unreadable entry
    is a miss, a failed write leaves the cache as it was (the compile result is still returned)."""

    def __init__(self, root: str | None = None):
        self.root = os.path.abspath(root or cache_dir())
        self.entries_dir = os.path.join(self.root, "entries")
        self.index_path = os.path.join(self.root, "index.json")

    def load(self, key: str, parameters=()):
        """The CompiledModel stored under `key`, or None."""
        folder = os.path.join(self.entries_dir, key)
        try:
            entry = _read_json(os.path.join(folder, "entry.json"))
            manifest = _read_json(os.path.join(folder, "manifest.json"))
            options = CompileOptions(**entry["options"])
            target = target_of(options.target)
            with open(os.path.join(folder, target.artifact_file)) as f:
                artifact = f.read()
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, FusecError):
            self._discard(folder)  # damaged: the compile that follows stores a good one
            return None
        self._update_index(lambda index: index.get(key) and index[key].update(
            hits=index[key].get("hits", 0) + 1, last_used=_now()))
        return compiled_from_artifact(options, manifest, artifact, entry.get("source", "<cache>"),
                                      list(entry.get("parameters", [])), parameters)

    def store(self, key: str, compiled, summary: dict | None = None, details: dict | None = None) -> bool:
        """Write `compiled` (a CompiledModel) under `key`, with `summary` in the index and entry.json and
        `details` (the key's ingredients, say) in entry.json only; False when the cache cannot be written."""
        comp = compiled.compilation
        target = comp.target
        entry = {"key": key, "format": FORMAT, "options": dataclasses.asdict(comp.options),
                 "source": comp.source_name, "parameters": list(comp.parameters), **(summary or {}),
                 **(details or {})}
        final = os.path.join(self.entries_dir, key)
        try:
            os.makedirs(self.entries_dir, exist_ok=True)
            work = tempfile.mkdtemp(prefix=".tmp-", dir=self.entries_dir)
            with open(os.path.join(work, target.artifact_file), "w") as f:
                f.write(comp.artifact)
            _write_json(os.path.join(work, "manifest.json"), {**comp.manifest, target.manifest_key: target.artifact_file})
            _write_json(os.path.join(work, "entry.json"), entry)
            try:
                os.rename(work, final)
            except OSError:  # another process stored the same key first: keep theirs
                shutil.rmtree(work, ignore_errors=True)
            self._update_index(lambda index: index.setdefault(key, {
                "created": _now(), "target": target.name, "arch": comp.options.arch if target.for_one_arch else None,
                "kernels": len(comp.manifest["kernels"]), "hits": 0, **(summary or {})}))
            return True
        except OSError:
            return False

    def _discard(self, folder: str) -> None:
        """Remove an entry: renamed away first (atomic), so no reader sees it half deleted."""
        trash = tempfile.mkdtemp(prefix=".trash-", dir=self.entries_dir)
        try:
            os.rename(folder, os.path.join(trash, "entry"))
        except OSError:
            pass
        shutil.rmtree(trash, ignore_errors=True)

    def entries(self) -> dict:
        """{key: summary} of the entries on disk (the index, with entries it lacks read from disk)."""
        index = self._read_index()
        on_disk = set(os.listdir(self.entries_dir)) if os.path.isdir(self.entries_dir) else set()
        found = {k: v for k, v in index.items() if k in on_disk}
        for key in sorted(on_disk - set(found)):
            with contextlib.suppress(OSError, ValueError):
                if not key.startswith("."):
                    found[key] = {**_read_json(os.path.join(self.entries_dir, key, "entry.json")), "hits": None}
        for key, summary in found.items():
            summary["bytes"] = _folder_bytes(os.path.join(self.entries_dir, key))
        return found

    def clear(self) -> int:
        """Delete every entry and the index; the number of entries deleted."""
        n = len(self.entries())
        with self._lock():
            shutil.rmtree(self.entries_dir, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.index_path)
        return n

    def _read_index(self) -> dict:
        try:
            index = _read_json(self.index_path)
            return index if isinstance(index, dict) else {}
        except (OSError, ValueError):
            return {}

    def _update_index(self, change) -> None:
        """Read, change and atomically replace index.json, under a lock shared with other processes."""
        try:
            with self._lock():
                index = self._read_index()
                change(index)
                _write_json(self.index_path + ".tmp", index)
                os.replace(self.index_path + ".tmp", self.index_path)
        except OSError:
            pass  # the index is a convenience: entries() rebuilds what it lacks

    @contextlib.contextmanager
    def _lock(self):
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, "index.lock"), "w") as handle:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield


def _now() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S")


def _read_json(path: str):
    with open(path) as f:
        return json.load(f)


def _write_json(path: str, value) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True, default=str)
        f.write("\n")


def _folder_bytes(folder: str) -> int:
    total = 0
    for name in (os.listdir(folder) if os.path.isdir(folder) else []):
        with contextlib.suppress(OSError):
            total += os.path.getsize(os.path.join(folder, name))
    return total
