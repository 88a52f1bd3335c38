"""A model file that calls sys.exit(3) (line 5): fusec must report it, not exit silently."""

import sys

sys.exit(3)
