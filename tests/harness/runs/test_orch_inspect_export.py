"""`harness export RUN --format inspect` writes a log that Inspect AI's own reader reads back:
one sample per episode with its messages, target calls as tool events, scores and errors."""

from __future__ import annotations

import json
import subprocess

import pytest
from support import run_cli
from support.orch_helpers import ROOT, server_env

inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")


def harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` as `env`, run by this process (support.run_cli)."""
    return run_cli(list(args), env, ROOT)


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_export_round_trips_through_inspect(sqlite_url: str, tmp_path, suffix: str) -> None:  # type: ignore[no-untyped-def]
    env = server_env(sqlite_url)
    r = harness(
        env, "run", "--agent", "orch_agents:ProbeAgent", "-d", "orch-test", "-f", "numeric",
        "--limit", "3", "-o", "n_calls=2", "--no-floor", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    run_id = json.loads(r.stdout)["id"]
    transcript = [json.loads(x) for x in harness(env, "export", run_id).stdout.splitlines()]

    out = tmp_path / f"run{suffix}"
    e = harness(env, "export", run_id, "--format", "inspect", "-o", str(out))
    assert e.returncode == 0, e.stderr
    log = inspect_log.read_eval_log(str(out))

    assert log.status == "success" and log.eval.task_id == run_id
    assert len(log.samples) == len(transcript) == 3
    by_id = {s.id: s for s in log.samples}
    for ep in transcript:
        s = by_id[ep["target_id"]]
        assert [(m.role, m.text) for m in s.messages] == [
            (m["role"], m["content"]) for m in ep["messages"]
        ]
        tools = [ev for ev in s.events if ev.event == "tool"]
        assert [ev.arguments["inputs"] for ev in tools] == [c["inputs"] for c in ep["calls"]]
        assert all(ev.function == "PYTHON" and ev.result for ev in tools)
        scores = dict(s.scores)
        # every metric as a score of its own, and all of them as the Inspect tasks' scorer has
        # them (what `harness import-inspect` reads)
        task_score = scores.pop("interp_harness")
        assert {k: v.value for k, v in scores.items()} == {
            sc["metric"]: sc["value"] for sc in ep["scores"]
        }
        assert task_score.value == {
            sc["metric"]: sc["value"]
            for sc in ep["scores"]
            if sc["status"] == "ok" and sc["value"] is not None
        }
        assert [(r["metric"], r["status"]) for r in task_score.metadata["scores"]] == [
            (sc["metric"], sc["status"]) for sc in ep["scores"]
        ]
        assert task_score.metadata["stats"] == {
            k: ep[k] for k in ("target_calls", "inputs", "rounds")
        }
        assert s.output.completion == ep["final_answer"]
    means = {sc.name: sc.metrics["mean"].value for sc in log.results.scores}
    assert means["calls"] == 2.0


def test_export_carries_errors(sqlite_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = server_env(sqlite_url, HARNESS_SCORE_HOOK="orch_plugin:failing_hook")
    r = harness(
        env, "run", "--agent", "orch_agents:FailingAgent", "-d", "orch-test", "-f", "numeric",
        "--limit", "2", "--no-floor", "--json",
    )  # fmt: skip
    run_id = json.loads(r.stdout)["id"]
    out = tmp_path / "failed.eval"
    assert harness(env, "export", run_id, "--format", "inspect", "-o", str(out)).returncode == 0
    log = inspect_log.read_eval_log(str(out))
    assert log.status == "error" and "every episode ended in error" in log.error.message
    for s in log.samples:
        assert s.error.message == "[agent] provider said: insufficient credits"
        assert s.scores == {}  # an episode that ended in error is not scored at all


def test_export_shows_scorer_errors_as_errors(sqlite_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = server_env(sqlite_url, HARNESS_SCORE_HOOK="orch_plugin:failing_hook")
    r = harness(
        env, "run", "--agent", "orch_agents:ProbeAgent", "-d", "orch-test", "-f", "numeric",
        "--limit", "1", "--no-floor", "--json",
    )  # fmt: skip
    run_id = json.loads(r.stdout)["id"]
    out = tmp_path / "scored.json"
    assert harness(env, "export", run_id, "--format", "inspect", "-o", str(out)).returncode == 0
    (s,) = inspect_log.read_eval_log(str(out)).samples
    score = s.scores["scoring"]
    assert score.value == "error"  # never a number
    (row,) = s.scores["interp_harness"].metadata["scores"]  # the tasks' shape: an error row
    assert (row["status"], row["value"], row["error_category"]) == ("error", None, "infrastructure")
    assert score.explanation == "[infrastructure] RuntimeError: judge endpoint unreachable"
