"""The wheel installs exactly one top-level import package, `interp_harness`: in a venv that
holds only it, `import agents` (another project's name: the OpenAI Agents SDK) finds nothing,
while every part, the entry points and the `harness` command are under the one name."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from interp_harness.harness.sandbox.docker_engine import build_project_wheel, package_dir

pytestmark = pytest.mark.slow


def parts() -> list[str]:
    """The package's parts: its folders with an `__init__.py` (folder name = import name)."""
    return sorted(p.parent.name for p in package_dir().glob("*/__init__.py"))


PROBE = """
import importlib.metadata as md, importlib.util as u, json
out = {"parts": {}, "old": {}}
for p in PARTS:
    out["parts"][p] = u.find_spec("interp_harness." + p) is not None
for name in ("agents", "harness", "function_store", "evaluator", "model_services"):
    out["old"][name] = u.find_spec(name) is not None
eps = md.distribution("interp-harness").entry_points
out["entry_points"] = sorted({e.value.split(":")[0].split(".")[0] for e in eps})
out["harness"] = [e.value for e in eps if e.group == "console_scripts" and e.name == "harness"]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build_project_wheel(out)
    [whl] = out.glob("interp_harness-*.whl")
    return whl


def test_the_wheel_holds_one_top_level_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist() if ".dist-info/" not in n}
        top_level = z.read(next(n for n in z.namelist() if n.endswith("top_level.txt")))
    assert tops == {"interp_harness"}
    assert top_level.decode().split() == ["interp_harness"]
    # each part's folder, with its subpackages
    names = set(zipfile.ZipFile(wheel).namelist())
    for part in parts():
        assert f"interp_harness/{part}/__init__.py" in names, part
    assert "interp_harness/function_store/numeric/benchmark.py" in names
    assert "interp_harness/harness/web/templates/_macros.html" in names  # package data


def test_a_venv_with_only_the_project_has_no_agents_package(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", "--python", python]
    r = subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", str(wheel)], capture_output=True
    )
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    r = subprocess.run([python, "-c", "import agents"], cwd="/", capture_output=True, text=True)
    assert r.returncode == 1 and "No module named 'agents'" in r.stderr, r.stderr
    probe = f"PARTS = {parts()!r}\n" + PROBE
    r = subprocess.run([python, "-c", probe], cwd="/", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert all(got["parts"].values()), got["parts"]
    assert not any(got["old"].values()), got["old"]
    assert got["entry_points"] == ["interp_harness"]
    assert got["harness"] == ["interp_harness.harness.cli:main"]
