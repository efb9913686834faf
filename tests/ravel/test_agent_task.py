"""RAVEL localisation as an agent task, without a model: the command parser, the answer parser, the
scripted agent's dim ranking, and that the held-out split never reaches the agent (prompt, task
reply, public view, nor the spec the sandboxed runner gets)."""

from __future__ import annotations

import asyncio

import pytest

from agents.base import Message
from agents.scripted_ravel import ScriptedRavelAgent, parse_task, parse_vectors, rank_dims
from evaluator.ravel.agent_task import AnswerError, parse_localisation, score_ravel_episode
from function_store.catalog import Catalog
from function_store.models import make_canary
from function_store.ravel.data import load
from function_store.ravel.runner import CommandError, RavelRunner, parse
from function_store.ravel.targets import INSTANCES
from harness.prompts import task_prompt
from harness.protocol import parse_message
from harness.protocol.reply import format_reply


def _targets():
    return Catalog().list(dataset="ravel")


def test_targets_and_ids():
    ids = [t.id for t in _targets()]
    assert ids == ["ravel/smollm2/city/Country", "ravel/smollm2/city/Continent"]
    t = Catalog().get("ravel/smollm2/city/Continent")
    assert t.family == "ravel" and t.hidden.runner == "ravel"


def test_held_out_entities_and_labels_never_reach_the_agent():
    cfg = INSTANCES["city"]
    d = load("city")
    held_out = cfg.candidates["test"]
    train = cfg.candidates["train"]
    train_values = {d.attributes[e][a] for e in train for a in cfg.attributes}
    # labels only the held-out entities have (a label shared with a train entity is public)
    secret_labels = {d.attributes[e][a] for e in held_out for a in cfg.attributes} - train_values
    assert held_out and secret_labels
    prompts = {task_prompt(t.public.prompt_family, t.exemplars) for t in _targets()}
    assert len(prompts) == 1  # one prompt for every target
    (prompt,) = prompts
    for t in _targets():
        [reply] = RavelRunner(t, None).call(["task"])
        seen = "\n".join([prompt, format_reply([reply]), t.public_view().model_dump_json()])
        sandbox_side = t.hidden.model_dump_json()  # what the sandboxed runner is given
        for secret in [*held_out, *secret_labels]:
            assert secret not in seen, secret
            assert secret not in sandbox_side, secret
        assert t.hidden.canary not in seen and make_canary(t.id) not in seen
        task = parse_task(format_reply([reply]))
        assert task["attribute"] == t.hidden.spec["attribute"]
        assert sorted(task["entities"]) == sorted(train)
        assert all("%s" in x for ts in task["templates"].values() for x in ts)


def test_command_parser():
    p = parse(["interchange", "%s is in", "Paris", "Rome", "--layer", "8", "--neurons", "1,2", "5"])
    assert (p.args, p.layer, p.neurons) == (["%s is in", "Paris", "Rome"], 8, [1, 2, 5])
    assert parse(["activations", "a", "b", "--top", "all"]).top == 0
    # the protocol splits commas: `--neurons 1,2, 3` arrives as separate words
    [cmd] = parse_message(
        'PYTHON(./temp/model.py interchange "%s, x" A B --neurons 1,2, 3)'
    ).commands
    assert parse(cmd.inputs).neurons == [1, 2, 3] and parse(cmd.inputs).args[0] == "%s, x"
    for bad in (["run"], ["activations", "--layer", "x"], ["activations", "--layer", "1", "2"]):
        with pytest.raises(CommandError):
            parse(bad)


def test_malformed_commands_are_agent_errors_without_a_service():
    t = _targets()[0]
    r = RavelRunner(t, None)
    [out] = r.call(["interchange", "x", "--bogus"])
    assert out.error_category == "agent" and out.output is None


def test_answer_parser():
    assert parse_localisation("blah\n[LAYER]: 8\n[NEURONS]: 9, 1, 5, 1") == (8, [1, 5, 9])
    assert parse_localisation("[LAYER]: 3 [NEURONS]: 4 2") == (3, [2, 4])
    for bad in ("[LAYER]: 8", "[NEURONS]: 1", "[LAYER]: 8\n[NEURONS]: x"):
        with pytest.raises(AnswerError):
            parse_localisation(bad)


def test_malformed_answer_is_an_agent_error_not_a_zero():
    scores = asyncio.run(score_ravel_episode(_targets()[0], "[DESCRIPTION]: somewhere"))
    assert {s.metric for s in scores} == {"disentangle", "cause", "isolate"}
    assert all(
        s.status == "error" and s.error_category == "agent" and s.value is None for s in scores
    )


def test_rank_dims_by_hand():
    # dim 0 separates the values (|3-0| for every differing pair), dim 1 varies only within a
    # value (cost), dim 2 is constant; hand-computed scores: d0 = 3 - 0, d1 = 1 - 2, d2 = 0
    vecs = [{0: 3.0, 1: 2.0, 2: 1.0}, {0: 3.0, 1: 0.0, 2: 1.0}, {0: 0.0, 1: 1.0, 2: 1.0}]
    assert rank_dims(vecs, ["A", "A", "B"], 2) == [0, 2]
    assert rank_dims(vecs, ["A", "A", "B"], 1) == [0]


def test_scripted_agent_steps():
    agent = ScriptedRavelAgent()
    prompt = task_prompt("ravel")
    conv = [Message(role="user", content=prompt)]
    r1 = asyncio.run(agent.step(conv))
    assert r1.content == "PYTHON(./temp/model.py task)"
    [task_out] = RavelRunner(_targets()[0], None).call(["task"])
    conv += [Message(role="assistant", content=r1.content)]
    conv += [Message(role="user", content=format_reply([task_out]))]
    r2 = asyncio.run(agent.step(conv))
    [cmd] = parse_message(r2.content).commands
    p = parse(cmd.inputs)
    assert p.command == "activations" and p.layer == 8 and p.top == 0
    assert p.args[0].endswith("Berlin") and len(p.args) == 8
    fake = format_reply_lines(
        [(a, f"layer 8 token 'x': 0({i:+.2f}) 1(+1.00) 7(-0.50)") for i, a in enumerate(p.args)]
    )
    assert parse_vectors(fake)[3] == {0: 3.0, 1: 1.0, 7: -0.5}
    conv += [Message(role="assistant", content=r2.content), Message(role="user", content=fake)]
    r3 = asyncio.run(agent.step(conv))
    assert parse_localisation(r3.content) == (8, [0, 1, 7])
    assert parse_message(r3.content).has_description  # the answer ends the episode


def format_reply_lines(pairs: list[tuple[str, str]]) -> str:
    from function_store.models import CallOutput

    return format_reply([CallOutput(input=a, output=o) for a, o in pairs])


def test_preflight_refuses_a_ravel_run_without_an_intervention_service():
    import socket

    from harness.preflight import PreflightError, preflight
    from harness.settings import Settings
    from harness.store.specs import RunSpec

    class Catalogs:
        def get(self, seed: int) -> Catalog:
            return Catalog()

    spec = RunSpec.model_validate({"agent": "scripted-ravel", "dataset": "ravel", "ids": None})
    with pytest.raises(PreflightError, match="need the intervention service"):
        preflight(spec, Settings(intervention_url=None), Catalogs())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing answers there
    with pytest.raises(PreflightError, match="does not answer"):
        preflight(spec, Settings(intervention_url=f"http://127.0.0.1:{port}"), Catalogs())
