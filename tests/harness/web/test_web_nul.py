"""NUL characters (issue 27, item 7): agent text with U+0000 is stored (shown as U+2400, a visible
mark) on PostgreSQL and SQLite alike, the episode is scored, and a NUL in a URL's path or query is
a 400, never a 500. Real PostgreSQL (tests/support/pg_server.py), real SQLite, the real server."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from support import HOSTED
from support.trust_helpers import ROOT, HarnessServer
from support.web_helpers import AUTH, TOKEN

from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

SHOWN = "\u2400"


def test_store_keeps_agent_text_with_nul(db_url: str) -> None:
    """Every text the episode loop stores from an agent or a caller: spec, messages (content,
    model), target calls, the final answer and errors, scores (error, details), events. Text
    columns show a NUL as U+2400; JSON columns keep it."""
    store = Store(make_engine(db_url))
    run = store.runs.create(
        RunSpec(agent="a\x00b", dataset="find-gen", agent_options={"k": "v\x00w"}), ["t\x000"]
    )
    row = {"idx": 0, "target_id": "t\x000", "dataset": "find-gen", "family": "numeric"}
    store.episodes.ensure(run.id, [{**row, "variant": "clean"}])
    (ep,) = store.episodes.of_run(run.id)
    store.episodes.add_messages(ep.id, [{"step": 0, "role": "system", "content": "sys\x00tem"}])
    store.episodes.add_step(
        ep.id,
        {"step": 1, "role": "assistant", "content": "hel\x00lo", "model": "m\x00"},
        {"rounds": 1, "target_calls": 0, "inputs": 0, "prompt_tokens": 0,
         "completion_tokens": 0, "cost_usd": 0.0, "active_s": 0.0},
    )  # fmt: skip
    call = {"step": 1, "idx": 0, "inputs": ["1\x00"], "outputs": [
        {"input": "1\x00", "output": None, "error": "bad\x00input"}]}  # fmt: skip
    with store.transaction() as tx:
        tx.episodes.add_step(
            ep.id, {"step": 2, "role": "user", "content": "re\x00ply"},
            {"rounds": 1, "target_calls": 1, "inputs": 1, "prompt_tokens": 0,
             "completion_tokens": 0, "cost_usd": 0.0, "active_s": 0.0},
            calls=[call],
        )  # fmt: skip
        tx.events.add(run.id, "step", {"note": "ev\x00ent"}, ep.id)
    store.episodes.finish(
        ep.id, run.id, status="error", end_reason="x\x00", error_category="agent",
        error="agent said \x00", final_answer="ans\x00wer",
    )  # fmt: skip
    store.scores.save(ep.id, [{"metric": "nmse", "value": None, "status": "error",
                               "error_category": "sandbox", "error": "e\x00",
                               "details": {"failure": "f\x00"}}])  # fmt: skip
    store.runs.set_status(run.id, "failed", error="run\x00error")

    got = store.runs.get(run.id)
    assert got is not None
    assert got.agent == f"a{SHOWN}b" and got.error == f"run{SHOWN}error"
    # JSON columns keep the NUL itself (serialised as \u0000, which both databases accept)
    assert got.target_ids == ["t\x000"] and got.spec["agent_options"] == {"k": "v\x00w"}
    e = store.episodes.get(ep.id)
    assert e is not None and e.target_id == f"t{SHOWN}0"
    assert (e.final_answer, e.error, e.end_reason) == (
        f"ans{SHOWN}wer",
        f"agent said {SHOWN}",
        f"x{SHOWN}",
    )
    assert [m.content for m in store.episodes.messages(ep.id)] == [
        f"sys{SHOWN}tem",
        f"hel{SHOWN}lo",
        f"re{SHOWN}ply",
    ]
    assert store.episodes.messages(ep.id)[1].model == f"m{SHOWN}"
    (c,) = store.episodes.target_calls(ep.id)
    assert c.inputs == ["1\x00"] and c.outputs[0]["error"] == "bad\x00input"
    (s,) = store.scores.of_episodes([ep.id])
    assert s.error == f"e{SHOWN}" and s.details == {"failure": "f\x00"}
    step = [ev for ev in store.events.of_run(run.id) if ev.kind == "step"]
    assert step[0].data == {"note": "ev\x00ent"}
    # reads with NUL in a parameter find nothing instead of failing
    assert store.runs.get("a\x00") is None and store.episodes.get("\x00") is None
    assert store.runs.latest(status="\x00") == []
    store.engine.dispose()


NUL_URLS = [
    "/runs?status=%00",
    "/runs/%00",
    "/runs/ab%00cd/episodes",
    "/runs/x/episodes?status=%00",
    "/runs/%00/report",
    "/runs/%00/events?stream=false",
    "/episodes/%00",
    "/targets?dataset=%00",
    "/?status=%00",
    "/?cursor=%00%7C%00",
    "/ui/runs/%00",
    "/ui/episodes/%00",
    "/ui/episodes/%00/plot.svg",
    "/ui/compare?a=%00&b=%00",
]


@pytest.mark.slow
def test_server_scores_nul_answers_and_refuses_nul_urls(db_url: str, tmp_path: Path) -> None:
    srv = HarnessServer(
        tmp_path / "home",
        env={
            "HARNESS_API_TOKENS": TOKEN,
            "HARNESS_SCORE_HOOK": "default",
            "HARNESS_API_ALLOW_DOTTED_AGENTS": "1",
            "PYTHONPATH": os.pathsep.join(
                [str(HOSTED), str(ROOT), os.environ.get("PYTHONPATH", "")]
            ),
        },
    )
    srv.env["DATABASE_URL"] = db_url
    srv.start(timeout=90)
    try:
        api = httpx.Client(base_url=srv.url, timeout=60)
        r = api.post(
            "/runs",
            json={"agent": "bounds_agents:NulAgent", "dataset": "find-gen", "family": "numeric",
                  "limit": 1, "seed": 0, "floor": False},
            headers=AUTH,
        )  # fmt: skip
        assert r.status_code == 201, r.text
        run_id = r.json()["id"]
        deadline = time.monotonic() + 240
        while api.get(f"/runs/{run_id}").json()["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, srv.log()[-3000:]
            time.sleep(0.3)
        (ep,) = api.get(f"/runs/{run_id}/episodes").json()
        assert ep["status"] == "completed" and ep["scored"], ep
        detail = api.get(f"/episodes/{ep['id']}").json()
        scores = {s["metric"]: s for s in detail["scores"]}
        assert scores["code_success"]["status"] == "ok", scores
        agent_text = [m["content"] for m in detail["messages"] if m["role"] == "assistant"]
        assert agent_text[0].startswith(f"let me look{SHOWN} PYTHON(")
        assert detail["final_answer"].startswith(f"[DESCRIPTION]: doubles{SHOWN} its input.")
        page = api.get(f"/ui/episodes/{ep['id']}")
        assert page.status_code == 200 and f"doubles{SHOWN} its input" in page.text

        for url in NUL_URLS:
            for headers in ({}, AUTH):
                got = api.get(url, headers=headers)
                assert got.status_code == 400, (url, got.status_code, got.text[:300])
        assert "Traceback" not in srv.log(), srv.log()[-3000:]
    finally:
        srv.stop()
