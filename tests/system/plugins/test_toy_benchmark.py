"""A benchmark family from a package outside the tree (tests/system/plugins/toy_plugin, built as a
wheel and installed, registered only by its entry point) runs through the CLI, the REST API, the
report, the web episode page, the Inspect export and its own CLI subcommand, with no edit to
generic code, under the real sandbox: its runner in a bubblewrap target service, its agent in a
bubblewrap agent host, both importing the plugin from where it is installed; and once with the
Docker backend, its wheel installed into the target image the harness builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from inspect_ai import log as inspect_log
from support import docker_engine_or_skip
from support.orch_helpers import Server

from interp_harness.harness.sandbox.docker import LABEL

AGENT = "toy_benchmark.agent:ToyAgent"
LAB_AGENT = "toy_benchmark.agent:ToyLabAgent"


def _env(db: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        DATABASE_URL=db,
        HARNESS_SANDBOX="bwrap",
        HARNESS_AGENT_ISOLATION="bwrap",
        HARNESS_API_ALLOW_DOTTED_AGENTS="1",
        HARNESS_POLL_INTERVAL_S="0.1",
    )
    return env


def harness(
    script: str, env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """`script ...`: the venv's own `harness` script (the toy_harness fixture)."""
    r = subprocess.run(
        [script, *args],
        env=env,
        cwd="/",  # not the checkout: the plugin and the harness come from the installed env
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0 or not check, f"harness {' '.join(args)}:\n{r.stdout}\n{r.stderr}"
    return r


@pytest.mark.slow
def test_toy_family_through_cli_report_and_export(tmp_path, toy_harness, needs_bwrap) -> None:  # type: ignore[no-untyped-def]
    env = _env(f"sqlite:///{tmp_path / 'h.db'}")
    assert harness(toy_harness, env, "toy", "moods").stdout.split() == [
        "shout",
        "whisper",
        "shout",
        "whisper",
    ]
    listed = harness(toy_harness, env, "targets", "list", "--dataset", "toy").stdout
    assert "toy/shout/0" in listed and "toy/whisper/3" in listed
    # the venv's Python runs its own harness as a module too
    venv_python = str(Path(toy_harness).with_name("python"))
    assert (
        harness(venv_python, env, "-m", "interp_harness", "toy", "moods").stdout.split()[0]
        == "shout"
    )
    # the suite's own `harness`, with the venv active, cannot see the plugin, and says why
    system = harness(
        str(Path(sys.executable).with_name("harness")),
        env | {"VIRTUAL_ENV": str(Path(toy_harness).parents[1])},
        "toy", "moods", check=False,
    )  # fmt: skip
    assert system.returncode != 0 and "No such command 'toy'" in system.stderr
    assert f"{Path(toy_harness).parents[1]}/bin/python -m interp_harness" in system.stderr

    summary = json.loads(
        harness(toy_harness, env, "run", "--agent", AGENT, "-d", "toy", "--json").stdout
    )
    assert summary["status"] == "completed", summary
    assert summary["progress"] == {"total": 4, "done": 4, "by_status": {"completed": 4}}
    metrics = {m["metric"]: m for m in summary["metrics"]}
    assert metrics["toy_mood"]["n"] == 4 and metrics["toy_mood"]["mean"] == 1.0
    assert metrics["toy_mood"]["n_errors"] == 0
    # the answer's code, run in the bubblewrap scoring sandbox, gives the target's outputs
    assert (metrics["toy_code"]["n"], metrics["toy_code"]["mean"]) == (4, 1.0), metrics

    rows = json.loads(harness(toy_harness, env, "report", summary["id"], "--json").stdout)[
        "report"
    ]["rows"]
    assert [(r["category"], r["metric"], r["value"], r["scored"]) for r in rows] == [
        ("toy, mood", "toy_mood", 1.0, 4),
        ("toy, code", "toy_code", 1.0, 4),
    ]

    out = tmp_path / "toy.eval"
    harness(toy_harness, env, "export", summary["id"], "--format", "inspect", "-o", str(out))
    log = inspect_log.read_eval_log(str(out))
    assert log.status == "success" and len(log.samples) == 4
    by_id = {s.id: s for s in log.samples}
    assert by_id["toy/shout/0"].scores["toy_mood"].value == 1.0
    assert by_id["toy/whisper/1"].output.completion.startswith("[DESCRIPTION]: whisper\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "agent"), [("tools", AGENT), ("code", LAB_AGENT), ("code-tools", LAB_AGENT)]
)
def test_toy_family_in_the_tools_and_code_modes(  # type: ignore[no-untyped-def]
    tmp_path, toy_harness, needs_bwrap, mode, agent
) -> None:
    """The record's commands (find_commands, from the SDK) give the tools and the lab's
    `target` module; the lab runs in its bubblewrap sandbox, the agent reads its cell's reply."""
    env = _env(f"sqlite:///{tmp_path / 'h.db'}")
    run = ("run", "--agent", agent, "-d", "toy", "-n", "1", "--mode", mode, "--json")
    summary = json.loads(harness(toy_harness, env, *run).stdout)
    assert summary["status"] == "completed", summary
    assert summary["progress"]["by_status"] == {"completed": 1}, summary
    metrics = {m["metric"]: (m["n"], m["mean"], m["n_errors"]) for m in summary["metrics"]}
    assert metrics["toy_mood"] == (1, 1.0, 0) and metrics["toy_code"] == (1, 1.0, 0), metrics


@pytest.mark.slow
def test_toy_family_through_rest_and_web(tmp_path, toy_python, needs_bwrap) -> None:  # type: ignore[no-untyped-def]
    env = _env(f"sqlite:///{tmp_path / 'h.db'}") | {"HARNESS_API_TOKENS": "toy-token"}
    srv = Server(env, tmp_path / "server.log", python=toy_python).start()
    try:
        c = httpx.Client(base_url=srv.url, timeout=60)
        auth = {"Authorization": "Bearer toy-token"}
        assert c.get("/healthz").json()["sandbox"] == "bwrap"
        r = c.post("/runs", json={"agent": AGENT, "dataset": "toy", "limit": 2}, headers=auth)
        assert r.status_code == 201, r.text
        run_id = r.json()["id"]
        c.get(f"/runs/{run_id}/events")  # returns when the run has ended
        detail = c.get(f"/runs/{run_id}").json()
        assert detail["status"] == "completed", detail
        assert {m["metric"]: m["mean"] for m in detail["metrics"]}["toy_mood"] == 1.0
        [ep, _] = c.get(f"/runs/{run_id}/episodes").json()
        task = c.get(f"/episodes/{ep['id']}").json()["messages"][1]["content"]
        assert 'PYTHON(./temp/function.py "Hello There")' in task  # the record's prompt, filled
        page = c.get(f"/ui/episodes/{ep['id']}").text
        assert 'class="toy-panel"' in page and "calls: 1" in page
        assert "mood: shout" not in page  # the ground truth is not shown to an anonymous viewer
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def docker_engine():  # type: ignore[no-untyped-def]
    return docker_engine_or_skip()


def _target_containers(client, since: float) -> set[str]:  # type: ignore[no-untyped-def]
    """Images of the target containers started on the engine since `since` (epoch seconds)."""
    events = client.events(
        since=int(since), until=int(time.time()) + 1, decode=True,
        filters={"type": "container", "event": "start", "label": LABEL},
    )  # fmt: skip
    return {e["Actor"]["Attributes"]["image"] for e in events}


@pytest.mark.docker
@pytest.mark.slow
def test_toy_family_in_the_docker_target_image(  # type: ignore[no-untyped-def]
    tmp_path, toy_harness, toy_wheel, docker_engine, needs_bwrap
) -> None:
    env = _env(f"sqlite:///{tmp_path / 'h.db'}") | {"HARNESS_SANDBOX": "docker"}
    run = ("run", "--agent", AGENT, "-d", "toy", "--json", "--no-floor")

    # the image built from the harness alone has no toy runner: each episode fails, saying why
    t0 = time.time()
    bare = json.loads(harness(toy_harness, env, *run, check=False).stdout)
    assert bare["progress"]["by_status"] == {"error": 4}, bare
    shown = json.loads(harness(toy_harness, env, "runs", "show", bare["id"], "--json").stdout)
    [group] = shown["errors"]  # one cause, said as it is: the plugin is not in the image
    assert (group["category"], group["where"]) == ("target", "episode"), group
    assert "toy" in group["cause"] and "HARNESS_TARGET_IMAGE_WHEELS" in group["cause"], group
    [image] = _target_containers(docker_engine, t0)

    env["HARNESS_TARGET_IMAGE_WHEELS"] = str(toy_wheel)
    t1 = time.time()
    summary = json.loads(harness(toy_harness, env, *run).stdout)
    assert summary["status"] == "completed", summary
    metrics = {m["metric"]: m for m in summary["metrics"]}
    assert (metrics["toy_mood"]["n"], metrics["toy_mood"]["mean"]) == (4, 1.0)
    # the runner answered from containers of another image: the harness's with the toy wheel
    [with_plugin] = _target_containers(docker_engine, t1)
    assert with_plugin != image and with_plugin.startswith("interp-harness/target:")
    installed = docker_engine.containers.run(
        with_plugin, ["python3", "-c", "import toy_benchmark; print(toy_benchmark.__file__)"],
        remove=True, network_mode="none",
    ).decode()  # fmt: skip
    assert "site-packages/toy_benchmark" in installed or "dist-packages/toy_benchmark" in installed
