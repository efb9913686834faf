"""`python -m interp_harness ...` is `harness ...`: the harness of the environment that Python
belongs to, with the plugins installed there (a venv layered on another environment's harness
gets no `harness` script of its own; docs/architecture.md, "Register it")."""

from interp_harness.harness.cli import main

main()
