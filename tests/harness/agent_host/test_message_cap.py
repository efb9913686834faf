"""Issue 27, item 5: an agent message longer than HARNESS_AGENT_MAX_MESSAGE_CHARS (default
256 KiB of text) is an *agent* error that says the limit and the size, and is never stored; what
the orchestrator reads from the host's pipe is bounded even when the agent subverts its host."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from support.orch_helpers import run_in_process

from interp_harness.agents import AgentError, Message
from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.agent_host.host import AgentHosts

CONV = [Message(role="system", content="S"), Message(role="user", content="U")]
MB40 = 40 * 2**20


async def _step(hosts: AgentHosts, spec: str, **options: object) -> AgentError:
    cls, _ = resolve_agent(spec)
    agent = hosts.client(cls, dict(options))
    try:
        with pytest.raises(AgentError) as info:
            await agent.step(list(CONV))
    finally:
        await agent.aclose()
    return info.value


async def test_a_40_mb_message_is_an_agent_error_under_the_default_cap() -> None:
    hosts = AgentHosts()
    try:
        e = await _step(hosts, "cap_agents:HugeAgent", chars=MB40)
    finally:
        hosts.close()
    assert e.category == "agent"
    assert f"{MB40:,} characters" in str(e) and "the limit is 262,144 characters" in str(e)
    assert "HARNESS_AGENT_MAX_MESSAGE_CHARS" in str(e) and len(str(e)) < 500


async def test_a_message_just_under_the_cap_passes() -> None:
    hosts = AgentHosts(max_message_chars=4096)
    cls, _ = resolve_agent("cap_agents:HugeAgent")
    agent = hosts.client(cls, {"chars": 4096})
    try:
        reply = await agent.step(list(CONV))
    finally:
        await agent.aclose()
        hosts.close()
    assert reply.content == "x" * 4096


async def test_a_subverted_host_cannot_make_the_orchestrator_buffer_its_message() -> None:
    """The agent turns its host's check off and writes 10 MiB of control characters (each 6 bytes
    as JSON: 60 MiB on the pipe). The orchestrator reads at most its line limit, counts the rest
    without keeping it, and ends the step with an agent error saying both sizes."""
    hosts = AgentHosts(max_message_chars=4096)
    chars = 10 * 2**20
    tracemalloc.start()
    try:
        e = await _step(hosts, "cap_agents:SubvertedHugeAgent", chars=chars)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        hosts.close()
    assert e.category == "agent" and "the limit is 4,096 characters" in str(e)
    assert "bytes of JSON" in str(e)
    size = int(
        str(e).split("agent message is ", 1)[1].split("+", 1)[0].split(" ")[0].replace(",", "")
    )
    assert size >= 6 * chars  # counted, never kept
    assert peak < 8 * 2**20, f"the orchestrator held {peak:,} bytes at its peak"


async def test_the_episode_ends_with_an_agent_error_and_nothing_huge_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orch_plugin  # noqa: F401 - registers the orch-test targets

    monkeypatch.setenv("HARNESS_AGENT_MAX_MESSAGE_CHARS", "100000")  # the operator's setting
    spec = {
        "agent": "cap_agents:HugeAgent",
        "agent_options": {"chars": MB40},
        "dataset": "orch-test",
        "ids": ["orch-test/numeric/f00000"],
        "floor": False,
    }
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store, [run] = await run_in_process(url, spec, hook=None, timeout=120)
    [ep] = store.episodes.of_run(run.id)
    assert (ep.status, ep.end_reason, ep.error_category) == ("error", "agent_error", "agent")
    assert ep.error and f"{MB40:,} characters" in ep.error and "100,000" in ep.error
    assert [m.role for m in store.episodes.messages(ep.id)] == ["system", "user"]
    stored = sum(p.stat().st_size for p in tmp_path.glob("h.db*"))
    assert stored < 2 * 2**20, stored
