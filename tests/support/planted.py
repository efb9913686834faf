"""Planted trees for the architecture checkers' own tests: a folder with the given packages
(each with an empty __init__.py) and files (text dedented), so each check is shown failing."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path


def planted_tree(root: Path, packages: Iterable[str], files: dict[str, str]) -> Path:
    for pkg in packages:
        (root / pkg).mkdir(exist_ok=True)
        (root / pkg / "__init__.py").touch()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root
