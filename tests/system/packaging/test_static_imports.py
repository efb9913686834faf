"""A static tool resolves every import of src/ from the plain editable install, with no path
configuration: mypy, run from an unrelated directory on the installed package (its py.typed
marker), finds every `interp_harness` module the code imports and every name it imports from
one. Before the src layout, two parts were renamed on install by an import hook that static tools
do not run. Third-party typing and our own type errors are not this test's business."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# an import of ours mypy could not follow: a module it cannot find, or a name a module lacks
UNRESOLVED = re.compile(
    r'error: (Cannot find implementation or library stub for module named "interp_harness'
    r'|Module "interp_harness[^"]*" has no attribute )'
)


def mypy(tmp_path: Path, *args: str) -> list[str]:
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "error: " in r.stdout or r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    return [line for line in r.stdout.splitlines() if UNRESOLVED.search(line)]


def test_mypy_resolves_every_import_of_the_package(tmp_path: Path) -> None:
    # every module of the package is checked; what they import from outside it is not followed
    assert mypy(tmp_path, "--follow-imports=skip", "-p", "interp_harness") == []


def test_an_unresolvable_import_is_reported(tmp_path: Path) -> None:
    # the same check fails on the parts' old import names and on a name a module lacks
    planted = (
        "import interp_harness.orchestrator.cli\nfrom interp_harness.agents.base import Nothing\n"
    )
    found = mypy(tmp_path, "--follow-imports=silent", "-c", planted)
    assert any("interp_harness.orchestrator" in line for line in found), found
    assert any('base" has no attribute "Nothing"' in line for line in found), found
