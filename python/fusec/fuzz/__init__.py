"""Differential fuzzing of fusec against PyTorch eager (`fusec fuzz`).

    generate.py   a hypothesis strategy of random models, each rendered as MODEL.py text
    oracle.py     compile, run and compare one model file; the tolerances and why
    worker.py     the subprocess that runs the oracle, so that a compiler crash is a finding
    runner.py     the command (cmd_fuzz): explore, shrink each distinct failure, write minimal models
"""
