"""Hostile agents (battery.HOSTILE_AGENTS), each in its own episode on the canary server: what it
found and wrote into its transcript carries no canary, and its episode shows what its table entry
asks (nothing reached, a capped message, sane usage, an end)."""

from __future__ import annotations

import json
import time

import pytest
from battery import EP_TERMINAL, HANG_END_S, HOSTILE_AGENTS, Battery, cli_env
from canary import Canaries, assert_clean


def _wait_episode(battery: Battery, entry: str, pred, timeout: float) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        detail = battery.episode(entry)
        if pred(detail) or time.monotonic() > deadline:
            return detail
        time.sleep(0.5)


def _cancel_with_cli(battery: Battery, run_id: str) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    got = CliRunner().invoke(app, ["runs", "cancel", run_id], env=cli_env(battery.server))
    assert got.exit_code == 0, got.output


@pytest.mark.parametrize("name", list(HOSTILE_AGENTS))
def test_hostile_agent(name: str, battery: Battery, canaries: Canaries) -> None:
    h = HOSTILE_AGENTS[name]
    entry = f"agent:{name}"
    run_id = battery.runs[entry]
    if h.wait:
        assert run_id in battery.done, f"run of {name} did not end (issue 27 item {h.issue_item})"
    if h.cancel:
        _wait_episode(battery, entry, lambda d: d["status"] == "running", 120)
        _cancel_with_cli(battery, run_id)
    if not h.wait:
        _wait_episode(battery, entry, lambda d: d["status"] in EP_TERMINAL, HANG_END_S)
    detail = battery.episode(entry)
    assert_clean(canaries, f"GET /episodes/{detail['id']} of agent {name}", json.dumps(detail))
    if h.check is not None:
        h.check(detail)
