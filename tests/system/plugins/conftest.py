"""The toy benchmark is a package of its own (`toy_plugin/`, with its pyproject.toml), built as a
wheel and installed into a venv layered on the suite's environment: processes started with that
venv's Python see the toy family through its installed entry point, as a plugin author's users
would; the pytest process, and every other test, keep the built-in registry."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PLUGIN = HERE / "toy_plugin"
ROOT = HERE.parents[2]  # the checkout


def _pip(python: str, *args: str) -> None:
    cmd = [python, "-m", "pip", "-q", "--disable-pip-version-check", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"pip {args[0]} failed:\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="session")
def toy_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy plugin's wheel, built from a copy of its sources (a build writes `build/` and an
    egg-info beside the sources it reads)."""
    tmp = tmp_path_factory.mktemp("toy-plugin")
    src = shutil.copytree(PLUGIN, tmp / "src", ignore=shutil.ignore_patterns("build", "*.egg-info"))
    _pip(sys.executable, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp), str(src))
    [wheel] = tmp.glob("toy_benchmark-*.whl")
    return wheel


@pytest.fixture(scope="session")
def toy_python(toy_wheel: Path) -> str:
    """A Python whose environment holds the suite's packages and the toy plugin's wheel."""
    tmp, wheel = toy_wheel.parent, toy_wheel
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # the suite's environment as a site dir of the venv (its .pth files, the editable finder
    # included, are read), the way a venv made with --system-site-packages sees its base
    parent = sysconfig.get_paths()["purelib"]
    Path(purelib, "_suite_env.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
    _pip(python, "install", "--no-deps", "--no-index", str(wheel))
    # the harness installed into the venv too, as a user's `pip install interp-harness` there
    # does: that is what gives the venv its own `harness` script, whose Python sees the plugin
    # (pip leaves the suite's own install alone: it is outside the venv)
    _pip(python, "install", "--no-deps", "--no-index", "--no-build-isolation", "-e", str(ROOT))
    return python


@pytest.fixture(scope="session")
def toy_harness(toy_python: str) -> str:
    """The venv's `harness` script (its shebang names the venv's Python)."""
    script = Path(toy_python).parent / "harness"
    assert script.read_text().startswith(f"#!{toy_python}"), script.read_text()[:200]
    return str(script)
