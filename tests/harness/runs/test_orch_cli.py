"""The CLI as a user runs it: `harness run --json`, `harness runs list|show`, `harness export`,
in process (inprocess targets) and with the default bubblewrap-sandboxed target services."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from support import run_cli
from support.orch_helpers import ROOT, server_env


def harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` as `env`, run by this process (support.run_cli)."""
    return run_cli(list(args), env, ROOT)


def test_run_show_export(sqlite_url: str) -> None:
    env = server_env(sqlite_url)
    r = harness(
        env,
        "run",
        "--agent",
        "orch_agents:ProbeAgent",
        "-d",
        "orch-test",
        "-f",
        "numeric",
        "--limit",
        "2",
        "-o",
        "n_calls=2",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["status"] == "completed"
    assert summary["progress"] == {"total": 2, "done": 2, "by_status": {"completed": 2}}
    assert summary["spec"]["agent_options"] == {"n_calls": 2}
    assert summary["usage"]["target_calls"] == 4
    run_id = summary["id"]

    # `harness run` also ran the interpolation floor on the (numeric) targets and waited for it
    floor = summary["floor"]
    assert summary["floor_run_id"] == floor["id"] and floor["spec"]["floor_for"] == run_id
    assert (floor["agent"], floor["status"], floor["n_targets"]) == (
        "interpolation",
        "completed",
        2,
    )

    listed = [json.loads(x) for x in harness(env, "runs", "list", "--json").stdout.splitlines()]
    assert [x["id"] for x in listed] == [floor["id"], run_id]
    shown = json.loads(harness(env, "runs", "show", run_id, "--json").stdout)
    assert shown["metrics"][0] == {"metric": "answered", "n": 2, "n_errors": 0, "mean": 1.0}

    lines = harness(env, "export", run_id, "--format", "jsonl").stdout.splitlines()
    assert len(lines) == 2
    ep = json.loads(lines[0])
    assert ep["target_id"] == "orch-test/numeric/f00000"
    assert ep["messages"][3]["content"] == "Response: Function input - output pairs: (0, 1.0) \n"
    assert [c["inputs"] for c in ep["calls"]] == [["0"], ["1"]]

    bad = harness(
        env, "run", "--agent", "orch_agents:ProbeAgent", "-d", "orch-test", "--max-rounds", "0"
    )
    assert bad.returncode == 2 and "budgets.max_rounds" in bad.stderr
    bad = harness(env, "export", "nope")
    assert bad.returncode == 2 and "no run with id 'nope'" in bad.stderr


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_run_with_sandboxed_target_service(sqlite_url: str) -> None:
    """HARNESS_SANDBOX=bwrap (the default): targets answer from a bubblewrap sandbox."""
    from interp_harness.function_store.catalog import Catalog
    from interp_harness.function_store.runtime import call_target

    target = "find-v1/numeric/f00150"  # a clean (noise-free) released function
    env = server_env(sqlite_url, HARNESS_SANDBOX="bwrap")
    r = harness(
        env,
        "run",
        "--agent",
        "orch_agents:ProbeAgent",
        "-d",
        "find-v1",
        "--id",
        target,
        "-o",
        "n_calls=3",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["status"] == "completed" and summary["usage"]["target_calls"] == 3
    [ep] = [json.loads(x) for x in harness(env, "export", summary["id"]).stdout.splitlines()]
    expected = call_target(Catalog().get(target), ["0", "1", "2"])
    got = [o for c in ep["calls"] for o in c["outputs"]]
    assert got == [o.model_dump() for o in expected]
    assert ep["messages"][3]["content"] == (
        f"Response: Function input - output pairs: (0, {expected[0].output}) \n"
    )
