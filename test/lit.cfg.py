"""lit configuration for fusec's tests (the two-file layout of mlir/examples/standalone/test).

`lit.site.cfg.py` (written by CMake from lit.site.cfg.py.in) sets only paths, then loads this file.
Run directly on the source tree (`lit -v test`), there is no site config: this file falls back to
plain defaults, the running Python and the tools installed beside it (`pip install -e '.[test]'`).

Substitutions: fusec, fusec-opt, FileCheck (the Python `filecheck`), %python, %ptxas, %examples
(the model files in examples/); `not` is lit's builtin.
Features: `cuda` when a GPU answers, `ptxas` when ptxas is found, `non-root-user` unless root runs
the tests, `browser` when a Chromium or Chrome is found ($FUSEC_BROWSER, tools/install-browser's, or
on PATH; %browser: it, headless).
"""

import os
import re
import shutil
import subprocess
import sys

import lit.formats

config.name = "fusec"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "lit.site.cfg.py.in", "lit.local.cfg"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))

# Paths from the site config, or defaults when lit runs on the source tree.
config.fusec_src_root = getattr(config, "fusec_src_root", None) or os.path.dirname(config.test_source_root)
config.python_executable = getattr(config, "python_executable", None) or sys.executable
# Test outputs (%t) go to the build tree, CMake's or, run on the source tree, build/ in the checkout
# (git-ignored), so that the source tree holds no Output/ folders.
fusec_obj_root = getattr(config, "fusec_obj_root", None) or os.path.join(config.fusec_src_root, "build")
config.test_exec_root = os.path.join(fusec_obj_root, "test")

# The environment tests see: lit starts from an empty one.
for var in ("PATH", "HOME", "CUDA_HOME", "CUDA_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
            "LD_LIBRARY_PATH", "TMPDIR", "PYENV_ROOT", "PYENV_VERSION", "XDG_CACHE_HOME", "TORCH_HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]


# Tests see no user's tuning cache (`fusec tune` writes ~/.cache/fusec/tune.json): only the table
# shipped with fusec, so a schedule a developer tuned cannot change what a test prints.
config.environment["FUSEC_TUNE_CACHE"] = os.path.join(fusec_obj_root, "no-tune-cache.json")


def find_tool(name):
    """The tool installed beside the Python that runs the tests, else the one on PATH."""
    dirs = [getattr(config, "fusec_tools_dir", None), os.path.dirname(config.python_executable)]
    for d in filter(None, dirs):
        path = os.path.join(d, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    path = shutil.which(name, path=config.environment.get("PATH"))
    if path is None:
        lit_config.fatal(f"cannot find '{name}': run `pip install -e '.[test]'` in {config.fusec_src_root}")
    return path


def tool_pattern(name):
    """Matches NAME as a command word only: not inside `fusec-opt`, a path or `@fusec_kernels`."""
    return r"(?<![\w./@-])" + re.escape(name) + r"(?![\w.-])"


# Longest names first: `fusec` must not rewrite the `fusec` in `fusec-opt`.
config.substitutions.append((tool_pattern("fusec-opt"), find_tool("fusec-opt")))
config.substitutions.append((tool_pattern("fusec"), find_tool("fusec")))
config.substitutions.append((tool_pattern("FileCheck"), find_tool("filecheck")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%examples", os.path.join(config.fusec_src_root, "examples")))
config.substitutions.append(("%fusec_src_root", config.fusec_src_root))


def probe():
    """(ptxas path or None, whether torch sees a CUDA GPU), asked of the tests' own Python."""
    code = ("import torch\n"
            "try:\n"
            "    from fusec.backends.cuda_tools import ptxas_path\n"
            "    p = ptxas_path()\n"
            "except Exception:\n"
            "    p = None\n"
            "print(p or '')\n"
            "print(int(torch.cuda.is_available()))\n")
    try:
        out = subprocess.run([config.python_executable, "-c", code], capture_output=True, text=True,
                             timeout=120, env=dict(config.environment)).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as err:
        lit_config.warning(f"could not probe for ptxas and CUDA: {err}")
        return None, False
    if len(out) < 2:
        return None, False
    return (out[0] or None), out[1] == "1"


ptxas, has_cuda = probe()
if ptxas is None:
    ptxas = shutil.which("ptxas", path=config.environment.get("PATH"))
if ptxas and os.path.isfile(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas not found: tests that REQUIRE ptxas are unsupported")
# Root may write into a read-only folder: permission tests mean nothing there (LLVM's lit feature name).
if hasattr(os, "geteuid") and os.geteuid() != 0:
    config.available_features.add("non-root-user")
if has_cuda:
    config.available_features.add("cuda")
else:
    lit_config.note("no CUDA GPU: tests that REQUIRE cuda are unsupported")

# NVIDIA's compute-sanitizer (memcheck over the GPU tests' kernels): on PATH, else beside ptxas or in
# the CUDA toolkit's bin folder.
sanitizer = shutil.which("compute-sanitizer", path=config.environment.get("PATH")) or next(
    (p for p in (os.path.join(os.path.dirname(ptxas or ""), "compute-sanitizer"),
                 "/usr/local/cuda/bin/compute-sanitizer") if os.path.isfile(p)), None)
if sanitizer:
    config.available_features.add("compute-sanitizer")
    config.substitutions.append(("%compute-sanitizer", sanitizer))
else:
    lit_config.note("compute-sanitizer not found: tests that REQUIRE compute-sanitizer are unsupported")

# A headless browser, for the walkthrough page's test (test/Tools/explain-html-browser.test): the
# program $FUSEC_BROWSER names, else the one tools/install-browser put in the user's cache
# ($XDG_CACHE_HOME/fusec/browser, else ~/.cache/fusec/browser), else a Chromium or Chrome on PATH.
# None (CI): the feature is off and the test is unsupported.
def find_browser():
    if os.environ.get("FUSEC_BROWSER"):
        path = shutil.which(os.environ["FUSEC_BROWSER"])
        if path:
            return path
        lit_config.warning(f"FUSEC_BROWSER={os.environ['FUSEC_BROWSER']} is not a program: ignored")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    installed = os.path.join(cache, "fusec", "browser", "headless-shell")
    if os.path.isfile(installed) and os.access(installed, os.X_OK):
        return installed
    return next(filter(None, (shutil.which(name, path=config.environment.get("PATH")) for name in
                              ("chromium", "chromium-browser", "chromium-headless-shell", "chrome-headless-shell",
                               "google-chrome", "google-chrome-stable", "chrome", "headless_shell"))), None)


browser = find_browser()
if browser:
    config.available_features.add("browser")
    # --no-sandbox: Chrome's sandbox refuses to start as root (CI containers).
    config.substitutions.append(("%browser", f"{browser} --headless --disable-gpu --no-sandbox"))
    lit_config.note(f"browser: {browser}")
else:
    lit_config.note("no browser ($FUSEC_BROWSER, tools/install-browser's, or chromium or chrome on PATH): "
                    "tests that REQUIRE browser are unsupported")
