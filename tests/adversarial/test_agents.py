"""Hostile agents (battery.HOSTILE_AGENTS), each in its own episode on the canary server: what it
found and wrote into its transcript carries no canary, and its episode shows what its table entry
asks (nothing reached, a capped message, sane usage, an end)."""

from __future__ import annotations

import json

import pytest
from battery import EP_TERMINAL, HANG_END_S, HOSTILE_AGENTS, Battery
from canary import Canaries, assert_clean


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
