"""`fusec cache list|clear`: show or empty the compile cache of torch.compile(backend="fusec")
(the cache itself: fusec.cache)."""

from __future__ import annotations

import argparse

from ..cache import CompileCache
from .args import ArgumentParser

__all__ = ["cmd_cache"]


def cmd_cache(argv) -> int:
    """`fusec cache list|clear [--dir DIR]`."""
    p = ArgumentParser(prog="fusec cache", formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Show or empty fusec's compile cache (used by torch.compile(backend=\"fusec\")).\n\n"
                                   "Location: $FUSEC_CACHE_DIR, else $XDG_CACHE_HOME/fusec, else ~/.cache/fusec.")
    p.add_argument("action", choices=["list", "clear"], help="list: one line per entry; clear: delete them all")
    p.add_argument("--dir", help="the cache directory (default: as above)")
    args = p.parse_args(argv)
    cache = CompileCache(args.dir)
    if args.action == "clear":
        n = cache.clear()
        print(f"fusec cache: cleared {n} entr{'y' if n == 1 else 'ies'} from {cache.root}")
        return 0
    entries = cache.entries()
    print(f"fusec cache: {cache.root}: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}")
    for key, s in sorted(entries.items(), key=lambda kv: str(kv[1].get("created", ""))):
        target = s.get("target") or s.get("options", {}).get("target", "?")
        arch = f" {s['arch']}" if s.get("arch") else ""
        hits = "?" if s.get("hits") is None else s["hits"]
        print(f"  {key[:16]}  {target}{arch}  {s.get('kernels', '?')} kernel(s)  {s['bytes']} bytes  "
              f"hits {hits}  {s.get('created', '')}  {s.get('ops', '')}  ({s.get('inputs', '')})")
    return 0
