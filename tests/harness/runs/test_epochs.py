"""Repeated samples (`harness run --epochs N`, POST /runs with `epochs`): one episode per
(epoch, target), stored and exported with its epoch; the report reduces each target's epochs
with the run's reducer (or `--epoch-reducer`) before averaging over targets, n counting targets,
with the per-target variance across epochs. Real `harness run` subprocesses on find-gen under
the evaluator's own scoring; the reductions are recomputed here from the stored episode scores."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path
from statistics import mean, variance

import httpx
import pytest
from support import wait_for
from support.orch_helpers import ROOT, Server, server_env

IDS = ["find-gen/numeric/s0/f00002", "find-gen/numeric/s0/f00005"]  # clean linear: fast targets


def _env(url: str, **extra: str) -> dict[str, str]:
    env = server_env(url, **extra)
    # the evaluator's own scoring (code_success), not orch_plugin's test hook
    for k in ("HARNESS_SCORE_HOOK", "HARNESS_PLUGINS"):
        env.pop(k, None)
    return env


def harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["harness", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def _main_row(report: dict) -> dict:
    (row,) = [
        r
        for r in report["report"]["rows"]
        if r["metric"] == "code_success" and r["agent"] != "interpolation"
    ]
    return row


@pytest.mark.slow
def test_epochs_run_stores_exports_and_reduces(tmp_path: Path) -> None:
    env = _env(f"sqlite:///{tmp_path / 'harness.db'}", COLUMNS="100")
    r = harness(
        env,
        *("run", "--agent", "epoch_agents:EpochFlipAgent", "-d", "find-gen"),
        *("--id", IDS[0], "--id", IDS[1], "--epochs", "3", "--epoch-reducer", "at_least_one"),
        *("--agent-isolation", "none", "--json"),
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["spec"]["epochs"], summary["spec"]["epoch_reducer"]) == (3, "at_least_one")
    assert summary["progress"] == {"total": 6, "done": 6, "by_status": {"completed": 6}}
    assert summary["n_targets"] == 2
    floor = summary["floor"]  # deterministic floor agents run once per target
    assert floor["spec"]["epochs"] == 1 and floor["progress"]["total"] == 2
    run_id = summary["id"]

    # six episodes: idx = epoch * 2 + target position, each exported with its epoch
    out = harness(env, "export", run_id, "--format", "jsonl")
    assert out.returncode == 0, out.stderr
    eps = [json.loads(x) for x in out.stdout.splitlines()]
    assert [(e["idx"], e["epoch"], e["target_id"]) for e in eps] == [
        (i, i // 2, IDS[i % 2]) for i in range(6)
    ]
    by_target: dict[str, list[float]] = defaultdict(list)
    for e in eps:
        (s,) = [s for s in e["scores"] if s["metric"] == "code_success"]
        assert s["status"] == "ok", s
        if "1e6" in e["final_answer"]:  # the agent's wrong answers fail, whatever the target
            assert s["value"] == 0.0
        by_target[e["target_id"]].append(s["value"])
    # every third instance answers right: two of the six episodes
    assert sum("1e6" not in e["final_answer"] for e in eps) == 2
    assert any(len(set(v)) > 1 for v in by_target.values()), by_target  # epochs differ

    expected = {
        "mean": mean(mean(v) for v in by_target.values()),
        "max": mean(max(v) for v in by_target.values()),
        "at_least_one": mean(float(any(x >= 0.5 for x in v)) for v in by_target.values()),
    }
    var = mean(variance(v) for v in by_target.values())
    for reducer in (None, "mean", "max"):
        args = ("report", run_id, "--json") + (("--epoch-reducer", reducer) if reducer else ())
        rep = harness(env, *args)
        assert rep.returncode == 0, rep.stderr
        row = _main_row(json.loads(rep.stdout))
        assert row["value"] == pytest.approx(expected[reducer or "at_least_one"]), reducer
        assert (row["episodes"], row["scored"], row["epochs"]) == (2, 2, 3)
        assert row["epoch_var"] == pytest.approx(var)
    floor_rows = [r for r in json.loads(rep.stdout)["report"]["rows"] if r["epochs"] == 1]
    assert floor_rows and all(r["agent"] == "interpolation" for r in floor_rows)

    text = harness(env, "report", run_id)
    assert text.returncode == 0, text.stderr
    assert max(len(x) for x in text.stdout.splitlines()) <= 100, text.stdout
    assert "ep.var" in text.stdout and "reduced with `at_least_one`" in text.stdout

    shown = harness(env, "runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr
    header = next(x for x in shown.stdout.splitlines() if "target" in x and "status" in x)
    assert header.replace("┃", " ").split()[:4] == ["episode", "target", "epoch", "status"], header
    floor_shown = harness(env, "runs", "show", floor["id"]).stdout
    assert " epoch " not in floor_shown

    # the web run page shows the reduced table with each row's variance and the note
    srv = Server(env, tmp_path / "server.log").start()
    try:
        page = httpx.get(f"{srv.url}/ui/runs/{run_id}", timeout=30)
        params = {"a": run_id, "b": floor["id"]}
        compare = httpx.get(f"{srv.url}/ui/compare", params=params, timeout=30)
    finally:
        srv.stop()
    assert page.status_code == 200, page.text
    assert f"(epoch var {var:.3f})" in page.text and "reduced with `at_least_one`" in page.text
    assert f">{expected['at_least_one']:.2f}<" in page.text  # the row's value cell

    # the compare page: per target, the epochs reduced with the run's reducer beside the floor
    assert compare.status_code == 200, compare.text
    for t, v in by_target.items():
        row = compare.text.split(f'<tr data-target="{t}">')[1].split("</tr>")[0]
        a_cell = row.split('<td class="num">')[1]
        assert f"{float(any(x >= 0.5 for x in v)):.3f} " in a_cell and "(3 epochs)" in a_cell, row

    # Inspect's log: a sample per (target, epoch), epochs counted from 1; the eval's config
    ins = harness(env, "export", run_id, "--format", "inspect", "-o", str(tmp_path / "r.eval"))
    assert ins.returncode == 0, ins.stderr
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(tmp_path / "r.eval"))
    assert sorted((s.id, s.epoch) for s in log.samples or []) == sorted(
        (t, k) for t in IDS for k in (1, 2, 3)
    )
    assert (log.eval.config.epochs, log.eval.config.epochs_reducer) == (3, ["at_least_1"])
    assert log.results is not None
    (score,) = [s for s in log.results.scores if s.name == "code_success"]
    assert score.scored_samples == 2  # targets, each reduced over its epochs
    assert score.metrics["mean"].value == pytest.approx(expected["at_least_one"])


@pytest.mark.slow
def test_one_epoch_reports_exactly_as_a_run_without_the_option(tmp_path: Path) -> None:
    env = _env(f"sqlite:///{tmp_path / 'harness.db'}", COLUMNS="100")
    run = ("run", "--agent", "orch_agents:ProbeAgent", "-d", "find-gen", "--no-floor")
    run += ("--id", IDS[0], "--id", IDS[1], "-o", "n_calls=1", "--json")
    ids = []
    for extra in ((), ("--epochs", "1")):
        r = harness(env, *run, *extra)
        assert r.returncode == 0, r.stderr
        ids.append(json.loads(r.stdout)["id"])
    reports = [harness(env, "report", i) for i in ids]
    assert reports[0].returncode == 0 and reports[0].stdout
    # the same text but for the run's own id, which heads its rows
    assert reports[0].stdout.replace(ids[0], "RUN") == reports[1].stdout.replace(ids[1], "RUN")
    assert ids[0] in reports[0].stdout
    assert "ep.var" not in reports[0].stdout and "epoch" not in reports[0].stdout
    js = [json.loads(harness(env, "report", i, "--json").stdout)["report"] for i in ids]
    for j in js:  # (each row names its run)
        for part in ("rows", "queries"):
            j[part] = [{k: v for k, v in r.items() if k != "run_id"} for r in j[part]]
    assert js[0] == js[1] and js[0]["rows"]

    bad = harness(env, *run, "--epochs", "21")
    assert bad.returncode == 2 and "epochs: Input should be less than or equal to 20" in bad.stderr
    bad = harness(env, "report", ids[0], "--epoch-reducer", "median")
    assert bad.returncode == 2 and "--epoch-reducer must be mean, max or at_least_one" in bad.stderr


def test_api_caller_sets_epochs_within_bounds(tmp_path: Path) -> None:
    env = server_env(f"sqlite:///{tmp_path / 'harness.db'}")  # orch_plugin's orch-test targets
    srv = Server(env, tmp_path / "server.log").start()
    try:
        c = httpx.Client(base_url=srv.url, timeout=30)
        body = {
            "agent": "orch_agents:ProbeAgent",
            "agent_options": {"n_calls": 1},
            "dataset": "orch-test",
            "family": "numeric",
            "limit": 2,
            "floor": False,
        }
        for bad in ({"epochs": 21}, {"epochs": 0}, {"epoch_reducer": "median"}):
            r = c.post("/runs", json=body | bad)
            assert r.status_code == 422, r.text
            assert list(bad)[0] in r.text
        r = c.post("/runs", json=body | {"epochs": 3, "epoch_reducer": "max"})
        assert r.status_code == 201, r.text
        run = r.json()
        assert (run["spec"]["epochs"], run["spec"]["epoch_reducer"]) == (3, "max")
        wait_for(lambda: c.get(f"/runs/{run['id']}").json()["status"] == "completed", 120)
        detail = c.get(f"/runs/{run['id']}").json()
        assert detail["progress"]["total"] == 6 and detail["progress"]["done"] == 6
        eps = c.get(f"/runs/{run['id']}/episodes").json()
        assert sorted((e["epoch"], e["target_id"]) for e in eps) == sorted(
            (k, f"orch-test/numeric/f{i:05d}") for k in range(3) for i in range(2)
        )
        bad = c.get(f"/runs/{run['id']}/report", params={"epoch_reducer": "median"})
        assert bad.status_code == 422
    finally:
        srv.stop()
