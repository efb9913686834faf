"""Hostile agents (battery.HOSTILE_AGENTS), each in its own episode on the canary server: what it
found and wrote into its transcript carries no canary, and its episode shows what its table entry
asks (nothing reached, a capped message, sane usage, an end)."""

from __future__ import annotations

import json

import pytest
from support.battery import EP_TERMINAL, HANG_END_S, HOSTILE_AGENTS, Battery
from support.canary import Canaries, assert_clean
from support.openai_stub import OpenAIStub


@pytest.mark.parametrize("name", list(HOSTILE_AGENTS))
def test_hostile_agent(name: str, battery: Battery, canaries: Canaries) -> None:
    h = HOSTILE_AGENTS[name]
    entry = f"agent:{name}"
    run_id = battery.runs[entry]
    if h.wait:
        assert run_id in battery.done, f"run of {name} did not end (issue 27 item {h.issue_item})"
    else:
        battery.server.wait_episode(run_id, lambda d: d["status"] in EP_TERMINAL, HANG_END_S)
    if h.cancel:  # else the cancel tested nothing about a running step
        assert battery.cancelled_at[name] == "running", battery.cancelled_at
    detail = battery.episode(entry)
    assert_clean(canaries, f"GET /episodes/{detail['id']} of agent {name}", json.dumps(detail))
    if h.check is not None:
        h.check(detail)


def test_the_profiles_key_reaches_only_its_endpoint(
    battery: Battery, canaries: Canaries, adv_provider: OpenAIStub
) -> None:
    """The provider agent above held a placeholder; the orchestrator's forwarder put the
    profile's key on the request it relayed (and only there)."""
    assert battery.run_ids()  # the battery ran
    posts = [r for r in adv_provider.requests if r["method"] == "POST"]
    assert posts, "the provider agent's request never reached the endpoint"
    key = canaries.values["ADV_PROFILE_KEY"]
    assert {r["authorization"] for r in posts} == {f"Bearer {key}"}
