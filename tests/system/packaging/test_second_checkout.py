"""A second checkout on the machine cannot leak modules into this one's tests. Each part is a
plain subpackage of the one regular package `interp_harness`, so the first `interp_harness` on
the path brings all of its parts (before the src layout, an editable install's import hook could
serve two parts from one checkout and the rest from another); and the suite refuses to start
when that first one is not this checkout's src/ (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import ROOT

PARTS = ("harness", "function_store", "agents", "evaluator", "model_services", "sdk")
CANARY = "SECOND-CHECKOUT-CANARY-7f3e"


def plant_checkout(root: Path) -> Path:
    """Another checkout's src/: the package and every part, each raising the canary if imported."""
    src = root / "src"
    for part in ("", *PARTS):
        d = src / "interp_harness" / part
        d.mkdir(parents=True, exist_ok=True)
        (d / "__init__.py").write_text(f"raise ImportError({CANARY!r})\n")
    return src


PROBE = """
import importlib, importlib.util, json, sys
sys.path.append(sys.argv[1])  # the other checkout, after this one (as a later .pth puts it)
for p in {parts!r}:
    importlib.import_module("interp_harness." + p)
print(json.dumps({{n: m.__file__ for n, m in sys.modules.items()
                  if n.split(".")[0] == "interp_harness" and getattr(m, "__file__", None)}}))
"""


def test_every_part_comes_from_one_checkout(tmp_path: Path) -> None:
    other = plant_checkout(tmp_path / "other")
    r = subprocess.run(
        [sys.executable, "-c", PROBE.format(parts=PARTS), str(other)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    files = json.loads(r.stdout)
    assert {f"interp_harness.{p}" for p in PARTS} <= set(files)
    mine = str(ROOT / "src" / "interp_harness") + os.sep
    assert all(f.startswith(mine) for f in files.values()), sorted(files.values())
    assert CANARY not in r.stdout + r.stderr


def test_the_suite_refuses_to_run_another_checkouts_code(tmp_path: Path) -> None:
    other = plant_checkout(tmp_path / "other")
    probe = ROOT / "tests" / "system" / "packaging" / "test_second_checkout.py"
    env = {**os.environ, "PYTHONPATH": str(other)}  # first on the path: it would be imported
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", str(probe)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert f"interp_harness is imported from {other / 'interp_harness'}" in out, out[-3000:]
    assert "pip install -e ." in out
    assert CANARY not in out  # refused before any of its code ran
