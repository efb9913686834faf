"""A run of the scripted baseline over SmolLM2 neuron targets through the REST API: the target
service runs in bubblewrap and reaches the intervention service through its one forwarded
endpoint; the final description is scored observationally. Nothing that identifies the neuron
reaches the agent."""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import run_cli
from support.neuron_runs import neuron_api_env, wait_done
from support.orch_helpers import Server

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import make_canary

FLOOR = "neuron-fixed-explanation"  # the family's floor agent, run beside every neuron run
COLOURS = ("red", "blue", "green", "yellow", "black")
EDGE = " \t\n.,;:!?()[]{}\"'“”"  # what a token is stripped of before it is compared with a word
FLOOR_ANSWER = (
    "[DESCRIPTION]: The neuron fires on colour words: " + ", ".join(f'"{w}"' for w in COLOURS) + "."
)


@pytest.fixture(scope="module")
def api(smol_url: str, tmp_path_factory: pytest.TempPathFactory):
    d = tmp_path_factory.mktemp("neur-api")
    env = neuron_api_env(d, smol_url)
    srv = Server(env, d / "api.log").start(timeout=120)
    yield srv
    srv.stop()


# the family's report rows: F1, MCC, the test set's firing share and the two simulation scores
ROWS = {
    "observational_f1",
    "observational_mcc",
    "observational_firing_share",
    "simulation_top_random",
    "simulation_all",
}


def test_scripted_neuron_run_is_scored_and_leaks_nothing(api: Server, tmp_path: Path) -> None:
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
        # the live test set holds the stated share of firing items (corpus tokens enough to
        # reach it), and the vacuous explanation's F1 on it follows: 2·½ / (½ + 1)
        k = f1["details"]["counts"]
        assert abs(k["fired"] / k["n"] - 0.5) <= 1 / k["n"], k
        assert scores["observational_firing_share"]["value"] == k["fired"] / k["n"]
        assert f1["details"]["firing_share_target"] == 0.5
        vacuous = scores["observational_f1_vacuous"]["value"]
        assert vacuous == pytest.approx(2 * k["fired"] / (k["n"] + k["fired"]))
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
    # the family's floor ran beside it on the same targets (a run of its own, linked)
    floor_run = wait_done(c, detail["floor_run_id"])
    assert (floor_run["agent"], floor_run["status"]) == (FLOOR, "completed"), floor_run
    assert floor_run["spec"]["floor_for"] == detail["id"]
    report = c.get(f"/runs/{detail['id']}/report").json()["report"]
    rows = {r["metric"]: r for r in report["rows"] if r["agent"] == "scripted-neuron"}
    assert set(rows) == ROWS
    for m in ("simulation_top_random", "simulation_all"):
        row = rows[m]
        assert row["scored"] == 2 and row["errors"] == {} and row["simulator"] == "lexical", row
        assert row["value"] is not None and row["judge_ceiling"] is not None, row
    assert rows["observational_f1"]["scored"] == 2  # (SmolLM2 neurons: no F1 reference)
    floor_rows = {r["metric"]: r for r in report["rows"] if r["agent"] == FLOOR}
    _floor_rows_match_its_episodes(c, floor_run["id"], {e["target_id"] for e in eps}, floor_rows)
    for m in ("simulation_top_random", "simulation_all"):  # same targets, same reference
        assert floor_rows[m]["judge_ceiling"] == pytest.approx(rows[m]["judge_ceiling"])
    assert not [n for n in report["notes"] if f"no `{FLOOR}` baseline" in n]
    _floor_rows_on_the_run_page_and_in_the_cli(c, api, detail["id"], floor_rows, tmp_path)
    # the episode page's simulation panel: the top-and-random texts, true against simulated
    page = c.get(f"/ui/episodes/{eps[0]['id']}").text
    assert "Simulated vs true activations" in page and "<strong>lexical</strong>" in page
    assert page.count('<table class="simulation"') == 10


