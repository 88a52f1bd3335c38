"""fusec's version: one place, imported by the modules that key caches and tables on it."""

__version__ = "0.1.0"


def source_digest() -> str:
    """SHA-256 of fusec's own source (the package, its passes and dialects: every .py and .json file),
    computed once per process. The compile cache keys on it, so that a compiler whose code changed
    (an upgrade that keeps the version number, a developer's edit) never loads kernels an older
    compiler made."""
    global _digest
    if _digest is None:
        import hashlib
        import importlib.util
        import os

        roots = {os.path.dirname(os.path.abspath(__file__))}  # the package; its passes and dialects may live apart
        for name in ("fusec.passes", "fusec.dialects"):
            roots.update(importlib.util.find_spec(name).submodule_search_locations or [])
        digest = hashlib.sha256()
        for root in sorted(roots):
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(f for f in files if f.endswith((".py", ".json"))):
                    path = os.path.join(folder, name)
                    digest.update(os.path.relpath(path, root).encode() + b"\0")
                    with open(path, "rb") as f:
                        digest.update(f.read())
        _digest = digest.hexdigest()
    return _digest


_digest = None
