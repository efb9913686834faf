"""The same scripted agent scores the same on the same targets in protocol modes `default` and
`tools` (issue: tool-using interpreters, acceptance), through real `harness run`s: the tools
mode's results are the text protocol's replies byte for byte, its answers score identically.
Deterministic targets only (FIND's noisy numeric functions draw their noise on every call)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[3]
DATA = os.environ.get("HARNESS_DATA_DIR", str(ROOT.parent / "shared" / "data"))

# FIND numeric MLP targets (no noise) and string targets (deterministic programs)
CASES = [
    ("scripted-numeric", "find-v1", ["find-v1/numeric/f00000", "find-v1/numeric/f00001"]),
    ("scripted-strings", "find-gen", ["find-gen/strings/s0/f00000", "find-gen/strings/s0/f00001"]),
]


def _run(db: str, agent: str, dataset: str, ids: list[str], mode: str, isolation: str) -> str:
    env = {**os.environ, "DATABASE_URL": db, "HARNESS_DATA_DIR": DATA}
    args = ["harness", "run", "-a", agent, "-d", dataset, "--mode", mode, "--json"]
    args += ["--no-floor", "--agent-isolation", isolation]
    for i in ids:
        args += ["--id", i]
    r = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)["id"]


def _by_target(store: Store, run_id: str) -> dict[str, tuple[object, ...]]:
    out = {}
    for ep in store.episodes.of_run(run_id):
        scores = sorted((s.metric, s.status, s.value) for s in store.scores.of_episodes([ep.id]))
        msgs = store.episodes.messages(ep.id)
        replies = [m.content for m in msgs if m.role in ("user", "tool")][1:]
        calls = [c.inputs for c in store.episodes.target_calls(ep.id)]
        out[ep.target_id] = (ep.status, scores, replies, calls)
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "dataset", "ids"), CASES)
def test_scripted_agent_scores_the_same_in_default_and_tools_mode(
    tmp_path: Path, agent: str, dataset: str, ids: list[str]
) -> None:
    isolation = (
        "bwrap"  # the agents in their agent hosts, as runs are made (in-process: test_tools_mode)
    )
    db = f"sqlite:///{tmp_path / 'h.db'}"
    text_run = _run(db, agent, dataset, ids, "default", isolation)
    tools_run = _run(db, agent, dataset, ids, "tools", isolation)
    store = Store(make_engine(db))
    text, tools = _by_target(store, text_run), _by_target(store, tools_run)
    assert set(text) == set(ids)
    for tid in ids:
        assert text[tid][0] == tools[tid][0] == "completed"
        assert text[tid][1] == tools[tid][1], tid  # every score, value and status
        # (the judge's unit tests are errors here: no judge is configured; equal all the same)
        assert any(status == "ok" for _, status, _ in text[tid][1]), text[tid][1]
        assert text[tid][2] == tools[tid][2], tid  # replies = tool results, byte for byte
        assert text[tid][3] == tools[tid][3], tid  # the same target calls
    # the tools run really used tools: its agent messages carry tool calls, no PYTHON(...) text
    ep = store.episodes.of_run(tools_run)[0]
    agent_msgs = [m for m in store.episodes.messages(ep.id) if m.role == "assistant"]
    assert all(m.tool_calls and "PYTHON(" not in m.content for m in agent_msgs)
    assert store.episodes.tool_calls(ep.id)[-1].name == "submit_answer"
