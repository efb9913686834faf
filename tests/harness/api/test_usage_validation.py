"""Issue 27, item 8: what an agent says it used is checked at the host boundary (non-negative,
bounded integers, a finite cost; else an agent error), and a provider agent's token budget counts
what the provider reported through the orchestrator's forwarder, not the agent's claim.

Real runs: the scheduler, a SQLite store, bwrap agent hosts, and a loopback OpenAI-compatible
endpoint standing in for the paid API."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import LoopbackHTTP, QuietHandler
from support.openai_stub import OpenAIStub
from support.orch_helpers import run_in_process

from interp_harness.harness.agent_host.net import SOCKET_NAME, UsageMeter, open_route
from interp_harness.harness.providers.profiles import ProviderProfile
from interp_harness.harness.store.models import Episode
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="agent hosts need bubblewrap (Debian `bubblewrap`)"
)
TARGET = "find-v1/numeric/f00150"


async def _run(tmp_path: Path, spec: dict[str, Any], **settings: Any) -> tuple[Store, Episode]:
    body = {"dataset": "find-v1", "ids": [TARGET], "floor": False, **spec}
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store, [run] = await run_in_process(url, body, hook=None, timeout=180, **settings)
    [ep] = store.episodes.of_run(run.id)
    return store, ep


@pytest.mark.parametrize(
    ("claim", "subvert", "isolation", "says"),
    [
        ({"prompt_tokens": -1_000_000}, False, "bwrap", "prompt_tokens"),
        ({"completion_tokens": -5, "cost_usd": "-3.5"}, False, "bwrap", "completion_tokens"),
        ({"prompt_tokens": 2**70}, False, "bwrap", "prompt_tokens"),
        ({"cost_usd": "nan"}, False, "bwrap", "cost_usd"),
        ({"cost_usd": "inf"}, False, "bwrap", "cost_usd"),
        # the agent switches its host's check off: the orchestrator's own validation catches it
        ({"prompt_tokens": -1_000_000}, True, "bwrap", "prompt_tokens"),
        ({"prompt_tokens": 2**70}, True, "bwrap", "prompt_tokens"),
        # an in-process agent (isolation none, the CLI's development mode): the episode loop checks
        ({"prompt_tokens": 2**70}, False, "none", "prompt_tokens"),
        ({"prompt_tokens": -1_000_000}, False, "none", "prompt_tokens"),
    ],
)
async def test_invalid_usage_is_an_agent_error(
    tmp_path: Path, claim: dict, subvert: bool, isolation: str, says: str
) -> None:
    store, ep = await _run(
        tmp_path,
        {
            "agent": "boundary_agents:ClaimingAgent",
            "agent_options": {"claim": claim, "subvert": subvert},
            # with negative tokens accepted, this budget never fired and the episode ran on
            "budgets": {"max_tokens": 1000, "max_rounds": 6},
        },
        agent_isolation=isolation,
    )
    assert (ep.status, ep.end_reason, ep.error_category) == ("error", "agent_error", "agent"), (
        ep.status,
        ep.end_reason,
        ep.error,
    )
    assert ep.error and "invalid" in ep.error and says in ep.error
    assert str(2**70) not in ep.error  # the message names the rule, not the input
    # nothing stored of it
    assert [m.role for m in store.episodes.messages(ep.id)] == ["system", "user"]
    assert (ep.prompt_tokens, ep.completion_tokens, ep.cost_usd) == (0, 0, 0.0)


async def test_token_budget_counts_what_the_provider_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent reports 0 tokens every step; the provider reports 1000 + 500. A 2500-token
    budget ends the episode after the second step (3000 tokens), by the provider's count."""
    stub = OpenAIStub(usage={"prompt_tokens": 1000, "completion_tokens": 500})
    profile = {"kind": "openai", "base_url": stub.url + "/v1", "models": ["cheap-model"]}
    monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", json.dumps({"stub": profile}))
    try:
        store, ep = await _run(
            tmp_path,
            {
                "agent": "boundary_agents:UnderclaimingOpenAIAgent",
                "agent_options": {"profile": "stub", "model": "cheap-model", "max_retries": 0},
                "budgets": {"max_tokens": 2500, "max_rounds": 8},
            },
        )
    finally:
        stub.close()
    assert (ep.status, ep.end_reason) == ("budget_exhausted", "tokens"), (ep.status, ep.error)
    assert (ep.rounds, ep.prompt_tokens, ep.completion_tokens) == (2, 2000, 1000)
    assistant = [m for m in store.episodes.messages(ep.id) if m.role == "assistant"]
    assert [(m.prompt_tokens, m.completion_tokens) for m in assistant] == [(1000, 500)] * 2
    assert len(stub.posts()) == 2


