"""The issue's reproduction as a regression test: `harness run --agent <cheater>` on a find-gen
target, targets evaluated in the orchestrator's own process (HARNESS_SANDBOX=inprocess, where the
Target objects certainly sit in its memory). Through the agent host the cheater finds nothing;
with `--agent-isolation none` (the control) it reads the hidden truth, so the test can fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import HOSTED

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SECRET = "sk-operator-secret-never-for-local-agents"


def _run(tmp_path: Path, isolation: str) -> tuple[dict, Store]:
    home = tmp_path / "home"
    data = os.environ.get("HARNESS_DATA_DIR", "/work/shared/data")
    probe = [
        str(home / "harness.db"),
        str(home),
        data,
        str(ROOT),
        str(ROOT / "src" / "interp_harness" / "function_store"),
        str(ROOT.parent / "shared"),  # not "/work" itself: a venv under it is bound, read-only
        "/root/.cache/interp-harness",
        os.path.expanduser("~/.cache/interp-harness"),
        "/etc/passwd",
    ]
    env = {
        **os.environ,
        "HARNESS_HOME": str(home),
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_SCORE_HOOK": "none",
        "OPENAI_API_KEY": SECRET,
        "ANTHROPIC_API_KEY": SECRET,
        "PYTHONPATH": os.pathsep.join([str(HOSTED), str(ROOT)]),
    }
    argv = [
        sys.executable, "-m", "interp_harness.harness.cli", "run",
        "--agent", "host_test_agents:CheaterAgent",
        "--dataset", "find-gen", "--family", "numeric", "--limit", "1", "--seed", "0",
        "--no-floor", "--json", "--agent-isolation", isolation,
        "-o", "probe_paths=" + json.dumps(probe),
    ]  # fmt: skip
    proc = subprocess.run(argv, env=env, cwd=str(ROOT), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    detail = json.loads(proc.stdout)
    detail["_stderr"] = proc.stderr
    return detail, Store(make_engine(f"sqlite:///{home / 'harness.db'}"))


def _answer(store: Store, run_id: str) -> tuple[dict, str, str]:
    [ep] = store.episodes.of_run(run_id)
    msgs = store.episodes.messages(ep.id)
    final = ep.final_answer or ""
    return (
        json.loads(final.split("[DESCRIPTION]: ", 1)[1]),
        ep.target_id,
        "".join(m.content for m in msgs),
    )


def _secrets(target_id: str) -> list[str]:
    hidden = Catalog(CatalogOptions(gen_seed=0)).get(target_id).hidden
    assert hidden.canary.startswith("CANARY-")
    return [hidden.canary, json.dumps(hidden.spec)[:60]]


def test_cheater_in_an_agent_host_finds_nothing(tmp_path: Path) -> None:
    detail, store = _run(tmp_path, "bwrap")
    found, target_id, transcript = _answer(store, detail["id"])
    assert found == {
        "objects": [],
        "imports": [],
        "catalog": None,
        "env": {
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        },
        "paths": [],
        "connect": [],
    }
    for secret in _secrets(target_id):
        assert secret not in transcript
    assert SECRET not in transcript
    assert not [e for e in store.events.of_run(detail["id"]) if e.kind == "agent_isolation"]


def test_control_without_isolation_the_cheater_reads_the_answer(tmp_path: Path) -> None:
    detail, store = _run(tmp_path, "none")
    found, target_id, transcript = _answer(store, detail["id"])
    assert any(o.startswith("Target:") for o in found["objects"])
    assert "interp_harness.function_store" in found["imports"] and found["catalog"]
    assert found["env"]["OPENAI_API_KEY"] == SECRET
    canary, _ = _secrets(target_id)
    assert canary in transcript  # the leak the agent host prevents
    # ... and the run says loudly that it was not isolated
    events = [e for e in store.events.of_run(detail["id"]) if e.kind == "agent_isolation"]
    assert events and events[0].data == {"mode": "none", "isolated": False}
    assert "agent isolation is OFF" in " ".join(detail["_stderr"].split())
