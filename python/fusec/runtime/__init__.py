"""Runtimes that execute a compiled model from its PTX and launch manifest."""
