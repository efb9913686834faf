"""RAVEL localisation as an agent task, without a model: the command parser, the answer parser, the
scripted agent's dim ranking, and that the held-out split never reaches the agent (prompt, task
reply, public view, nor the spec the sandboxed runner gets)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from interp_harness.agents.base import Message
from interp_harness.agents.protocol import parse_message
from interp_harness.agents.protocol.reply import format_reply
from interp_harness.agents.scripted_ravel import (
    ScriptedRavelAgent,
    parse_task,
    parse_vectors,
    rank_dims,
    rotation_answer,
    value_directions,
)
from interp_harness.evaluator.ravel.scorer import (
    AnswerError,
    UploadedFeaturizer,
    featurizer_spec,
    parse_answer,
    parse_localisation,
    score_ravel_episode,
)
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import make_canary
from interp_harness.function_store.ravel.data import load
from interp_harness.function_store.ravel.runner import CommandError, RavelRunner, parse
from interp_harness.function_store.ravel.targets import INSTANCES
from interp_harness.harness.episode.prompts import task_prompt
from interp_harness.model_services.intervention.featurizers import decode_arrays


def _targets():
    return Catalog().list(dataset="ravel")


def test_targets_and_ids():
    ids = [t.id for t in _targets()]
    assert ids == [
        f"ravel/smollm2/{kind}/{a}" for kind, cfg in INSTANCES.items() for a in cfg.attributes
    ]
    assert "ravel/smollm2/city/Country" in ids and "ravel/smollm2/verb/Past Tense" in ids
    t = Catalog().get("ravel/smollm2/city/Continent")
    assert t.family == "ravel" and t.hidden.runner == "ravel"


@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_held_out_entities_and_labels_never_reach_the_agent(kind):
    cfg = INSTANCES[kind]
    d = load(kind)
    held_out = cfg.candidates["test"]
    train = cfg.candidates["train"]
    train_values = {d.attributes[e][a] for e in train for a in cfg.attributes}
    # labels only the held-out entities have (a label shared with a train entity is public)
    secret_labels = {d.attributes[e][a] for e in held_out for a in cfg.attributes} - train_values
    assert held_out and secret_labels
    prompts = {task_prompt(t.public.prompt_family, t.exemplars) for t in _targets()}
    assert len(prompts) == 1  # one prompt for every target
    (prompt,) = prompts
    targets = [t for t in _targets() if t.hidden.spec["entity_type"] == kind]
    assert len(targets) == len(cfg.attributes)
    for t in targets:
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


def test_featurizer_answer_parser_and_checks():
    rows = np.linalg.qr(np.random.default_rng(0).normal(size=(6, 2)))[0].T  # 2×6, orthonormal
    layer, up = parse_answer("[DESCRIPTION]: two directions\n" + rotation_answer(rows, 4))
    assert layer == 4 and isinstance(up, UploadedFeaturizer) and up.kind == "rotation"
    spec = featurizer_spec("f", layer, up, hidden_size=6)
    assert spec.component == "block_output" and spec.id == "f" and spec.layer == 4
    assert np.allclose(decode_arrays(spec)["weight"].numpy(), rows, atol=1e-6)
    # without [FEATURIZER] the answer is the neuron form
    assert parse_answer("[LAYER]: 2\n[NEURONS]: 1") == (2, [1])
    bad_answers = {
        "[FEATURIZER]: {not json": "JSON object",
        '[FEATURIZER]: {"kind": "rotation"}': "layer",
        '[FEATURIZER]: {"kind": "cube", "layer": 1}': "kind",
        # the scorer names and places the featurizer, not the agent
        '[FEATURIZER]: {"kind": "mask", "layer": 1, "id": "x"}': "id",
        '[FEATURIZER]: {"kind": "mask", "layer": 1, "component": "mlp_activation"}': "component",
    }
    for text, why in bad_answers.items():
        with pytest.raises(AnswerError, match=why):
            parse_answer(text)
    checks = {  # the service's own registry rules, as agent errors
        rotation_answer(rows * 2, 4): "orthonormal",
        rotation_answer(rows, 4).replace('"shape": [2, 6]', '"shape": [3, 6]'): "fill shape",
        rotation_answer(np.ones((1, 5)) / np.sqrt(5), 4): "k×6",
    }
    for text, why in checks.items():
        with pytest.raises(AnswerError, match=why):
            featurizer_spec("f", 4, parse_answer(text)[1], hidden_size=6)
    with pytest.raises(AnswerError, match="0..5"):
        featurizer_spec("f", 4, [2, 6], hidden_size=6)


def test_value_directions_by_hand():
    # centred vectors (1, 1, 0), (1, -1, 0), (-2, 0, 0); value means A = (1, 0, 0), B = (-2, 0, 0):
    # both lie on dim 0, so one row, ±e0
    vecs = [{0: 3.0, 1: 2.0, 2: 1.0}, {0: 3.0, 1: 0.0, 2: 1.0}, {0: 0.0, 1: 1.0, 2: 1.0}]
    rows = value_directions(vecs, ["A", "A", "B"])
    assert rows.shape == (1, 3) and np.allclose(np.abs(rows), [[1, 0, 0]])
    # three values in general position: as many orthonormal rows as independent means
    rng = np.random.default_rng(1)
    vecs = [dict(enumerate(rng.normal(size=8))) for _ in range(6)]
    rows = value_directions(vecs, ["A", "B", "C", "A", "B", "C"])
    assert rows.shape == (2, 8)  # centred means of 3 groups sum to 0: rank 2
    assert np.allclose(rows @ rows.T, np.eye(2), atol=1e-9)


def test_malformed_answer_is_the_agents_zero_with_the_reason():
    """A malformed localisation used to be an `agent` error state, which reports leave out of
    the means (issue 49 item 2: an escape from a low score); it is the agent's score now, 0 on
    each metric with the parser's reason, and nothing reaches the intervention service (none is
    running here: a service call would be an infrastructure error)."""
    scores = asyncio.run(score_ravel_episode(_targets()[0], "[DESCRIPTION]: somewhere"))
    assert {s.metric for s in scores} == {"disentangle", "cause", "isolate"}
    for s in scores:
        assert (s.status, s.value, s.details["agent_failure"]) == ("ok", 0.0, "unparsable")
        assert s.details["failure"].startswith("the answer needs [LAYER]")


def test_an_answer_longer_than_ravel_reads_is_refused_before_parsing():
    # 4 MiB + 1 characters: one more than the bound (4 * 1024 * 1024), well-formed otherwise
    head = "[LAYER]: 8\n[NEURONS]: 1"
    answer = head + " " * (4 * 1024 * 1024 + 1 - len(head))
    scores = asyncio.run(score_ravel_episode(_targets()[0], answer))
    for s in scores:
        assert (s.status, s.value, s.details["agent_failure"]) == ("ok", 0.0, "too_long")
        assert s.details["failure"] == (
            "the answer is 4,194,305 characters; localisation reads at most 4,194,304 characters"
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
    assert p.args[0].endswith("Berlin") and len(p.args) == len(
        INSTANCES["city"].candidates["train"]
    )
    fake = format_reply_lines(
        [(a, f"layer 8 token 'x': 0({i:+.2f}) 1(+1.00) 7(-0.50)") for i, a in enumerate(p.args)]
    )
    assert parse_vectors(fake)[3] == {0: 3.0, 1: 1.0, 7: -0.5}
    conv += [Message(role="assistant", content=r2.content), Message(role="user", content=fake)]
    r3 = asyncio.run(agent.step(conv))
    assert parse_localisation(r3.content) == (8, [0, 1, 7])
    assert parse_message(r3.content).has_description  # the answer ends the episode
    # the featurizer form: an uploaded rotation over the dims read (0..7 here)
    up = asyncio.run(ScriptedRavelAgent(answer="featurizer", layer=5).step(conv))
    layer, f = parse_answer(up.content)
    assert layer == 5 and isinstance(f, UploadedFeaturizer) and f.kind == "rotation"
    assert parse_message(up.content).has_description
    featurizer_spec("f", layer, f, hidden_size=8)  # passes the service's checks


def format_reply_lines(pairs: list[tuple[str, str]]) -> str:
    from interp_harness.function_store.models import CallOutput

    return format_reply([CallOutput(input=a, output=o) for a, o in pairs])


def test_preflight_refuses_a_ravel_run_without_an_intervention_service():
    import socket

    from interp_harness.harness.domain.spec import RunSpec
    from interp_harness.harness.runs.admission import admit
    from interp_harness.harness.runs.preflight import PreflightError
    from interp_harness.harness.settings import Settings

    class Catalogs:
        def get(self, seed: int) -> Catalog:
            return Catalog()

    spec = RunSpec.model_validate({"agent": "scripted-ravel", "dataset": "ravel", "ids": None})
    with pytest.raises(PreflightError, match="read a model through the intervention service"):
        admit(spec, Settings(intervention_url=None), Catalogs())  # type: ignore[arg-type]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing answers there
    with pytest.raises(PreflightError, match="does not answer"):
        admit(spec, Settings(intervention_url=f"http://127.0.0.1:{port}"), Catalogs())  # type: ignore[arg-type]
