"""One admission step (issue 48 item 3): `admit(spec) -> RunPlan` checks and plans a run once,
and every path that starts one goes through it. One test per kind of refusal (policy, agent
class, options, key in the options, provider profile, protocol mode, catalog, selection, where
the episodes run, pre-flight), then the entry paths: `harness run`, `POST /runs` and the web
form refuse a bad spec with admission's own text, and no module but admission asks the pieces."""

from __future__ import annotations

import ast
import html
import json
import re
import sqlite3
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from support import serve_in_process
from support.run_support import cli_env, serve_app
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.policy import ApiPolicy, RequestInvalid
from interp_harness.harness.runs.admission import admit
from interp_harness.harness.runs.preflight import PreflightError
from interp_harness.harness.runs.selection import SelectionError
from interp_harness.harness.settings import Settings

NUMERIC = {"dataset": "find-gen", "family": "numeric", "limit": 1}
SRC = Path(__file__).resolve().parents[3] / "src" / "interp_harness" / "harness"


@pytest.fixture(scope="module")
def cats() -> CatalogCache:
    return CatalogCache()


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HARNESS_PROVIDER_PROFILES", raising=False)
    return Settings(score_hook="none", agent_isolation="bwrap", executor="local")


def _spec(**fields: object) -> RunSpec:
    return RunSpec.model_validate({"agent": "scripted-numeric", **NUMERIC, **fields})


def _refused(spec: RunSpec, settings: Settings, cats: CatalogCache, **kw: object) -> str:
    with pytest.raises(SelectionError) as e:
        admit(spec, settings, cats, preflight=False, **kw)  # type: ignore[arg-type]
    return str(e.value)


def test_an_admitted_run_is_planned_once(settings: Settings, cats: CatalogCache) -> None:
    plan = admit(_spec(), settings, cats)
    assert plan.agent_cls.name == "scripted-numeric"  # type: ignore[attr-defined]
    assert [t.family for t in plan.targets] == ["numeric"] and plan.profile is None
    assert [f.agent for f in plan.floors] == ["interpolation"]


def test_policy_refuses_a_field_the_caller_may_not_set(
    settings: Settings, cats: CatalogCache
) -> None:
    api = ApiPolicy()
    with pytest.raises(RequestInvalid, match="floor_for: set by the server"):
        admit(_spec(floor_for="someone-elses-run"), settings, cats, policy=api)
    with pytest.raises(RequestInvalid, match="agent_options.temprature: Extra inputs"):
        admit(_spec(agent_options={"temprature": 1}), settings, cats, policy=api)
    # a dotted agent path is not offered over REST unless the operator allows it
    with pytest.raises(PreflightError, match="dotted paths are not accepted here"):
        admit(_spec(agent="orch_agents:ProbeAgent"), settings, cats, policy=api)


def test_an_unknown_agent_class(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(agent="scripted-numerc"), settings, cats)
    assert "Did you mean 'scripted-numeric'?" in said


def test_an_unknown_operator_option(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(agent="openai", agent_options={"temprature": 1}), settings, cats)
    assert "unknown option 'temprature' for agent 'openai'; did you mean 'temperature'?" in said


def test_a_key_in_the_options(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(agent="openai", agent_options={"api_key": "sk-x"}), settings, cats)
    assert said.startswith("agent option 'api_key' is refused")


def test_an_unknown_provider_profile(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(agent="openai", agent_options={"profile": "nope"}), settings, cats)
    assert said.startswith("unknown provider profile 'nope'")


def test_a_protocol_mode_the_agent_cannot_play(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(agent="scripted-numeric-code"), settings, cats)
    assert "writes Python cells: use protocol mode 'code' or 'code-tools'" in said


def test_an_unknown_dataset(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(dataset="find-gne"), settings, cats)
    assert "unknown dataset 'find-gne'. Did you mean 'find-gen'?" in said


def test_a_selection_that_cannot_work(settings: Settings, cats: CatalogCache) -> None:
    said = _refused(_spec(ids=["find-v1/numeric/f00150"]), settings, cats)
    assert said == "ids not in dataset 'find-gen': find-v1/numeric/f00150"
    said = _refused(_spec(protocol={"method": "exemplars"}), settings, cats)
    assert "needs exemplars" in said


