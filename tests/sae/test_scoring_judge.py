"""SAE scoring with the judge: the project's own server (real SmolLM2-135M on loopback, forced
choice). Checks the path, not the small model's skill: every verdict read, each probability the
one its logprobs give, the agent's and the ceiling's prompts in one batch request per scorer."""

from __future__ import annotations

import json

import httpx
import pytest
from support.sae_cases import LATENT, RIGHT

from interp_harness.evaluator.judge import OpenAICompatibleJudge
from interp_harness.evaluator.sae import classify
from interp_harness.evaluator.sae.scorer import CEILING, CLASSIFIED, score_latent

pytestmark = pytest.mark.slow


class _Counting(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.posts: list[tuple[str, dict]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts.append((request.url.path, json.loads(request.content)))
        return await super().handle_async_request(request)


async def test_judge_decides_detection_and_fuzzing(backbone_url):  # noqa: F811
    model = httpx.get(backbone_url + "/v1/models", timeout=10).json()["data"][0]["id"]
    transport = _Counting()
    judge = OpenAICompatibleJudge(backbone_url + "/v1", model, transport=transport, timeout_s=600)
    try:
        res = await score_latent(RIGHT, LATENT, classify.JudgeDecider(judge), seed=1)
    finally:
        await judge.aclose()
    by = {r.metric: r for r in res}
    for m in (*CLASSIFIED, *(m + CEILING for m in CLASSIFIED)):
        assert by[m].status == "ok" and 0.0 <= by[m].value <= 1.0, m
    det = by["detection_auc"].details
    assert det["decider"] == "judge" and det["counts"]["failed"] == 0
    for d in det["decisions"]:  # the verdict is the likelier of "1" / "0"
        assert d["prediction"] == (d["score"] >= 0.5)
    # detection: 4 + 4 texts, fuzzing: 4 right + 4 wrong markings; each for the agent's
    # explanation and the reference's: one batch of 16 per scorer, one answer token each
    assert [p for p, _ in transport.posts] == ["/v1/batch/chat/completions"] * 2
    for _, body in transport.posts:
        assert len(body["messages_list"]) == 16 and body["forced_choice"] == ["1", "0"]
        assert body["messages_list"][0][-1] == {"role": "assistant", "content": "Answer: "}
