"""Agent options over REST follow the agent's declared `Options` schema; the error names the field.
The CLI (the operator) is not bound by it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from support.trust_helpers import HarnessServer

from interp_harness.agents.base import Agent, AgentOptions
from interp_harness.agents.registry import resolve_agent

BASE = {"dataset": "find-v1", "ids": ["find-v1/numeric/f00150"], "floor": False}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HarnessServer]:
    s = HarnessServer(tmp_path_factory.mktemp("options")).start()
    yield s
    s.stop()
    shutil.rmtree(s.tmpdir, ignore_errors=True)


@pytest.mark.parametrize(
    ("agent", "options", "field", "says"),
    [
        ("scripted-numeric", {"max_inputs_per_call": 0}, "max_inputs_per_call", "greater than"),
        ("scripted-numeric", {"max_input_per_call": 5}, "max_input_per_call", "Extra inputs"),
        ("scripted-strings", {"anything": 1}, "anything", "Extra inputs"),
        ("interpolation", {"low": "x"}, "low", "valid number"),
        ("openai", {"temperature": 5}, "temperature", "less than or equal to 2"),
        ("openai", {"prices": {"prompt": -1, "completion": 1}}, "prices", "greater than"),
        ("anthropic", {"extra_body": {}}, "extra_body", "Extra inputs"),
        ("replay", {}, "messages", "Field required"),
    ],
)
def test_options_are_checked_per_agent(
    srv: HarnessServer, agent: str, options: dict, field: str, says: str
) -> None:
    r = srv.post_run(BASE | {"agent": agent, "agent_options": options})
    assert r.status_code == 422, r.text
    errs = r.json()["detail"]
    assert any(e["loc"][:3] == ["body", "agent_options", field] for e in errs), errs
    assert says in r.text


def test_replay_over_rest_takes_messages_not_server_paths(srv: HarnessServer) -> None:
    for options in ({"path": "/etc/passwd"}, {"path": "x.json", "messages": ["a"]}):
        r = srv.post_run(BASE | {"agent": "replay", "agent_options": options})
        assert r.status_code == 422 and "read a file on the server" in r.text, r.text
        assert "root:" not in r.text
    inline = {"messages": ["COMMAND: PYTHON(./temp/function.py 1)", {"content": "done"}]}
    r = srv.post_run(BASE | {"agent": "replay", "agent_options": inline})
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["agent_options"] == inline


def test_valid_options_are_stored_as_given(srv: HarnessServer) -> None:
    opts = {"max_inputs_per_call": 64}
    r = srv.post_run(BASE | {"agent": "scripted-numeric", "agent_options": opts})
    assert r.status_code == 201 and r.json()["spec"]["agent_options"] == opts


def test_every_builtin_declares_options() -> None:
    """A built-in without its own schema would accept no options over REST at all."""
    for name, fields in {
        "openai": {"profile", "model", "temperature", "extra_body"},
        "anthropic": {"profile", "model", "max_tokens"},
        "scripted-numeric": {"max_inputs_per_call"},
        "interpolation": {"max_inputs", "batch_size", "low", "high"},
        "replay": {"messages"},
    }.items():
        cls, _ = resolve_agent(name)
        declared = set(cls.Options.model_fields)
        assert fields <= declared and not {"base_url", "api_key", "path"} & declared, name
    assert resolve_agent("scripted-strings")[0].Options is AgentOptions
    assert Agent.Options is AgentOptions and not AgentOptions.model_fields


def test_an_empty_id_list_is_an_error_not_the_whole_dataset(srv: HarnessServer) -> None:
    r = srv.post_run({**BASE, "agent": "scripted-numeric", "ids": []})
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"][-1] == "ids"
    assert srv.post_run({**BASE, "agent": "scripted-numeric"}).status_code == 201