class _StreamingEndpoint(LoopbackHTTP):
    """A loopback endpoint that answers every POST with a server-sent event stream (OpenAI chunks
    with a final usage chunk, or Anthropic events with cumulative output tokens)."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        payload = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        self.payload = payload + b"data: [DONE]\n\n"
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for i in range(0, len(outer.payload), 7):  # small pieces: events split anywhere
                    self.wfile.write(outer.payload[i : i + 7])
                    self.wfile.flush()

        self.serve(Handler)


@pytest.mark.parametrize(
    ("kind", "events", "expected"),
    [
        (
            "openai",
            [
                {"choices": [{"delta": {"content": "Hel"}}], "usage": None},
                {"choices": [{"delta": {"content": "lo"}}], "usage": None},
                {"choices": [], "usage": {"prompt_tokens": 700, "completion_tokens": 42}},
            ],
            (700, 42),
        ),
        (
            "anthropic",
            [
                {"type": "message_start", "message": {"usage": {"input_tokens": 300}}},
                {"type": "content_block_delta", "delta": {"text": "Hi"}},
                {"type": "message_delta", "usage": {"output_tokens": 5}},
                {"type": "message_delta", "usage": {"output_tokens": 17}},
            ],
            (300, 17),
        ),
    ],
)
def test_the_forwarder_counts_usage_in_streamed_replies(
    tmp_path: Path, kind: str, events: list[dict[str, Any]], expected: tuple[int, int]
) -> None:
    endpoint = _StreamingEndpoint(events)
    path = "/v1/chat/completions" if kind == "openai" else "/v1/messages"
    base = endpoint.url + "/v1" if kind == "openai" else endpoint.url  # as each SDK expects
    profile = ProviderProfile(name="s", kind=kind, base_url=base)  # type: ignore[arg-type]
    meter = UsageMeter()
    _, relay = open_route(profile, str(tmp_path), "/run/agent", meter)
    try:
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(tmp_path / SOCKET_NAME))) as c:
            r = c.post("http://agent" + path, json={"stream": True})
        asyncio.run(meter.settled())
    finally:
        relay.stop()
        endpoint.close()
    assert r.status_code == 200 and r.content == endpoint.payload  # passed on unchanged
    seen = meter.reading()
    assert (seen.prompt_tokens, seen.completion_tokens, seen.replies) == (*expected, 1)


class _LateMeter(UsageMeter):
    """A meter whose forwarder thread is slow to count: what a loaded machine does to it."""

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        time.sleep(0.5)
        super().add(prompt_tokens, completion_tokens)


async def test_a_step_waits_for_the_usage_of_a_reply_already_read(tmp_path: Path) -> None:
    """The client has the whole reply before the forwarder's thread counts its usage (the CI
    failure: a token budget ran one round over); `settled()` waits for that count."""
    stub = OpenAIStub(usage={"prompt_tokens": 1000, "completion_tokens": 500})
    profile = ProviderProfile(name="s", kind="openai", base_url=stub.url + "/v1")
    meter = _LateMeter()
    _, relay = open_route(profile, str(tmp_path), "/run/agent", meter)
    try:
        transport = httpx.AsyncHTTPTransport(uds=str(tmp_path / SOCKET_NAME))
        async with httpx.AsyncClient(transport=transport) as c:
            r = await c.post(
                "http://agent/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            )
        assert r.status_code == 200, r.text
        assert meter.reading().replies == 0  # read, not yet counted
        await meter.settled()
        seen = meter.reading()
    finally:
        relay.stop()
        stub.close()
    assert (seen.prompt_tokens, seen.completion_tokens, seen.replies) == (1000, 500, 1)
