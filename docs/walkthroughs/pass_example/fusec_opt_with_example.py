"""`fusec-opt`, with the example pass of walkthrough 6 registered beside fusec's own passes.

In fusec itself the pass would be passes/div_to_mul.py, listed in `_PASSES` in passes/__init__.py;
this script registers it at run time instead, so that the walkthrough runs without changing fusec.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import div_to_mul  # noqa: E402
from fusec.commands.opt import main  # noqa: E402
from fusec.passes import REGISTRY, _info  # noqa: E402

REGISTRY[div_to_mul.FLAG] = _info(div_to_mul)
sys.exit(main())
