"""Issue 42's acceptance, end to end: `harness run --agent scripted-numeric-code --mode code -d
find-gen -f numeric` on the embedded default (bubblewrap for targets, scoring and the lab) on
SQLite and PostgreSQL, and the same run through `POST /runs`. The code baseline fits the very
samples the text baseline reads, so each target scores the same, with the same target calls and
inputs, in a third of the rounds; the strings baseline likewise."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from interp_harness.agents.protocol import Observation, format_reply, parse_pairs
from interp_harness.agents.registry import get_agent
from interp_harness.function_store.models import CallOutput
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("needs_bwrap")]
BWRAP = {"HARNESS_SANDBOX": "bwrap", "HARNESS_SCORE_HOOK": "default"}


def _episodes(store: Store, run_id: str) -> dict[str, Any]:
    """target id -> (status, rounds, target calls, inputs, {metric: score status})"""
    out = {}
    eps = store.episodes.of_run(run_id)
    scores = store.scores.of_episodes([e.id for e in eps])
    for e in eps:
        mine = {s.metric: s.status for s in scores if s.episode_id == e.id}
        out[e.target_id] = (e.status, e.rounds, e.target_calls, e.inputs, mine)
    return out


def _last_run(store: Store, agent: str) -> str:
    runs = [r for r in store.runs.latest() if r.agent == agent]
    return runs[0].id


def _text_view(store: Store, episode_id: str) -> list[tuple[str, str]]:
    """(input, output) as a text agent reads the episode's stored target calls in their
    replies (FIND's reply line, read back with the protocol's reader)."""
    pairs: list[tuple[str, str]] = []
    for c in store.episodes.target_calls(episode_id):
        outs = [CallOutput.model_validate(o) for o in c.outputs]
        pairs += parse_pairs(format_reply(outs), c.inputs, line_only=True)
    return pairs


def _compare(store: Store, code_agent: str, text_agent: str, rounds: tuple[int, int]) -> None:
    """Per target: both completed and scored alike (each metric's status), in `rounds`, with the same calls
    and inputs; the code agent's answer is the one the text agent gives on the replies of the
    code episode's own target calls (targets are noisy: two runs see different outputs)."""
    code = _episodes(store, _last_run(store, code_agent))
    text = _episodes(store, _last_run(store, text_agent))
    assert code.keys() == text.keys() and code
    for tid, (status, r, calls, inputs, scores) in code.items():
        t_status, t_r, t_calls, t_inputs, t_scores = text[tid]
        assert (status, t_status) == ("completed", "completed"), tid
        assert (r, t_r) == rounds, tid
        assert (calls, inputs) == (t_calls, t_inputs), tid  # counted the same way
        # scored as the text baseline was (the judge's metrics have no judge here: errors both)
        assert scores == t_scores and "ok" in scores.values(), (tid, scores, t_scores)
    agent = get_agent(text_agent)
    for ep in store.episodes.of_run(_last_run(store, code_agent)):
        pairs = _text_view(store, ep.id)
        if text_agent == "scripted-numeric":
            expected = agent.conclude([Observation(x=x, y=y) for x, y in pairs])
        else:
            expected = agent.conclude(pairs)
        assert ep.final_answer == expected, ep.target_id
        [row] = store.lab.cells(ep.id)
        assert row.status == "ok" and row.n_calls == ep.target_calls


@pytest.mark.parametrize("db_url", ["sqlite", "postgresql"], indirect=True)
def test_scripted_numeric_code_through_the_cli(
    cli_in_process: Callable[..., Any], db_url: str
) -> None:
    env = {**BWRAP, "DATABASE_URL": db_url}
    args = ("-d", "find-gen", "-f", "numeric", "-n", "3", "--no-floor")
    p = cli_in_process("run", "--agent", "scripted-numeric-code", "--mode", "code", *args, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli_in_process("run", "--agent", "scripted-numeric", *args, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    store = Store(make_engine(db_url))
    _compare(store, "scripted-numeric-code", "scripted-numeric", (2, 6))


def test_scripted_strings_code_through_the_cli(
    cli_in_process: Callable[..., Any], tmp_path
) -> None:  # type: ignore[no-untyped-def]
    db = f"sqlite:///{tmp_path / 'strings.db'}"
    env = {**BWRAP, "DATABASE_URL": db}
    args = ("-d", "find-gen", "-f", "strings", "-n", "3", "--no-floor")
    p = cli_in_process("run", "--agent", "scripted-strings-code", "--mode", "code", *args, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli_in_process("run", "--agent", "scripted-strings", *args, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    _compare(Store(make_engine(db)), "scripted-strings-code", "scripted-strings", (2, 3))


def test_scripted_numeric_code_through_post_runs(start_server: Callable[..., Any]) -> None:
    server = start_server(BWRAP)
    body = {
        "agent": "scripted-numeric-code",
        "dataset": "find-gen",
        "family": "numeric",
        "limit": 2,
        "protocol": {"mode": "code"},
        "floor": False,
    }
    r = server.post_run(body)
    assert r.status_code == 201, r.text
    run_id = r.json()["id"]
    refused = server.post_run({**body, "protocol": {"mode": "default"}})
    assert refused.status_code == 400 and "protocol mode 'code'" in refused.text
    import httpx

    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        detail = httpx.get(f"{server.url}/runs/{run_id}", timeout=30).json()
        if detail["status"] in ("completed", "failed", "cancelled"):
            break
        time.sleep(1)
    assert detail["status"] == "completed", detail
    eps = httpx.get(f"{server.url}/runs/{run_id}/episodes", timeout=30).json()
    assert [(e["status"], e["rounds"], e["target_calls"]) for e in eps] == [("completed", 2, 5)] * 2
    assert "server error" not in server.log().lower()
