"""The endpoint simulator against a real loopback HTTP server that echoes the prompt with chosen
top logprobs at each `unknown` slot: the prompt's layout, the request's fields, the expected
values (computed here by hand), a tokenizer that joins the tab to the slot, retries, and a
failure recorded as a judge error state, never a score."""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Iterator

import pytest
from support import LoopbackHTTP, QuietHandler

from interp_harness.evaluator.scorer import ScoringContext
from interp_harness.evaluator.simulation.scoring import Excerpt, score_explanations
from interp_harness.evaluator.simulation.simulator import (
    EndpointSimulator,
    SimulatorError,
    SimulatorSettings,
)

TOKENS = ["The", " year", " 2000", "\tend\n"]
EXPLANATION = 'the year "2000"'
# per slot, in order: the alternatives the server lists (probabilities)
CHOSEN = [
    {"3": 0.5, " 7": 0.25, "unknown": 0.25},  # (3·0.5 + 7·0.25) / 0.75
    {"10": 0.2, "0": 0.2, "unknown": 0.6},  # (10·0.2 + 0·0.2) / 0.4
    {"unknown": 0.9, "x": 0.1},  # no level listed: 0, counted as unread
    {"1": 0.1, " 1": 0.1, "2": 0.2},  # "1" and " 1" add up: (1·0.2 + 2·0.2) / 0.4
]
BY_HAND = [3.25 / 0.75, 2.0 / 0.4, 0.0, 0.6 / 0.4]


class Endpoint:
    """What the fake server does: its tokenizer (tab separate from, or joined to, the slot),
    how many requests fail first, and what it received."""

    def __init__(self, join_tab: bool = False, fail_first: int = 0, status: int = 500) -> None:
        self.split = re.compile(r"\tunknown|\t|\n|[^\t\n]+" if join_tab else r"\t|\n|[^\t\n]+")
        self.fail_first, self.status = fail_first, status
        self.bodies: list[dict] = []

    def reply(self, body: dict) -> tuple[int, dict]:
        self.bodies.append(body)
        if len(self.bodies) <= self.fail_first:
            return self.status, {"error": {"message": "busy"}}
        prompt = body["prompt"]
        tokens, offsets, tops = [], [], []
        slot = 0
        for m in self.split.finditer(prompt):
            tokens.append(m.group())
            offsets.append(m.start())
            at_slot = m.group() == "unknown" and prompt[m.start() - 1] == "\t"
            if at_slot or m.group() == "\tunknown":
                alts = CHOSEN[slot % len(CHOSEN)]
                slot += 1
                tops.append({k: math.log(p) for k, p in alts.items()})
            else:
                tops.append({m.group(): 0.0})
        tops[0] = None  # the first prompt token has no logprob
        lp = {"tokens": tokens, "text_offset": offsets, "top_logprobs": tops,
              "token_logprobs": [None] + [0.0] * (len(tokens) - 1)}  # fmt: skip
        return 200, {"choices": [{"index": 0, "text": prompt, "logprobs": lp}]}


@pytest.fixture
def serve() -> Iterator:
    servers: list[LoopbackHTTP] = []

    def start(endpoint: Endpoint) -> str:
        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self.send_json(200, {"data": [{"id": "stand-in", "owned_by": "someone"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                assert self.path == "/v1/completions"
                self.send_json(*endpoint.reply(body))

        s = LoopbackHTTP()
        s.serve(Handler)
        servers.append(s)
        return f"{s.url}/v1"

    yield start
    for s in servers:
        s.close()


def _simulate(url: str, texts: list[list[str]], **settings: object):
    sim = EndpointSimulator(SimulatorSettings(url=url, max_retries=2, **settings))

    async def go():
        try:
            return await sim.simulate(EXPLANATION, texts)
        finally:
            await sim.aclose()

    return asyncio.run(go()), sim


@pytest.mark.parametrize("join_tab", [False, True])
def test_prompt_layout_request_and_expected_values(serve, join_tab: bool) -> None:
    ep = Endpoint(join_tab=join_tab)
    out, sim = _simulate(serve(ep), [TOKENS])
    assert out[0] == pytest.approx(BY_HAND, abs=1e-9)
    assert out.unread == 1
    assert sim.name.startswith("stand-in at ")  # the model the endpoint lists, used by name
    [body] = ep.bodies
    assert body["model"] == "stand-in"
    assert body["echo"] is True and body["logprobs"] == 15 and body["max_tokens"] == 1
    assert body["temperature"] == 0
    prompt = body["prompt"]
    # two worked neurons, then the neuron under test: explanation, then one line per token with
    # its slot; the tab and line break inside the last token are escaped onto its own line
    assert prompt.index("Neuron 1\n") < prompt.index("Neuron 2\n") < prompt.index("Neuron 3\n")
    assert prompt.endswith(
        'Neuron 3\nWhat neuron 3 responds to: the year "2000"\nActivations:\n<start>\n'
        "The\tunknown\n year\tunknown\n 2000\tunknown\n\\tend\\n\tunknown\n<end>\n"
    )


def test_one_request_per_text(serve) -> None:
    ep = Endpoint()
    out, _ = _simulate(serve(ep), [TOKENS[:2], TOKENS[2:]], concurrency=1)
    assert [len(x) for x in out] == [2, 2] and len(ep.bodies) == 2
    # each text's slots start again at the first chosen distribution
    assert out[0] == pytest.approx(BY_HAND[:2]) and out[1] == pytest.approx(BY_HAND[:2])


def test_server_errors_are_retried(serve) -> None:
    ep = Endpoint(fail_first=2, status=503)
    out, _ = _simulate(serve(ep), [TOKENS])
    assert out[0] == pytest.approx(BY_HAND) and len(ep.bodies) == 3


def test_a_refusal_is_not_retried(serve) -> None:
    ep = Endpoint(fail_first=5, status=400)
    with pytest.raises(SimulatorError, match="HTTP 400"):
        _simulate(serve(ep), [TOKENS])
    assert len(ep.bodies) == 1


def test_a_simulator_failure_is_a_judge_error_state_not_a_score(serve) -> None:
    url = serve(Endpoint(fail_first=99, status=500))
    ctx = ScoringContext(simulator_settings=SimulatorSettings(url=url, max_retries=1))
    excerpts = [Excerpt(TOKENS, [0.0, 0.0, 2.0, 0.0]), Excerpt(TOKENS, [0.0, 0.0, 1.0, 0.0])]

    async def go():
        sim = ctx.simulator()
        try:
            return await score_explanations("x", "the year 2000", excerpts, sim, seed=0)
        finally:
            await sim.aclose()

    results = asyncio.run(go())
    assert {r.metric for r in results} == {
        "simulation_top_random",
        "simulation_all",
        "simulation_top_random_ceiling",
        "simulation_all_ceiling",
    }
    for r in results:
        assert r.status == "error" and r.error_category == "judge" and r.value is None
        assert "HTTP 500" in (r.error or "")
