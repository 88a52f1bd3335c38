# The layout rules of issue 21, checked on the source tree: no source file over 400 lines; passes/
# holds passes only (each module has FLAG, SUMMARY and run); no import cycle among fusec's modules,
# counting the imports inside functions too; every package is in pyproject.toml's list (a
# non-editable install has only those).
# RUN: %python %s %fusec_src_root | FileCheck %s
# CHECK: TEST: sizes
# CHECK-NEXT: no file over 400 lines
# CHECK: TEST: passes
# CHECK-NEXT: every module of passes/ is a pass
# CHECK: TEST: cycles
# CHECK-NEXT: no import cycle
# CHECK-NOT: cycle:
# CHECK: TEST: packaged
# CHECK-NEXT: every package is in pyproject.toml

import ast
import os
import re
import sys

root = sys.argv[1]
MAX_LINES = 400
# Where each package's modules are (pyproject.toml's package-dir).
PACKAGES = {"fusec": os.path.join(root, "python", "fusec"), "fusec.passes": os.path.join(root, "passes"),
            "fusec.dialects": os.path.join(root, "dialects")}


def modules():
    """module name -> path, for every .py file of the package."""
    found = {}
    for package, top in PACKAGES.items():
        for dirpath, _, files in os.walk(top):
            for name in files:
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, name), top)[:-3].replace(os.sep, ".")
                    mod = package if rel == "__init__" else f"{package}.{rel.removesuffix('.__init__')}"
                    found[mod] = os.path.join(dirpath, name)
    return found


MODULES = modules()

print("TEST: sizes")
long = sorted((n, p) for p in MODULES.values() if (n := sum(1 for _ in open(p, encoding="utf-8"))) > MAX_LINES)
for n, path in long:
    print(f"over {MAX_LINES} lines: {os.path.relpath(path, root)} ({n})")
if not long:
    print(f"no file over {MAX_LINES} lines")

print("TEST: passes")
not_passes = []
for mod, path in sorted(MODULES.items()):
    if mod.startswith("fusec.passes.") and mod != "fusec.passes":
        names = {t.id for node in ast.parse(open(path, encoding="utf-8").read()).body
                 if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
        names |= {node.name for node in ast.parse(open(path, encoding="utf-8").read()).body
                  if isinstance(node, ast.FunctionDef)}
        if not {"FLAG", "SUMMARY", "run"} <= names:
            not_passes.append(mod)
for mod in not_passes:
    print(f"not a pass (no FLAG, SUMMARY and run): {mod}")
if not not_passes:
    print("every module of passes/ is a pass")


def imports(mod, path):
    """The fusec modules `mod` imports, anywhere in the file (functions included)."""
    package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # `from X import a`: the module X.a if there is one, else a name of X
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return {m for m in out if m in MODULES and m != mod}


GRAPH = {mod: imports(mod, path) for mod, path in MODULES.items()}


def cycles():
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


print("TEST: cycles")
found = cycles()
for comp in found:
    print("cycle: " + " -> ".join(comp))
if not found:
    print("no import cycle")


print("TEST: packaged")
pyproject = open(os.path.join(root, "pyproject.toml"), encoding="utf-8").read()
section = pyproject.split("\n[tool.setuptools]\n", 1)[1].split("\n[", 1)[0]  # up to the next table
listed = set(re.findall(r'"(fusec[\w.]*)"', section))
packages = {m for m, p in MODULES.items() if p.endswith("__init__.py")}
for missing in sorted(packages - listed):
    print(f"not in pyproject.toml's packages: {missing}")
if packages <= listed:
    print("every package is in pyproject.toml")
