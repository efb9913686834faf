"""The toy benchmark package lives in `site/`, outside the tree, with its entry point (a dist-info
folder): a process with `site/` on its path sees the toy family, as if it were installed. Only the
harness processes the tests start get it (PYTHONPATH), not the pytest process (which puts this
folder, not `site/`, on its path): its registry stays the built-in one for the rest of the suite."""

from pathlib import Path

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
