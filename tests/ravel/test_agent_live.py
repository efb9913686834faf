"""RAVEL localisation targets on SmolLM2-135M through the session's real intervention service:
the runner's commands, the scorer's sanity checks (whole vector: high Cause, low Isolate; one dim:
near nothing), and a scored `harness run` of the scripted baseline. The instance is built once per
session (tests/ravel/conftest.py: a tmp HARNESS_RAVEL_CACHE shared with the subprocesses)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import HARNESS_CLI

from interp_harness.evaluator.ravel.scorer import score_ravel_episode
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.ravel.runner import RavelRunner, parse
from interp_harness.function_store.runtime import RuntimeContext

ROOT = Path(__file__).resolve().parents[2]
COUNTRY = "ravel/smollm2/city/Country"


@pytest.fixture(scope="module")
def env(smol_url: str, ravel_city) -> Iterator[dict[str, str]]:
    # the session's shared server and instance cache (tests/support/shared_services.py, tests/ravel/
    # conftest.py); no other test scores RAVEL on it, so "it keeps no featurizer" below holds
    cache = str(ravel_city.cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_RAVEL_CACHE", cache)
        mp.setenv("HARNESS_INTERVENTION_URL", smol_url)
        yield {"HARNESS_RAVEL_CACHE": cache, "HARNESS_INTERVENTION_URL": smol_url}


def _runner(env: dict[str, str]) -> RavelRunner:
    ctx = RuntimeContext(extra={"backbone_url": env["HARNESS_INTERVENTION_URL"]})
    return RavelRunner(Catalog().get(COUNTRY), ctx)


def test_activations_and_interchange_commands(env):
    r = _runner(env)
    a, b = r.call(["activations", "Berlin", "The city of Rome", "--layer", "8", "--top", "5"])
    assert a.error is None and a.input == "Berlin" and a.output.startswith("layer 8 token ")
    assert len(a.output.split(": ", 1)[1].split()) == 5 and "Rome" in b.output
    [every] = r.call(["activations", "Berlin", "--layer", "8", "--top", "all"])
    assert len(every.output.split(": ", 1)[1].split()) == 576  # SmolLM2's hidden size
    template = "%s is a city in the country of"
    args = ["interchange", template, "Berlin", "Tokyo", "--layer", "3", "--tokens", "2"]
    [whole] = r.call([*args, "--neurons", *map(str, range(576))])
    [one] = r.call([*args, "--neurons", "7"])
    assert whole.error is None and whole.output.startswith("before ' Germany")
    assert "after ' Japan" in whole.output, whole.output  # the whole vector carries the city
    assert one.output.startswith("before ' Germany") and "after ' Germany" in one.output
    [bad] = r.call(["activations", "x", "--layer", "99"])
    assert bad.error_category == "agent" and "0..29" in bad.error
    assert parse(["interchange", template, "A", "B", "--layer", "3"]).neurons == []


@pytest.mark.parametrize("tid", [COUNTRY, "ravel/smollm2/verb/Past Tense"])
def test_scores_whole_vector_and_one_dim(env, tid):
    t = Catalog().get(tid)
    whole = asyncio.run(
        score_ravel_episode(t, "[LAYER]: 8\n[NEURONS]: " + ", ".join(map(str, range(576))))
    )
    s = {x.metric: x for x in whole}
    assert all(x.status == "ok" for x in whole), whole
    assert s["cause"].value >= 0.6 and s["isolate"].value <= 0.4, s
    assert s["cause"].details["split"] == "entity_test" and s["cause"].details["n_cause"] > 0
    one = {x.metric: x for x in asyncio.run(score_ravel_episode(t, "[LAYER]: 8\n[NEURONS]: 5"))}
    assert one["cause"].value <= 0.2 and one["isolate"].value >= 0.8, one
    d = one["disentangle"].value
    assert d == pytest.approx((one["cause"].value + one["isolate"].value) / 2)
    out = asyncio.run(score_ravel_episode(t, "[LAYER]: 40\n[NEURONS]: 5"))
    # the agent's own answer: its score, 0 with the reason (issue 49 item 2), not an excluded
    # `agent` error state
    assert all(x.status == "ok" and x.value == 0.0 for x in out), out
    assert "[LAYER] must be in 0..29" in out[0].details["failure"]


def test_uploaded_featurizers_are_scored_and_removed(env):
    """A full-rank uploaded rotation moves what the whole vector moves; one random direction is
    near nothing; a bad upload is the agent's error; the service keeps none of them."""
    import numpy as np

    from interp_harness.agents.scripted_ravel import rotation_answer
    from interp_harness.model_services.intervention.client import InterventionClient

    t = Catalog().get(COUNTRY)
    rng = np.random.default_rng(0)
    full = np.linalg.qr(rng.normal(size=(576, 576)))[0]  # a random orthogonal 576×576
    s = {x.metric: x for x in asyncio.run(score_ravel_episode(t, rotation_answer(full, 8)))}
    assert all(x.status == "ok" for x in s.values()), s
    assert s["cause"].value >= 0.6 and s["isolate"].value <= 0.4, s
    assert (
        s["cause"].details["featurizer"]
        == "rotation over block_output at the entity's last token (uploaded)"
        and s["cause"].details["dims"] == 576
    )
    one = {x.metric: x for x in asyncio.run(score_ravel_episode(t, rotation_answer(full[:1], 8)))}
    assert one["cause"].value <= 0.2 and one["isolate"].value >= 0.8, one
    bad = asyncio.run(score_ravel_episode(t, rotation_answer(full[:2] * 3, 8)))
    assert all(x.status == "ok" and x.value == 0.0 for x in bad), bad  # the agent's score
    assert "orthonormal" in bad[0].details["failure"]
    with InterventionClient(env["HARNESS_INTERVENTION_URL"]) as c:
        assert [f.id for f in c.featurizers() if f.id.startswith("ravel-agent-")] == []


