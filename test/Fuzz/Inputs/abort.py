"""A model file that kills the process that loads it, as an `LLVM ERROR` in the compiler would."""

import os

os.abort()
