"""The model server shortens libgomp's spin-waits before torch loads it, unless the operator
chose a wait policy (model_services/backbone/omp_spin.py)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

_SHOW = "import os, sys; print(os.environ.get('GOMP_SPINCOUNT'), 'torch' in sys.modules)"


def _py(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def test_the_server_entry_point_sets_it_before_torch_loads() -> None:
    # importing the entry module runs limit_omp_spin() and then imports torch (via the server)
    assert _py("import interp_harness.model_services.backbone.__main__; " + _SHOW) == "1000 True"


def test_the_operators_choice_is_kept() -> None:
    set_here = "from interp_harness.model_services.backbone.omp_spin import limit_omp_spin; print(limit_omp_spin()); "
    assert _py(set_here + _SHOW, GOMP_SPINCOUNT="30000") == "False\n30000 False"
    assert _py(set_here + _SHOW, OMP_WAIT_POLICY="ACTIVE") == "False\nNone False"


def test_too_late_once_torch_is_loaded() -> None:
    late = "import torch; from interp_harness.model_services.backbone.omp_spin import limit_omp_spin; print(limit_omp_spin()); "
    assert _py(late + _SHOW) == "False\nNone True"


def test_the_harness_cli_sets_it_before_any_command_loads_torch() -> None:
    """`harness sae build` (and every command that loads a model) runs in the `harness` CLI's
    process, which sets it before its commands' modules import torch."""
    # set only when torch was not loaded yet (limit_omp_spin), so "1000" says it came first
    show = "import os; print(os.environ.get('GOMP_SPINCOUNT'))"
    assert _py("import interp_harness.harness.cli; " + show) == "1000"
