"""The run form is built from the registries and checked as `POST /runs` checks a body (issue 40,
item 7), over HTTP against the real `harness serve` (no tokens, dotted agents not allowed): every
registered family, dataset and agent option is offered, a bad option value is refused with the
API's own message and starts nothing, and a custom agent path is neither offered nor accepted
when the operator does not allow dotted agents, its refusal shown escaped."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any, get_args

import httpx
import pytest
from support.trust_helpers import ROOT, HarnessServer

from interp_harness.agents.registry import resolve_agent
from interp_harness.harness.domain.spec import MAX_EPOCHS, ProtocolMode

SPEC = {"agent": "scripted-numeric", "dataset": "find-gen", "family": "numeric", "limit": 1}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    srv = HarnessServer(tmp_path_factory.mktemp("run-form")).start(timeout=90)
    try:
        with httpx.Client(base_url=srv.url, timeout=120) as c:
            yield c
    finally:
        srv.stop()


def _select_values(page: str, select_id: str) -> list[str]:
    m = re.search(rf'<select id="{select_id}"[^>]*>(.*?)</select>', page, re.S)
    assert m, f"no select #{select_id}"
    return [html.unescape(v) for v in re.findall(r'<option value="([^"]*)"', m.group(1))]


def _post_form(c: httpx.Client, **fields: str) -> httpx.Response:
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text)
    assert csrf
    return c.post("/ui/runs", data={"csrf": csrf.group(1), **fields})


def _alerts(page: str) -> list[str]:
    m = re.search(r'<div class="error" role="alert">.*?<ul>(.*?)</ul>', page, re.S)
    assert m, "no refusal shown"
    return [html.unescape(x) for x in re.findall(r"<li>(.*?)</li>", m.group(1), re.S)]


def _api_messages(r: httpx.Response) -> list[str]:
    """POST /runs's 422 errors as the form shows them: the field's path past `body`, then why."""
    assert r.status_code == 422, r.text
    return [f"{'.'.join(map(str, e['loc'][1:]))}: {e['msg']}" for e in r.json()["detail"]]


def _registered_in_a_fresh_interpreter() -> dict[str, list[str]]:
    """The families and datasets a server process registers: read in a new interpreter, as this
    one may hold test-only benchmarks other tests registered (orch_plugin's `orch-test`)."""
    code = (
        "import json; from interp_harness.function_store.benchmark import benchmarks;"
        "from interp_harness.function_store.catalog import dataset_names;"
        "print(json.dumps({'families': [b.family for b in benchmarks()],"
        " 'datasets': dataset_names()}))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.slow
def test_form_offers_every_family_dataset_agent_option_and_mode(client: httpx.Client) -> None:
    page = client.get("/").text
    registered = _registered_in_a_fresh_interpreter()
    families = _select_values(page, "r-family")
    assert families == ["", *registered["families"]]
    assert {"neurons", "ravel", "sae"} <= set(families)  # their datasets were listed, they not
    assert _select_values(page, "r-dataset") == registered["datasets"]
    agents = [a["name"] for a in client.get("/agents").json()]
    assert _select_values(page, "r-agent") == agents
    for name in agents:
        cls, _ = resolve_agent(name)
        for option in cls.Options.model_fields:
            assert f'name="opt.{name}.{option}"' in page, (name, option)
    assert 'name="opt.scripted-numeric.max_inputs_per_call"' in page
    assert _select_values(page, "r-mode") == list(get_args(ProtocolMode))
    assert re.search(rf'id="r-epochs" name="epochs" type="number" min="1" max="{MAX_EPOCHS}"', page)
    assert 'name="agent_path"' not in page  # the operator allows no dotted agents here


@pytest.mark.parametrize(
    ("field", "body"),
    [("0", 0), ("abc", "abc"), ("10001", 10001)],
    ids=["below-minimum", "not-a-number", "above-maximum"],
)
def test_a_bad_option_is_refused_with_the_api_message(
    client: httpx.Client, field: str, body: Any
) -> None:
    before = client.get("/runs").json()
    api = client.post("/runs", json={**SPEC, "agent_options": {"max_inputs_per_call": body}})
    form = _post_form(
        client,
        **{k: str(v) for k, v in SPEC.items()},
        **{"opt.scripted-numeric.max_inputs_per_call": field},
    )
    assert form.status_code == 422, form.text[-2000:]
    assert _alerts(form.text) == _api_messages(api)
    assert _api_messages(api)[0].startswith("agent_options.max_inputs_per_call: ")
    assert client.get("/runs").json() == before  # nothing stored


def test_options_json_that_is_no_object_is_refused_as_the_api_does(client: httpx.Client) -> None:
    api = client.post("/runs", json={**SPEC, "agent_options": [1]})
    form = _post_form(client, **{k: str(v) for k, v in SPEC.items()}, agent_options_json="[1]")
    assert form.status_code == 422
    assert (
        _alerts(form.text)
        == _api_messages(api)
        == ["agent_options: Input should be a valid dictionary"]
    )


def test_a_custom_agent_path_is_refused_unless_allowed_and_shown_escaped(
    client: httpx.Client,
) -> None:
    path = "<b>x</b>:Y"
    form = _post_form(client, **{k: str(v) for k, v in SPEC.items()}, agent_path=path)
    api = client.post("/runs", json={**SPEC, "agent": path})
    assert form.status_code == api.status_code == 400
    assert _alerts(form.text) == [api.json()["detail"]]
    assert "dotted paths are not accepted here" in api.json()["detail"]
    assert path not in form.text and html.escape(path, quote=False) in form.text
