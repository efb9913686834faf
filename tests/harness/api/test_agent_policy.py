"""Issue 11, reproduction 2: a run request must not make the server import a module.

Against the real server (`harness serve`): a module on the server's PYTHONPATH writes a marker
file when imported, so "was it imported?" is read from a side effect, not from the server's word.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import HARNESS_CLI
from support.trust_helpers import ROOT

MODULE = '''
import os, pathlib
if os.environ.get("TRUST_MARKER"):  # unset inside the agent host, which imports it too
    pathlib.Path(os.environ["TRUST_MARKER"]).write_text("imported")

from interp_harness.agents.base import Agent, AgentReply


class Foo:  # not an agent
    pass


class Answer(Agent):
    """Answers at once (for the CLI check)."""

    async def step(self, conversation):
        return AgentReply(content="[DESCRIPTION]: f(x) = x")
'''
TARGET = "find-v1/numeric/f00150"


def _module(tmp_path: Path) -> tuple[dict[str, str], Path]:
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "trust_marker_mod.py").write_text(MODULE)
    marker = tmp_path / "imported"
    env = {
        "PYTHONPATH": os.pathsep.join([str(mods), str(ROOT)]),
        "TRUST_MARKER": str(marker),
    }
    return env, marker


@pytest.mark.slow
def test_rest_refuses_dotted_agents_before_importing(start_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env, marker = _module(tmp_path)
    srv = start_server(env)
    body = {"dataset": "find-v1", "ids": [TARGET], "floor": False}
    for agent in ("trust_marker_mod:Foo", "trust_marker_mod:Answer", "antigravity:Foo"):
        r = srv.post_run(body | {"agent": agent})
        assert r.status_code == 400, r.text
        detail = r.json()["detail"]
        assert "dotted paths are not accepted" in detail and "scripted-numeric" in detail
        assert "has no attribute" not in detail  # the reported symptom: it had been imported
    r = srv.post_run(body | {"agent": "trust_marker_mod"})  # not a name the operator offers
    assert r.status_code == 400 and "unknown agent" in r.json()["detail"]
    assert not marker.exists(), "the server imported a module named by a request"
    assert srv.post_run(body | {"agent": "scripted-numeric"}).status_code == 201

    # the operator's switch: the same request now imports the module (so the check above can fail)
    srv2 = start_server(env | {"HARNESS_API_ALLOW_DOTTED_AGENTS": "1"})
    r = srv2.post_run(body | {"agent": "trust_marker_mod:Foo"})
    assert (
        r.status_code == 400
        and "not a subclass of interp_harness.agents.base.Agent" in r.json()["detail"]
    )
    assert marker.read_text() == "imported"


def test_cli_keeps_dotted_paths(tmp_path: Path) -> None:
    env, marker = _module(tmp_path)
    full = {
        **os.environ,
        **env,
        "HARNESS_HOME": str(tmp_path / "home"),
        "HARNESS_SANDBOX": "inprocess",
        "HARNESS_SCORE_HOOK": "none",
        "TMPDIR": str(tmp_path),
    }
    full.pop("DATABASE_URL", None)
    argv = [*HARNESS_CLI, "run", "--agent", "trust_marker_mod:Answer"]
    argv += ["--dataset", "find-v1", "--id", TARGET, "--no-floor", "--max-rounds", "1", "--json"]
    p = subprocess.run(argv, env=full, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert marker.read_text() == "imported"
    assert '"agent": "trust_marker_mod:Answer"' in p.stdout
