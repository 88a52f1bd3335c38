"""`python -m fusec ...` is the `fusec` command (for an environment whose scripts are not on PATH)."""

from fusec.commands.cli import main

if __name__ == "__main__":
    main()
