"""A run of the scripted baseline over SmolLM2 neuron targets through the REST API: the target
service runs in bubblewrap and reaches the intervention service through its one forwarded
endpoint; the final description is scored observationally. Nothing that identifies the neuron
reaches the agent."""

from __future__ import annotations

import re

import httpx
import pytest
from orch_helpers import Server

from function_store.catalog import Catalog
from function_store.models import make_canary
from tests.neurons.conftest import neuron_api_env, wait_done


@pytest.fixture(scope="module")
def api(smol_url: str, tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("neur-api")
    env = neuron_api_env(d, smol_url)
    srv = Server(env, d / "api.log").start(timeout=120)
    yield srv
    srv.stop()


def test_scripted_neuron_run_is_scored_and_leaks_nothing(api: Server) -> None:
    c = httpx.Client(base_url=api.url, timeout=60)
    body = {
        "agent": "scripted-neuron",
        "dataset": "neuron",
        "family": "neurons",
        "variant": "smollm2",
        "limit": 2,
        "seed": 1,
    }
    r = c.post("/runs", json=body)
    assert r.status_code == 201, r.text
    detail = wait_done(c, r.json()["id"])
    assert detail["status"] == "completed", detail
    eps = c.get(f"/runs/{detail['id']}/episodes").json()
    assert len(eps) == 2
    for e in eps:
        full = c.get(f"/episodes/{e['id']}").json()
        assert full["status"] == "completed", full
        tid = e["target_id"]
        layer_index = tid.rsplit("/", 1)[1]
        seen = "\n".join(m["content"] for m in full["messages"] if m["role"] != "assistant")
        # what the agent read: the prompt and the replies
        for secret in (tid, layer_index, make_canary(tid), "smollm2", "mlp_activation"):
            assert secret not in seen
        replies = [m["content"] for m in full["messages"] if m["content"].startswith("Response:")]
        assert len(replies) == 3 and "[max " in replies[0]
        assert full["calls"][0]["outputs"][0]["error"] is None
        scores = {s["metric"]: s for s in full["scores"]}
        f1 = scores["observational_f1"]
        assert f1["status"] == "ok", f1
        assert f1["value"] is not None and 0.0 <= f1["value"] <= 1.0, f1
        assert f1["details"]["reference"] is None  # SmolLM2 neurons have no reference
        assert f1["details"]["counts"]["n"] > 0
        assert full["final_answer"].startswith("[DESCRIPTION]: The neuron fires on")
        # Bills et al.'s simulation score (no simulator URL: lexical) beside its ceiling, the
        # reference `fires on ...` of the neuron's top tokens on other corpus sentences
        for m in ("simulation_top_random", "simulation_all"):
            for name in (m, f"{m}_ceiling"):
                sim = scores[name]
                assert sim["status"] == "ok" and -1.0 <= sim["value"] <= 1.0, sim
                assert sim["details"]["simulator"] == "lexical"
        top = scores["simulation_top_random"]["details"]
        assert top["texts"] == 10 and len(top["per_text"]) == 10 and top["tokens"] > 0
        assert scores["simulation_all"]["details"]["texts"] == 16  # HARNESS_NEURON_EVAL_SENTENCES
    report = c.get(f"/runs/{detail['id']}/report").json()["report"]
    rows = {r["metric"]: r for r in report["rows"] if r["family"] == "neurons"}
    assert set(rows) == {"observational_f1", "simulation_top_random", "simulation_all"}
    for m in ("simulation_top_random", "simulation_all"):
        row = rows[m]
        assert row["scored"] == 2 and row["errors"] == {} and row["simulator"] == "lexical", row
        assert row["value"] is not None and row["judge_ceiling"] is not None, row
    assert rows["observational_f1"]["scored"] == 2  # (SmolLM2 neurons: no F1 reference)
    # the episode page's simulation panel: the top-and-random texts, true against simulated
    page = c.get(f"/ui/episodes/{eps[0]['id']}").text
    assert "Simulated vs true activations" in page and "<strong>lexical</strong>" in page
    assert page.count('<table class="simulation"') == 10


def test_episode_page_titles_calls_by_the_neurons_script(api: Server) -> None:
    """The page titles each call with the command the agent wrote (the prompt's
    ./temp/neuron.py, not FIND's ./temp/function.py), and a neuron's answer, a description
    only, shows no empty Domain or Code rows (issue 40 item 9)."""
    c = httpx.Client(base_url=api.url, timeout=60)
    body = {"agent": "scripted-neuron", "dataset": "neuron", "family": "neurons"}
    r = c.post("/runs", json={**body, "variant": "smollm2", "limit": 1, "seed": 2})
    assert r.status_code == 201, r.text
    detail = wait_done(c, r.json()["id"])
    assert detail["status"] == "completed", detail
    (ep,) = c.get(f"/runs/{detail['id']}/episodes").json()
    page = c.get(f"/ui/episodes/{ep['id']}").text
    titles = re.findall(r"Command \d+: <code>(.*?)</code>", page)
    assert len(titles) == 3 and set(titles) == {"PYTHON(./temp/neuron.py …)"}, titles
    answer = page[page.index('id="answer"') : page.index('id="truth"')]
    assert "<dt>Description</dt>" in answer and "The neuron fires on" in answer
    assert "<dt>Domain</dt>" not in answer and "<dt>Code" not in answer, answer


def test_gpt2xl_targets_carry_references_the_agent_never_sees() -> None:
    from harness.prompts import task_prompt

    targets = Catalog().list(dataset="neuron", variant="gpt2-xl")
    assert len(targets) == 255
    prompts = {task_prompt(t.public.prompt_family, t.exemplars) for t in targets}
    assert len(prompts) == 1  # one prompt for all neurons: nothing in it can identify one
    (prompt,) = prompts
    for t in targets:
        assert t.hidden.description and t.hidden.description not in prompt
        public = t.public_view().model_dump_json()
        assert t.hidden.description not in public and t.hidden.canary not in public


def test_tools_mode_run_through_rest_scores_as_the_text_run(api: Server) -> None:
    """`POST /runs` in protocol mode `tools`: the scripted baseline reads activations through the
    `read_activations` tool and submits through `submit_answer`; the same targets score the same
    as in the text protocol, and the tool results are the text replies."""
    c = httpx.Client(base_url=api.url, timeout=60)
    body = {"agent": "scripted-neuron", "dataset": "neuron", "family": "neurons"}
    body |= {"variant": "smollm2", "limit": 1, "seed": 2}
    runs = {}
    for mode in ("default", "tools"):
        r = c.post("/runs", json=body | {"protocol": {"mode": mode}})
        assert r.status_code == 201, r.text
        assert wait_done(c, r.json()["id"])["status"] == "completed"
        [e] = c.get(f"/runs/{r.json()['id']}/episodes").json()
        runs[mode] = c.get(f"/episodes/{e['id']}").json()
    text, tools = runs["default"], runs["tools"]
    assert text["target_id"] == tools["target_id"]
    replies = [m["content"] for m in text["messages"] if m["role"] == "user"][1:]
    results = [m["content"] for m in tools["messages"] if m["role"] == "tool"]
    assert results == replies and "[max " in results[0]
    calls = [m["tool_calls"] for m in tools["messages"] if m["role"] == "assistant"]
    assert [c[0]["name"] for c in calls] == ["read_activations"] * len(replies) + ["submit_answer"]
    assert tools["final_answer"].strip() == text["final_answer"].strip()  # (tagged the same)
    score = {s["metric"]: (s["status"], s["value"]) for s in text["scores"]}
    assert score == {s["metric"]: (s["status"], s["value"]) for s in tools["scores"]}
    assert score["observational_f1"][0] == "ok"
