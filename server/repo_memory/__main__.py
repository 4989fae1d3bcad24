"""Run the CLI as `python -m repo_memory`."""

from repo_memory.cli import main

main()
