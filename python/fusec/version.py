"""fusec's version: one place, imported by the modules that key caches and tables on it."""

__version__ = "0.1.0"