def test_cli_run_of_the_scripted_baseline_is_scored(env, tmp_path):
    run_env = {
        **os.environ,
        **env,
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}",
        "HARNESS_HOME": str(tmp_path),
    }
    for answer in ("neurons", "featurizer"):
        cmd = [*HARNESS_CLI, "run", "--agent", "scripted-ravel"]
        cmd += ["-d", "ravel", "--id", COUNTRY, "--json", "-o", f"answer={answer}"]
        proc = subprocess.run(
            cmd, cwd=ROOT, env=run_env, capture_output=True, text=True, timeout=900
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        detail = json.loads(proc.stdout)
        assert detail["status"] == "completed", detail
        assert detail["progress"]["by_status"] == {"completed": 1}, detail
        assert detail["usage"]["target_calls"] == 2  # task, then one activations call
        metrics = {m["metric"]: m for m in detail["metrics"]}
        assert set(metrics) == {"cause", "isolate", "disentangle"}, detail
        for m in metrics.values():
            assert m["n"] == 1 and m["n_errors"] == 0 and 0.0 <= m["mean"] <= 1.0, m
        print(answer, {k: m["mean"] for k, m in metrics.items()})


def test_tools_mode_scores_as_the_text_protocol(env, tmp_path):
    """The scripted baseline in protocol mode `tools` (task / activations tools, submit_answer
    with layer and neurons): the same calls, replies and Cause/Isolate/Disentangle as in text."""
    from interp_harness.harness.store import make_engine
    from interp_harness.harness.store.repo import Store

    db = f"sqlite:///{tmp_path / 'h.db'}"
    run_env = {**os.environ, **env, "PYTHONPATH": str(ROOT), "DATABASE_URL": db}
    out = {}
    for mode in ("default", "tools"):
        cmd = [*HARNESS_CLI, "run", "--agent", "scripted-ravel", "--json"]
        cmd += ["-d", "ravel", "--id", COUNTRY, "--mode", mode, "--agent-isolation", "none"]
        proc = subprocess.run(
            cmd, cwd=ROOT, env=run_env, capture_output=True, text=True, timeout=900
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[mode] = json.loads(proc.stdout)["id"]
    store = Store(make_engine(db))
    seen = {}
    for mode, run_id in out.items():
        [ep] = store.episodes.of_run(run_id)
        msgs = store.episodes.messages(ep.id)
        seen[mode] = (
            [m.content for m in msgs if m.role in ("user", "tool")][1:],
            [c.inputs for c in store.episodes.target_calls(ep.id)],
            sorted((s.metric, s.status, s.value) for s in store.scores.of_episodes([ep.id])),
        )
        if mode == "tools":
            names = [c.name for c in store.episodes.tool_calls(ep.id)]
            assert names == ["task", "activations", "submit_answer"], names
    assert seen["default"] == seen["tools"]
    assert [m for m, status, _ in seen["tools"][2] if status == "ok"] == [
        "cause",
        "disentangle",
        "isolate",
    ]


def test_rest_run_in_bwrap_is_scored_and_leaks_nothing(env, tmp_path):
    """Through the real API server: the target service runs in bubblewrap and reaches the
    intervention service through its one forwarded endpoint; the answer is scored in the server."""
    import time

    import httpx
    from support.orch_helpers import Server

    from interp_harness.function_store.ravel.data import load
    from interp_harness.function_store.ravel.targets import INSTANCES

    srv_env = {
        **os.environ,
        **env,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'h.db'}",
        "HARNESS_HOME": str(tmp_path),
        "HARNESS_SANDBOX": "bwrap",
        "HARNESS_SERVICE_CALL_TIMEOUT_S": "300",
        "HARNESS_POLL_INTERVAL_S": "0.1",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    srv = Server(srv_env, tmp_path / "api.log").start(timeout=120)
    try:
        c = httpx.Client(base_url=srv.url, timeout=60)
        r = c.post("/runs", json={"agent": "scripted-ravel", "dataset": "ravel", "ids": [COUNTRY]})
        assert r.status_code == 201, r.text
        deadline = time.monotonic() + 900
        while (detail := c.get(f"/runs/{r.json()['id']}").json())["status"] not in (
            "completed",
            "failed",
            "cancelled",
        ):
            assert time.monotonic() < deadline, "run did not finish"
            time.sleep(1)
        assert detail["status"] == "completed", detail
        [ep] = c.get(f"/runs/{detail['id']}/episodes").json()
        full = c.get(f"/episodes/{ep['id']}").json()
        assert full["status"] == "completed", full
        seen = "\n".join(m["content"] for m in full["messages"] if m["role"] != "assistant")
        cfg = INSTANCES["city"]
        held_out = cfg.candidates["test"]
        d = load("city")
        labels = {
            e: {d.attributes[e][a] for a in cfg.attributes}
            for e in [*held_out, *cfg.candidates["train"]]
        }
        # values only held-out cities have (one a train city shares is in the task reply)
        secret_labels = set().union(*(labels[e] for e in held_out)) - set().union(
            *(labels[e] for e in cfg.candidates["train"])
        )
        assert "South America" in secret_labels  # no train city is there
        for secret in [COUNTRY, full["target_id"], *held_out, *secret_labels]:
            assert secret not in seen, secret
        assert all(o["error"] is None for call in full["calls"] for o in call["outputs"])
        scores = {s["metric"]: s for s in full["scores"]}
        assert set(scores) == {"cause", "isolate", "disentangle"}
        for s in scores.values():
            assert s["status"] == "ok" and 0.0 <= s["value"] <= 1.0, s
            assert s["details"]["split"] == "entity_test" and s["details"]["dims"] == 32
        print({k: s["value"] for k, s in scores.items()})
    finally:
        srv.stop()
