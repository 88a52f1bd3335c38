"""fusec's command-line tools: `fusec` (cli.py, with its subcommands run, check, explain, bench,
tune, cache; `fusec fuzz` is fusec.fuzz.runner) and `fusec-opt` (opt.py). args.py holds what their
argument parsing shares; outputs.py writes their files atomically. The compiler is the rest of
fusec, which imports nothing from here (but the fuzz command, for args.ArgumentParser)."""
