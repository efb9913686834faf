"""An agent that raises leaves its traceback on the episode (issue 29 §2): a real `harness run`
(CliRunner, agent in its bubblewrap agent host), then `harness runs show EPISODE`, the episode's
web page (the real app on loopback), and both exports show where the agent raised. The traceback
is agent text: escaped in HTML, and it holds nothing of the operator's environment (the host has
none of it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.run_support import cli_env, serve_app
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

SECRET = "sk-operator-secret-for-the-traceback-test"
AGENT = "error_agents:RaisingAgent"


@pytest.fixture
def raised(tmp_path: Path) -> tuple[dict[str, Any], Store, dict[str, str]]:
    env = cli_env(tmp_path) | {"OPENAI_API_KEY": SECRET}  # the orchestrator's only
    args = ["run", "-a", AGENT, "-d", "find-v1", "-f", "numeric", "--limit", "1", "--no-floor"]
    result = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert result.exit_code == 1, result.output  # every episode ended in error: failed
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    return summary, Store(make_engine(env["DATABASE_URL"])), env


def _check_traceback(tb: str) -> None:
    assert "Traceback (most recent call last)" in tb, tb
    assert "error_agents.py" in tb and "in step" in tb and "in _fail_deep" in tb, tb
    assert "raise ValueError(" in tb, tb  # the agent's own source line
    assert tb.rstrip().splitlines()[-1].startswith("ValueError: boom <b>bold</b>"), tb
    assert "agents/host.py" not in tb  # the host's own frames are left out
    assert SECRET not in tb


def test_traceback_is_stored_and_shown(raised, tmp_path: Path) -> None:
    summary, store, env = raised
    (ep,) = store.episodes.of_run(summary["id"])
    assert (ep.status, ep.error_category) == ("error", "agent")
    assert ep.error.startswith("ValueError: boom <b>bold</b> after 2 messages"), ep.error
    assert SECRET not in ep.error
    tb = store.events.episode_traceback(ep.id, ep.run_id)
    assert tb is not None
    _check_traceback(tb)

    runner = CliRunner()
    shown = runner.invoke(app, ["runs", "show", ep.id], env=env, terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert "traceback" in shown.stdout and "in _fail_deep" in shown.stdout, shown.stdout
    assert "ValueError: boom <b>bold</b>" in shown.stdout  # printed as text, not as markup
    as_json = runner.invoke(app, ["runs", "show", ep.id, "--json"], env=env)
    assert json.loads(as_json.stdout)["error_traceback"] == tb

    jsonl = runner.invoke(app, ["export", summary["id"]], env=env)
    assert jsonl.exit_code == 0, jsonl.output
    (line,) = jsonl.stdout.splitlines()
    assert json.loads(line)["error_traceback"] == tb

    pytest.importorskip("inspect_ai", reason="the inspect export needs inspect-ai (dev extra)")
    out = tmp_path / "log.json"
    r = runner.invoke(
        app, ["export", summary["id"], "--format", "inspect", "-o", str(out)], env=env
    )
    assert r.exit_code == 0, r.output
    (sample,) = json.loads(out.read_text())["samples"]
    assert sample["error"]["traceback"] == tb
    assert sample["error"]["message"].startswith("[agent] ValueError: boom")


def test_episode_page_shows_the_traceback_escaped(raised, monkeypatch) -> None:
    summary, store, env = raised
    (ep,) = store.episodes.of_run(summary["id"])
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with serve_app() as url:
        page = httpx.get(f"{url}/ui/episodes/{ep.id}", timeout=30)
        api = httpx.get(f"{url}/episodes/{ep.id}", timeout=30)
    assert page.status_code == 200, page.text[:2000]
    assert "Traceback" in page.text and "in _fail_deep" in page.text
    assert "ValueError: boom &lt;b&gt;bold&lt;/b&gt;" in page.text  # escaped: agent text
    assert "<b>bold</b>" not in page.text
    assert SECRET not in page.text
    assert api.status_code == 200
    _check_traceback(api.json()["error_traceback"])