def test_an_agent_that_needs_this_process(settings: Settings, cats: CatalogCache) -> None:
    """`external` meets its MCP client in this process: the local executor, and tool calls."""
    tools = {"agent": "external", "protocol": {"mode": "tools"}}
    ray = settings.model_copy(update={"executor": "ray"})
    said = _refused(_spec(**tools), ray, cats)
    assert "runs in the orchestrator's process" in said and "not 'ray'" in said
    said = _refused(_spec(agent="external"), settings, cats)
    assert "calls tools: use protocol mode 'tools'" in said
    assert admit(_spec(**tools), settings, cats, preflight=False).agent_cls.runs_in_orchestrator


def test_preflight_refuses_what_its_checks_find(settings: Settings, cats: CatalogCache) -> None:
    with pytest.raises(PreflightError) as e:
        admit(_spec(family="strings"), settings, cats)
    assert "agent 'scripted-numeric' plays numeric targets only" in str(e.value)
    assert e.value.request == [] and e.value.checked == e.value.problems
    admit(_spec(family="strings"), settings, cats, preflight=False)  # what --no-preflight skips


def test_preflight_names_every_problem_of_the_request(
    settings: Settings, cats: CatalogCache
) -> None:
    """The agent's and the selection's problems together, in that order, both the request's."""
    with pytest.raises(PreflightError) as e:
        admit(_spec(agent="scripted-numerc", dataset="find-gne"), settings, cats)
    agent, dataset = e.value.problems
    assert "Did you mean 'scripted-numeric'?" in agent and "unknown dataset 'find-gne'" in dataset
    assert e.value.request == e.value.problems and e.value.checked == []


def test_without_preflight_a_refused_agent_reads_no_catalog(settings: Settings) -> None:
    class Unread(CatalogCache):
        def get(self, seed: int):  # type: ignore[no-untyped-def]
            raise AssertionError("the catalog was read for a refused agent")

    with pytest.raises(SelectionError, match="scripted-numerc"):
        admit(_spec(agent="scripted-numerc"), settings, Unread(), preflight=False)


# ---- every path that starts a run goes through admit ---------------------------------------
BAD = {"agent": "scripted-numerc", "dataset": "find-gne", "family": "numeric", "limit": "1"}


