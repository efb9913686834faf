"""The project's wheel for the Docker images is built without touching the checkout: an
`interp_harness.egg-info` left there (setuptools' in-tree build) hides the installed metadata that
Inspect names our tasks by, and every `inspect eval interp_harness/...` then fails."""

from __future__ import annotations

import zipfile
from pathlib import Path

from interp_harness.harness.sandbox.docker_engine import build_project_wheel, project_root


def _tree(root: Path) -> set[str]:
    return {
        str(p.relative_to(root))
        for p in root.rglob("*")
        if "__pycache__" not in p.parts and p.parts[len(root.parts)] != ".git"
    }


def test_the_wheel_builds_from_a_copy_and_leaves_the_checkout_as_it_was(tmp_path: Path) -> None:
    root = project_root()
    before = _tree(root)
    build_project_wheel(tmp_path)
    assert _tree(root) == before
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert (
        "interp_harness/_registry.py" in names
        and "interp_harness/harness/sandbox/docker_engine.py" in names
    )
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "[inspect_ai]" in zipfile.ZipFile(wheel).read(entry_points).decode()
