"""Agents through a real sandboxed agent host: the built-in agents' behaviour, errors with their
categories, the protocol kept clean of the agent's prints, and restarts of a killed host."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from support.find_episode import final_parts, find_prompt, run_episode
from support.host_clients import client

from interp_harness.agents import AgentError, Message
from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.agent_host.host import AgentHosts
from interp_harness.harness.target_client import InProcessTargetClient

CONV = [Message(role="system", content="S"), Message(role="user", content="U")]


@pytest.fixture(scope="module")
def hosts():  # type: ignore[no-untyped-def]
    h = AgentHosts()
    yield h
    h.close()


def host_python_pids(bwrap_pid: int) -> list[int]:
    """The agent host's Python processes under one bwrap process."""
    out, todo = [], [bwrap_pid]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").iterdir():
            kids = (task / "children").read_text().split()
            todo += [int(k) for k in kids]
            for k in kids:
                cmd = Path(f"/proc/{k}/cmdline").read_bytes().split(b"\0")
                if b"interp_harness.agents.host" in cmd and not cmd[0].endswith(b"bwrap"):
                    out.append(int(k))
    return out


async def test_scripted_numeric_through_the_host() -> None:
    catalog = Catalog()
    target = next(
        t
        for t in catalog.list(dataset="find-v1", family="numeric", variant="clean")
        if t.hidden.spec["function"]["name"] == "linear"
    )
    m, b = target.hidden.spec["function"]["params"]
    hosts = AgentHosts()
    agent = client(hosts, "scripted-numeric")
    try:
        final, _, calls = await run_episode(
            agent, InProcessTargetClient(catalog), target.id, find_prompt("numeric")
        )
    finally:
        await agent.aclose()
        hosts.close()
    description, _, _ = final_parts(final)
    assert calls and f"{m}" in description and f"{b}" in description


async def test_replay_reads_its_transcript_and_nothing_else(hosts, tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(["first", {"role": "assistant", "content": "second"}]))
    agent = client(hosts, "replay", path=str(p))
    conv = list(CONV)
    got = []
    for _ in range(2):
        reply = await agent.step(conv)
        got.append(reply.content)
        conv = [*conv, Message(role="assistant", content=reply.content)]
    with pytest.raises(AgentError) as e:
        await agent.step(conv)
    await agent.aclose()
    assert got == ["first", "second"]
    assert e.value.category == "agent" and "all were used" in str(e.value)
    # a sibling of the transcript is not visible to the host
    (tmp_path / "secret.json").write_text(json.dumps(["x"]))
    other = client(hosts, "replay", path=str(tmp_path / "secret.json"))
    other.plan.binds = other.plan.binds[:0]
    with pytest.raises(AgentError) as e:
        await other.step(CONV)
    assert "could not be created" in str(e.value) and "not found" in str(e.value)


async def test_errors_keep_their_category(hosts) -> None:
    failing = client(hosts, "orch_agents:FailingAgent")
    conv = [*CONV, Message(role="assistant", content="PYTHON(x 1)"), CONV[1]]
    with pytest.raises(AgentError) as e:
        await failing.step(conv)
    await failing.aclose()
    assert e.value.category == "agent" and "insufficient credits" in str(e.value)

    bad = client(hosts, "replay")  # no transcript: the constructor raises
    with pytest.raises(AgentError) as e:
        await bad.step(CONV)
    assert e.value.category == "agent" and str(e.value).startswith("agent could not be created")


async def test_prints_do_not_reach_the_protocol(hosts) -> None:
    agent = client(hosts, "host_test_agents:PrintingAgent")
    replies = [(await agent.step(CONV[: n + 1])).content for n in range(2)]
    await agent.aclose()
    assert replies == ["seen 1", "seen 2"]


async def test_only_new_messages_are_sent_and_resets_work(hosts) -> None:
    agent = client(hosts, "orch_agents:ProbeAgent", n_calls=10)
    conv = list(CONV)
    for k in range(3):
        reply = await agent.step(conv)
        assert reply.content.startswith(f"Let me test x={k}.")
        conv = [*conv, Message(role="assistant", content=reply.content), CONV[1]]
        assert agent._delta(conv)[0] == len(conv) - 2  # keep all but the two new messages
    # FIND's context reset: back to [system, prompt]; the host must see exactly that
    reset = [conv[0], Message(role="user", content="U")]
    assert (await agent.step(reset)).content.startswith("Let me test x=0.")
    await agent.aclose()


async def test_killed_host_is_replaced_and_the_step_asked_again(hosts, caplog) -> None:
    agent = client(hosts, "host_test_agents:SleepyProbeAgent", delay=1.0)
    await agent.start()
    assert agent.pid is not None
    first = agent.pid
    import asyncio

    task = asyncio.create_task(agent.step(list(CONV)))
    await asyncio.sleep(0.4)  # the host is sleeping inside step()
    pids = host_python_pids(first)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    reply = await task
    assert reply.content.startswith("Probe 0.")
    assert agent.pid != first
    assert "died mid-step" in caplog.text
    await agent.aclose()