def test_cli_rest_and_web_form_refuse_with_admissions_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cats: CatalogCache
) -> None:
    env = cli_env(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    with pytest.raises(PreflightError) as e:
        admit(RunSpec.model_validate(BAD), Settings(), cats)
    said = str(e.value)
    assert len(e.value.problems) == 2
    r = CliRunner().invoke(
        app, ["run", "-a", BAD["agent"], "-d", BAD["dataset"], "-f", "numeric", "-n", "1"],
        env=env, terminal_width=400,
    )  # fmt: skip
    assert r.exit_code == 2, r.stderr
    err = " ".join(r.stderr.split())
    assert all(" ".join(p.split()) in err for p in e.value.problems), err
    with serve_app() as url, httpx.Client(base_url=url, timeout=120) as c:
        rest = c.post("/runs", json=BAD)
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text)
        assert csrf
        page = c.post("/ui/runs", data={"csrf": csrf.group(1), **BAD}).text
    assert rest.status_code == 400 and rest.json()["detail"] == said, rest.text
    alert = re.search(r'<div class="error" role="alert">.*?<ul>(.*?)</ul>', page, re.S)
    assert alert, page[-3000:]
    assert [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", alert.group(1), re.S)] == [said]
    with sqlite3.connect(tmp_path / "harness.db") as db:  # whatever the Store's methods
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


# The pieces admission asks, and where else each may be called (with why).
PIECES = {
    "chosen_agent": {},
    "check_protocol_mode": {},
    "plan_floors": {},
    "preflight": {},
    # Inspect's tasks select their samples: their agent is the model under evaluation, so no
    # harness run is admitted (harness/inspect_tasks/task.py)
    "select_targets": {"inspect_tasks/task.py"},
}
ADMISSION = "runs/admission.py"


def admission_bypasses(files: dict[str, str]) -> list[str]:
    """Calls of an admission piece outside admission (and its allowed places), `RunPlan`s made
    outside it, and runs stored from a plan (`store_plan`) by a function that does not `admit`."""
    found: list[str] = []
    for path, source in sorted(files.items()):
        for fn in ast.walk(ast.parse(source)):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            called = {
                c.func.id if isinstance(c.func, ast.Name) else getattr(c.func, "attr", "")
                for c in ast.walk(fn)
                if isinstance(c, ast.Call)
            }
            for piece, allowed in PIECES.items():
                if piece in called and path != ADMISSION and path not in allowed:
                    found.append(f"{path}:{fn.name} calls {piece}")
            if "RunPlan" in called and path != ADMISSION:
                found.append(f"{path}:{fn.name} makes a RunPlan")
            if "store_plan" in called and "admit" not in called:
                found.append(f"{path}:{fn.name} stores a plan it did not admit")
    return found


def test_no_module_but_admission_asks_the_pieces() -> None:
    files = {str(p.relative_to(SRC)): p.read_text() for p in SRC.rglob("*.py")}
    assert admission_bypasses(files) == []
    assert any("admit" in s and "store_plan" in s for s in files.values())  # the scan reads


def test_the_scan_finds_a_planted_bypass() -> None:
    planted = {
        "api/routers/other.py": (
            "def post(spec, cats, store):\n"
            "    targets = select_targets(spec, cats.get(0))\n"
            "    store_plan(store, RunPlan(spec, object, None, targets))\n"
        )
    }
    assert admission_bypasses(planted) == [
        "api/routers/other.py:post calls select_targets",
        "api/routers/other.py:post makes a RunPlan",
        "api/routers/other.py:post stores a plan it did not admit",
    ]


@pytest.mark.parametrize("mode", ["tools", "code-tools"])
def test_preflight_refuses_tools_against_a_server_that_serves_none(
    settings: Settings,
    cats: CatalogCache,
    backbone_url: str,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    """The harness's backbone serves no tool calls, and its model list says so: an `openai`
    agent in a tools mode is refused before the run (it used to pass, then every episode failed
    on the server's 400), naming the server and the mode; a text mode still passes there."""
    served = httpx.get(f"{backbone_url}/v1/models").json()["data"][0]["id"]
    profile = {"kind": "openai", "base_url": f"{backbone_url}/v1"}
    monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", json.dumps({"loopback": profile}))
    options = {"profile": "loopback", "model": served}
    spec = _spec(agent="openai", agent_options=options, protocol={"mode": mode})
    with pytest.raises(PreflightError) as e:
        admit(spec, settings, cats)
    [said] = [p for p in e.value.problems if "tool" in p]
    assert f"protocol mode {mode!r} sends the benchmark's commands as tools" in said
    assert f"provider profile 'loopback' at {backbone_url}/v1 serves no tool calls" in said
    assert f"for model {served!r}" in said and "supported_parameters has no 'tools'" in said
    assert said not in e.value.request  # what only pre-flight finds
    plain = _spec(agent="openai", agent_options=options)
    assert admit(plain, settings, cats).agent_cls.name == "openai"


def test_a_model_list_that_says_nothing_of_tools_is_not_refused(
    settings: Settings, cats: CatalogCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's and vLLM's model lists say nothing of tools: pre-flight cannot know, and lets
    the run go (a stand-in list on loopback)."""
    app = FastAPI()

    @app.get("/v1/models")
    def models() -> dict[str, object]:
        return {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]}

    with serve_in_process(app) as url:
        profile = {"kind": "openai", "base_url": f"{url}/v1"}
        monkeypatch.setenv("HARNESS_PROVIDER_PROFILES", json.dumps({"loopback": profile}))
        spec = _spec(
            agent="openai",
            agent_options={"profile": "loopback", "model": "m"},
            protocol={"mode": "tools"},
        )
        assert admit(spec, settings, cats).agent_cls.name == "openai"
