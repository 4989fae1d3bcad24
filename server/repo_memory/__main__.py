"""Run the CLI as `python -m repo_memory`."""

from repo_memory.entry import main

main()