def _lexical_by_hand(per_text: list[dict[str, Any]]) -> float:
    """The floor's simulation score on the texts the episode's details list, computed here: the
    lexical simulator predicts 10 on a colour word of the floor's answer, else 0; the score is
    the Pearson correlation over the scored tokens, 0 for a constant prediction."""
    true: list[float] = []
    predicted: list[float] = []
    for text in per_text:
        for token, level in zip(text["tokens"], text["true"], strict=True):
            if level is not None:
                true.append(level)
                predicted.append(10.0 if token.strip(EDGE).lower() in COLOURS else 0.0)
    if len(set(predicted)) == 1:
        return 0.0
    return statistics.correlation(true, predicted)


def _floor_rows_match_its_episodes(
    c: httpx.Client, floor_id: str, targets: set[str], rows: dict[str, Any]
) -> None:
    """Each floor row's value recomputed from the floor's episodes: F1 from the test set's
    counts, the top-and-random simulation score from the texts and true activations stored in
    its details (the floor's predictions worked out here), the all-texts score averaged."""
    floor_eps = [
        c.get(f"/episodes/{e['id']}").json() for e in c.get(f"/runs/{floor_id}/episodes").json()
    ]
    assert {e["target_id"] for e in floor_eps} == targets
    f1s, tops, alls = [], [], []
    for e in floor_eps:
        assert e["status"] == "completed" and e["calls"] == [], e
        assert e["final_answer"] == FLOOR_ANSWER
        scores = {s["metric"]: s for s in e["scores"]}
        k = scores["observational_f1"]["details"]["counts"]
        assert k["claimed"] > 0 and k["fired"] > 0, k  # the carriers of its words are claimed
        f1s.append(2 * k["tp"] / (k["claimed"] + k["fired"]))  # = 2PR / (P + R)
        top = scores["simulation_top_random"]
        assert top["value"] == pytest.approx(_lexical_by_hand(top["details"]["per_text"]))
        tops.append(_lexical_by_hand(top["details"]["per_text"]))
        alls.append(scores["simulation_all"]["value"])
    assert set(rows) == ROWS
    for metric, values in (
        ("observational_f1", f1s),
        ("simulation_top_random", tops),
        ("simulation_all", alls),
    ):
        row = rows[metric]
        assert row["scored"] == 2 and row["errors"] == {}, row
        assert row["value"] == pytest.approx(statistics.fmean(values)), (metric, values, row)
        assert row["mean_target_calls"] == 0 and row["mean_inputs"] == 0, row
    assert rows["simulation_all"]["simulator"] == "lexical"


def _floor_rows_on_the_run_page_and_in_the_cli(
    c: httpx.Client, api: Server, run_id: str, rows: dict[str, Any], tmp_path: Path
) -> None:
    page = c.get(f"/ui/runs/{run_id}").text
    assert 'id="floor"' in page and f"<code>{FLOOR}</code>" in page
    for metric, row in rows.items():
        at = page.index(f'data-agent="{FLOOR}" data-metric="{metric}"')
        cells = page[at : page.index("</tr>", at)]
        assert f'<td class="num" data-value>{row["value"]:.2f}</td>' in cells, cells
    out = run_cli(["report", run_id], {**api.env, "COLUMNS": "200"}, tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == FLOOR)
    block = lines[
        start : next(i for i, line in enumerate(lines) if line.strip() == "scripted-neuron")
    ]
    for row in rows.values():
        [line] = [x for x in block if x.strip().startswith(row["category"])]
        # the label, the simulator when its scores name one, then the score
        rest = line.strip().removeprefix(row["category"]).strip().removeprefix("[lexical]").strip()
        flagged = rest.startswith("†")  # a row whose ceiling is near its baseline: (score)
        assert flagged == row["no_information"], line
        rest = rest.removeprefix("†").strip()
        score = f"{row['value']:.2f}"
        assert rest.split()[0] == (f"({score})" if flagged else score), line


def test_episode_page_titles_calls_by_the_neurons_script(api: Server) -> None:
    """The page titles each call with the command the agent wrote (the prompt's
    ./temp/neuron.py, not FIND's ./temp/function.py), and a neuron's answer, a description
    only, shows no empty Domain or Code rows (issue 40 item 9)."""
    c = httpx.Client(base_url=api.url, timeout=60)
    body = {"agent": "scripted-neuron", "dataset": "neuron", "family": "neurons", "floor": False}
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
    from interp_harness.harness.episode.prompts import task_prompt

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
    body |= {"variant": "smollm2", "limit": 1, "seed": 2, "floor": False}  # the floor: above
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
