"""The device check's wheelhouse (benchmarks/device_wheelhouse.py), without the registry: its size
check refuses a set over the budget, and `install` keeps what the machine has, installs the rest
with pip into a folder of its own, and never takes torch from a wheelhouse."""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from support import ROOT

SCRIPT = ROOT / "benchmarks" / "device_wheelhouse.py"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"


@pytest.fixture(scope="module")
def wh() -> ModuleType:
    spec = importlib.util.spec_from_file_location("device_wheelhouse", SCRIPT)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["device_wheelhouse"] = mod  # dataclasses and the like look their module up
    spec.loader.exec_module(mod)
    return mod


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def test_size_check_refuses_a_set_over_the_budget(tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    house.mkdir()
    (house / "a.whl").write_bytes(b"\0" * (3 * 2**20))
    weights = tmp_path / "circuits"
    weights.mkdir()
    (weights / "w.npz").write_bytes(b"\0" * 2**20)
    over = cli("check", "--dest", str(house), "--carried", str(weights), "--budget-mib", "3.5")
    assert over.returncode == 1, over.stdout
    assert "4.00 MiB carried, over the budget of 3.5 MiB" in over.stdout
    fits = cli("check", "--dest", str(house), "--carried", str(weights), "--budget-mib", "4.5")
    assert fits.returncode == 0, fits.stdout + fits.stderr
    assert "carried: 4.00 MiB of 4.5 MiB" in fits.stdout


def _wheel(folder: Path, name: str, version: str, module_text: str) -> Path:
    """A pure wheel of one module, as a build backend writes it."""
    dist = f"{name}-{version}.dist-info"
    path = folder / f"{name}-{version}-py3-none-any.whl"
    files = {
        f"{name}.py": module_text,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{f},,\n" for f in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as z:
        for f, text in {**files, f"{dist}/RECORD": record}.items():
            z.writestr(f, text)
    return path


def _entry(path: Path, name: str, version: str) -> dict:
    data = path.read_bytes()
    return {
        "name": name,
        "version": version,
        "pythons": [TAG],
        "file": path.name,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def test_install_keeps_the_machines_packages_and_adds_the_missing(
    tmp_path: Path, wh: ModuleType
) -> None:
    house = tmp_path / "wheelhouse"
    house.mkdir()
    new = _wheel(house, "devcheck_probe", "1.0", "VALUE = 41 + 1\n")
    httpx_version = md.version("httpx")
    fake_httpx = _wheel(house, "httpx", "0.0.1", "raise ImportError('the wheelhouse copy')\n")
    fake_torch = _wheel(house, "torch", "0.0.1", "raise ImportError('not the machine torch')\n")
    manifest = {
        "pythons": [TAG],
        "wheels": [
            _entry(new, "devcheck-probe", "1.0"),
            _entry(fake_httpx, "httpx", "0.0.1"),
            _entry(fake_torch, "torch", "0.0.1"),
        ],
        "requires": {"httpx": ["httpx>=0.1"], "numpy": ["numpy>=1"]},
        "machine": ["numpy"],
    }
    (house / "manifest.json").write_text(json.dumps(manifest))
    plan = wh.plan(manifest, TAG)
    assert [w["name"] for w in plan["install"]] == ["devcheck-probe"]
    assert plan["kept"] == [f"httpx {httpx_version}"]
    assert plan["refused"] == ["torch"]  # a wheelhouse never replaces the machine's torch
    assert plan["machine_unsatisfied"] == []
    # a Python the wheelhouse has no wheel for is said, not guessed
    assert wh.plan(manifest, "cp39")["no_wheel"] == ["devcheck-probe (wheels for " + TAG + ")"]

    site, report = tmp_path / "site", tmp_path / "install.json"
    p = cli("install", "--wheelhouse", str(house), "--target", str(site), "--report", str(report))
    assert p.returncode == 0, p.stdout + p.stderr
    got = json.loads(report.read_text())
    assert [w["file"] for w in got["installed"]] == [new.name]
    assert got["how"] == "pip install --no-index --no-deps --target"
    assert got["torch_unchanged"] is True
    assert not (site / "torch.py").exists() and not (site / "httpx.py").exists()
    probe = subprocess.run(
        [sys.executable, "-c", "import devcheck_probe; print(devcheck_probe.VALUE)"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
    )
    assert probe.stdout.strip() == "42", probe.stderr


def test_a_changed_wheel_is_refused(tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    house.mkdir()
    w = _wheel(house, "devcheck_probe", "1.0", "VALUE = 1\n")
    entry = _entry(w, "devcheck-probe", "1.0") | {"sha256": "0" * 64}
    (house / "manifest.json").write_text(json.dumps({"pythons": [TAG], "wheels": [entry]}))
    p = cli("install", "--wheelhouse", str(house), "--target", str(tmp_path / "site"))
    assert p.returncode != 0
    assert "checksum differs from the manifest" in p.stderr
