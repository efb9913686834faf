"""A provider error names the URL the user configured, not the agent host's internal listener
(issue 29 §2). A real `harness run` of the openai agent (CliRunner; the agent in its bubblewrap
agent host, its requests through the orchestrator's forwarder) against the loopback stand-in
server answering 400: the episode's error and traceback name the stand-in's URL, and no other
loopback port; a key the provider quotes back in its error is cut from both."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.provider_stand_in import provider_server, server  # noqa: F401 - fixtures
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

KEY = "sk-stand-in-profile-key-0123456789"


@pytest.mark.parametrize("how", ["base_url", "profile"])
def test_provider_error_names_the_configured_url(tmp_path: Path, server, monkeypatch, how) -> None:  # noqa: F811
    url = server.url + "/v1"
    message = "no such thing"
    if how == "profile":
        profile = {"kind": "openai", "base_url": url, "api_key_env": "STAND_IN_KEY"}
        monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", json.dumps({"stand-in": profile}))
        monkeypatch.setenv("STAND_IN_KEY", KEY)
        chosen = ["-o", "profile=stand-in"]
        message += f" for key {KEY}"  # a provider that quotes the key it was sent
    else:
        chosen = ["-o", f"base_url={url}"]
    server.script.default = ("status", (400, {"error": {"message": message}}))
    db = f"sqlite:///{tmp_path / 'harness.db'}"
    env = {"DATABASE_URL": db, "HARNESS_SANDBOX": "inprocess", "HARNESS_PLUGINS": ""}
    args = ["run", "-a", "openai", "-d", "find-v1", "-f", "numeric", "--limit", "1", "--no-floor"]
    args += ["--json", *chosen, "-o", "model=m1", "-o", "max_retries=0"]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    store = Store(make_engine(db))
    (ep,) = store.episodes.of_run(summary["id"])
    assert server.script.requests  # the request reached the stand-in (through the forwarder)
    assert f"openai m1 at {url}: " in ep.error, ep.error
    tb = store.events.episode_traceback(ep.id, ep.run_id) or ""
    assert "no such thing" in tb
    port = server.url.rsplit(":", 1)[1]
    for text in (ep.error, tb):
        assert set(re.findall(r"127\.0\.0\.1:(\d+)", text)) == {port}, text
    if how == "profile":  # the forwarder sent the profile's key; what the provider quoted is cut
        assert server.script.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
        for text in (ep.error, tb):
            assert KEY not in text and "for key [the provider profile's key]" in text, text
