"""`harness export RUN --format inspect`: the model is the agent that answered (not `agent`), the
log's `stats.model_usage` holds the stored token usage (what `inspect view` shows), and `-o -`
writes the log to standard output (no file named `-`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import HOSTED, run_cli
from support.cli_store import ROOT, harness_env

inspect_log = pytest.importorskip("inspect_ai.log", reason="inspect-ai is in the dev extra")
AGENT = "orch_agents:ProbeAgent"  # tests/harness/runs: 10 prompt + 5 completion tokens a step


def test_inspect_export_names_the_agent_fills_usage_and_writes_stdout(tmp_path: Path) -> None:
    env = harness_env(
        f"sqlite:///{tmp_path / 'harness.db'}",
        HARNESS_SANDBOX="inprocess",
        PYTHONPATH=os.pathsep.join([str(HOSTED), str(ROOT)]),
    )

    def harness(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(list(args), env, tmp_path)

    r = harness(
        "run", "--agent", AGENT, "-d", "find-gen", "-f", "numeric", "--limit", "2",
        "--seed", "0", "--no-floor", "-o", "n_calls=2", "--json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    tokens = (summary["usage"]["prompt_tokens"], summary["usage"]["completion_tokens"])
    assert tokens == (60, 30)  # 2 episodes x 3 steps x (10, 5)

    e = harness("export", summary["id"], "--format", "inspect", "-o", "-")
    assert e.returncode == 0, e.stderr
    assert not (tmp_path / "-").exists() and not list(tmp_path.glob("*.eval"))
    out = tmp_path / "from-stdout.json"
    out.write_text(e.stdout)
    log = inspect_log.read_eval_log(str(out))  # Inspect's own reader takes it

    assert log.eval.model == AGENT
    usage = log.stats.model_usage
    assert list(usage) == [AGENT]
    assert (usage[AGENT].input_tokens, usage[AGENT].output_tokens) == tokens
    assert usage[AGENT].total_tokens == sum(tokens)
    for s in log.samples:
        assert s.output.model == AGENT
        assert {m.model for m in s.messages if m.role == "assistant"} == {AGENT}
