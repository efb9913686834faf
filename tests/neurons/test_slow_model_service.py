"""A neuron episode against a model service slowed on purpose (issue 40): the call's time limit
fits the call (the record's budget per text, on top of HARNESS_SERVICE_CALL_TIMEOUT_S) and leaves
out the time the service says the request waited in its queue, so the episode completes where the
old fixed limit (the base alone) failed its calls. A call that runs past the ceiling fails with a
message naming the setting and its value, and the episode page says what to change.

The slowed service is a test-owned front of the session's SmolLM2 intervention service: each
`/v1/activations` request waits the next of `queues` (reported, as the service's queue would; 0
once they are used up) and `per_text_s` per text (not reported: the model's own time), and is
then forwarded."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from support import serve_in_process
from support.run_support import serve_app
from typer.testing import CliRunner

from interp_harness.agents.scripted_neuron import CHUNK, SENTENCES
from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.call_clock import call_limit
from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

BASE_S = 1.0  # HARNESS_SERVICE_CALL_TIMEOUT_S of these runs: the old limit of every call


def _slowed(upstream: str, delays: dict[str, Any]) -> FastAPI:
    front = FastAPI()
    client = httpx.AsyncClient(base_url=upstream.rstrip("/"), timeout=600)

    @front.api_route("/{path:path}", methods=["GET", "POST", "DELETE"])
    async def forward(path: str, request: Request) -> Response:
        body = await request.body()
        slowed = request.method == "POST" and path.endswith("activations")
        if slowed:
            texts = json.loads(body)["texts"]
            queued = delays["queues"].pop(0) if delays["queues"] else 0.0
            await asyncio.sleep(queued + delays["per_text_s"] * len(texts))
        r = await client.request(
            request.method, f"/{path}", content=body, headers={"content-type": "application/json"}
        )
        content = r.content
        if slowed and r.status_code == 200:
            data = r.json()
            data["queue_s"] = (data.get("queue_s") or 0.0) + queued
            content = json.dumps(data).encode()
        return Response(content, r.status_code, media_type="application/json")

    return front


@pytest.fixture(scope="module")
def slowed(smol_url: str) -> Iterator[tuple[str, dict[str, Any]]]:
    # its own service in front of the shared one: the injected delay is what this file tests
    delays: dict[str, Any] = {"queues": [], "per_text_s": 0.0}
    with serve_in_process(_slowed(smol_url, delays)) as url:
        yield url, delays


def _run(
    tmp_path: Path, url: str, ceiling_s: float = 120
) -> tuple[dict[str, Any], Store, dict[str, str]]:
    env = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}",
        "HARNESS_HOME": str(tmp_path),
        "HARNESS_SANDBOX": "bwrap",
        "HARNESS_PLUGINS": "",
        "HARNESS_SCORE_HOOK": "none",  # the target calls are what is tested
        "HARNESS_INTERVENTION_URL": url,
        "HARNESS_SERVICE_CALL_TIMEOUT_S": str(BASE_S),
        "HARNESS_SERVICE_CALL_CEILING_S": str(ceiling_s),
    }
    args = ["run", "-a", "scripted-neuron", "-d", "neuron", "-f", "neurons", "--variant"]
    args += ["smollm2", "-n", "1", "--no-floor", "--json"]
    result = CliRunner().invoke(app, args, env=env)
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    return summary, Store(make_engine(env["DATABASE_URL"])), env


def test_an_episode_completes_against_a_slowed_service(
    slowed: tuple[str, dict[str, Any]], tmp_path: Path
) -> None:
    url, delays = slowed
    first = SENTENCES[:CHUNK]  # the agent's first call
    limit = call_limit(BASE_S, 120, first, "neurons", benchmark("neurons").call_budget).seconds
    # the first call waits in the queue longer than the base (the old limit) and than its whole
    # budget; every call takes 0.1 s a text of the model's own
    delays.update(queues=[limit + 2.0], per_text_s=0.1)
    summary, store, _ = _run(tmp_path, url)
    assert summary["status"] == "completed", summary
    (ep,) = store.episodes.of_run(summary["id"])
    assert (ep.status, ep.error) == ("completed", None), ep.error
    calls = store.episodes.target_calls(ep.id)
    assert len(calls) >= 2 and calls[0].inputs == first
    for c in calls:
        assert len(c.inputs) == CHUNK
        assert all(o["error"] is None and "[max " in o["output"] for o in c.outputs), c.outputs


def test_a_call_past_the_ceiling_names_the_setting_on_the_episode_page(
    slowed: tuple[str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, delays = slowed
    delays.update(queues=[8.0], per_text_s=0.0)  # queued: not counted, but the ceiling is 3 s
    summary, store, env = _run(tmp_path, url, ceiling_s=3)
    (ep,) = store.episodes.of_run(summary["id"])
    assert (ep.status, ep.error_category) == ("error", "target"), ep.error
    assert "HARNESS_SERVICE_CALL_CEILING_S=3 s" in ep.error, ep.error
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with serve_app() as api:
        page = httpx.get(f"{api}/ui/episodes/{ep.id}", timeout=60)
    assert page.status_code == 200
    assert "HARNESS_SERVICE_CALL_CEILING_S=3 s" in page.text
    assert "the operator raises HARNESS_SERVICE_CALL_CEILING_S" in page.text
