"""An agent whose module imports a helper beside it (importable here, not in an agent host) is
refused by `harness run`'s pre-flight, which imports the agent in an agent host started as the
episodes' are, before anything is stored; the message says what a host can import. Past the
pre-flight (`--no-preflight`), the episode's error says "agent could not be created" once
(issue 29 §2). Real `harness run` (CliRunner), real bubblewrap agent hosts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.run_support import cli_env
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

AGENT = "error_agent_imports:HelperAgent"
ARGS = ["run", "-a", AGENT, "-d", "find-v1", "-f", "numeric", "--limit", "1", "--no-floor"]


def test_it_imports_here() -> None:
    """The premise: the orchestrator's process can import the agent and its helper."""
    import error_agent_imports

    assert error_agent_imports.HelperAgent.name == "helper-importing"


def test_preflight_refuses_an_agent_its_host_cannot_import(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    result = CliRunner().invoke(app, [*ARGS, "--json"], env=env, terminal_width=200)
    assert result.exit_code == 2, result.output
    err = " ".join(result.stderr.split())  # rich wraps long lines
    assert "the run cannot work, so it was not stored" in err, err
    assert f"agent {AGENT!r} cannot be loaded in an agent host" in err, err
    assert "No module named 'error_agent_helper'" in err, err
    assert "an agent host can import only the standard library" in err, err
    assert "error_agent_imports.py" in err  # the agent's own module, which the host does get
    assert Store(make_engine(env["DATABASE_URL"])).runs.latest() == []


def test_without_preflight_the_episode_error_says_it_once(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    result = CliRunner().invoke(app, [*ARGS, "--json", "--no-preflight"], env=env)
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    store = Store(make_engine(env["DATABASE_URL"]))
    (ep,) = store.episodes.of_run(summary["id"])
    assert (ep.status, ep.error_category) == ("error", "agent")
    assert ep.error.startswith(
        f"agent could not be created: cannot import module 'error_agent_imports' for agent {AGENT!r}"
    ), ep.error
    assert ep.error.count("could not be created") == 1, ep.error
    assert "No module named 'error_agent_helper'" in ep.error
    assert "an agent host can import only" in ep.error
    tb = store.events.episode_traceback(ep.id, ep.run_id) or ""
    assert "ModuleNotFoundError: No module named 'error_agent_helper'" in tb, tb
    assert "error_agent_imports.py" in tb, tb
