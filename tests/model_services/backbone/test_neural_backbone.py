"""The backbone server (real uvicorn subprocess, SmolLM2-135M) and the entity/relation runners."""

from __future__ import annotations

import math

import httpx
import pytest
import torch

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.entities_relations import backbone_prompts as P
from interp_harness.function_store.entities_relations.client import BackboneClient, BackboneSettings
from interp_harness.function_store.runtime import RuntimeContext, call_target

WORDS = ["NFL", "banana", "olympics", "Chomsky"]


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog()


@pytest.fixture(scope="module")
def client(backbone_url: str) -> BackboneClient:
    return BackboneClient(BackboneSettings(url=backbone_url, relation_max_tokens=6, timeout_s=300))


def test_models_route(backbone_url):
    r = httpx.get(backbone_url + "/v1/models", timeout=10).json()
    assert r["object"] == "list" and r["data"][0]["id"] == "SmolLM2-135M-Instruct"


def test_entity_scores_are_probabilities_in_find_format(cat, client):
    out = call_target(cat.get("find-v1/entities/f00000"), WORDS, RuntimeContext(backbone=client))
    assert [o.input for o in out] == WORDS
    for o in out:
        assert o.error is None, o.error
        assert len(o.output.split(".")[1]) == 4  # FIND prints 4 decimals
        assert 0.0 <= float(o.output) <= 1.0


def test_batched_equals_one_at_a_time(client):
    convs = [
        P.messages(P.ENTITY_SYSTEM, P.entity_template("sport organizations"), w) for w in WORDS[:3]
    ]
    batched = client.entity_scores(convs)
    singles = [client.entity_scores([c])[0] for c in convs]
    assert len(set(round(s, 4) for s in singles)) > 1  # the words do get different scores
    for b, s in zip(batched, singles, strict=True):
        assert abs(b - s) < 1e-4


def test_concurrent_requests_equal_batch_endpoint(backbone_url, client):
    conc = BackboneClient(BackboneSettings(url=backbone_url, batch="concurrent", timeout_s=300))
    convs = [
        P.messages(P.ENTITY_SYSTEM, P.entity_template("food and eating"), w) for w in WORDS[:2]
    ]
    for a, b in zip(conc.entity_scores(convs), client.entity_scores(convs), strict=True):
        assert abs(a - b) < 1e-4


def test_forced_choice_matches_top_logprobs(backbone_url, client):
    """At the reply's first token, the forced-choice score (our extension, and logit_bias after
    /tokenize) must equal P1/(P0+P1) read from the plain top_logprobs."""
    conv = P.messages(P.ENTITY_SYSTEM, P.entity_template("sport organizations"), "NFL")
    comp = client.chat_many([conv], max_tokens=1, logprobs=True, top_logprobs=20)[0]
    first = comp.choices[0].logprobs.content[0]
    lp = {t.token: t.logprob for t in first.top_logprobs}
    assert "0" in lp and "1" in lp, "the test word should list both digits"
    want = math.exp(lp["1"]) / (math.exp(lp["0"]) + math.exp(lp["1"]))
    assert abs(client._forced_choice([conv], [""])[0] - want) < 1e-5
    bias = BackboneClient(
        BackboneSettings(url=backbone_url, forced_choice="logit_bias", timeout_s=300)
    )
    assert abs(bias._forced_choice([conv], [""])[0] - want) < 1e-4
    # Mid-reply position: the reply so far is continued as an assistant message.
    prefix = "The answer is "
    cont = conv + [{"role": "assistant", "content": prefix}]
    comp = client.chat_many([cont], max_tokens=1, logprobs=True, top_logprobs=20)[0]
    lp = {t.token: t.logprob for t in comp.choices[0].logprobs.content[0].top_logprobs}
    got = client._forced_choice([conv], [prefix])[0]
    assert 0.0 <= got <= 1.0
    assert "0" in lp and "1" in lp
    assert abs(got - math.exp(lp["1"]) / (math.exp(lp["0"]) + math.exp(lp["1"]))) < 1e-5


def test_server_logprobs_match_direct_forward(client, local_model):
    tok, lm = local_model
    conv = [{"role": "user", "content": "Name the capital of France."}]
    comp = client.chat_many(
        [conv], max_tokens=2, logprobs=True, top_logprobs=5, extra_logprobs=["0", "1"]
    )[0]
    content = comp.choices[0].logprobs.content
    text = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    digit_ids = [
        tok("0", add_special_tokens=False)["input_ids"][0],
        tok("1", add_special_tokens=False)["input_ids"][0],
    ]
    for item in content:
        with torch.inference_mode():
            logits = lm(input_ids=torch.tensor([ids])).logits[0, -1]
        logp = torch.log_softmax(logits.float(), -1)
        greedy = int(torch.argmax(logp))
        assert item.token == tok.decode([greedy])
        assert abs(item.logprob - float(logp[greedy])) < 1e-3
        top = torch.topk(logp, 5)
        want = [int(i) for i in top.indices] + [d for d in digit_ids if d not in top.indices]
        assert len(want) > 5  # the digits rank low here: extra_logprobs had to add them
        assert [t.token for t in item.top_logprobs] == [tok.decode([i]) for i in want]
        for t, i in zip(item.top_logprobs, want, strict=True):
            assert abs(t.logprob - float(logp[i])) < 1e-3
        ids.append(greedy)


def test_extra_logprobs_spare_the_forced_choice_request(backbone_url, monkeypatch):
    """Our server lists both digits at every position (extra_logprobs), so a reply with no digit
    (scored at its first token) or whose digit site does not list the other digit needs no second
    request, and the score equals the forced-choice request's at the same position."""
    convs = [
        P.messages(P.ENTITY_SYSTEM, P.entity_template("movies"), "The Godfather"),
        P.messages(P.ENTITY_SYSTEM, P.entity_template("music"), "Language"),
        P.messages(P.ENTITY_SYSTEM, P.entity_template("sport organizations"), "NFL"),
    ]
    # top_logprobs=2: the digit site rarely lists both digits, so the extension must fill in
    client = BackboneClient(BackboneSettings(url=backbone_url, top_logprobs=2, timeout_s=300))
    replies = client.chat_many(
        convs,
        max_tokens=8,
        logprobs=True,
        top_logprobs=2,
        stop=["0", "1"],
        include_stop_str_in_output=True,
    )
    texts = [c.choices[0].message.content for c in replies]
    assert not any(d in texts[0] for d in "01"), texts[0]  # no digit: scored at position 0
    assert texts[1][-1] in "01" and len(texts[1]) > 1, texts[1]  # the digit comes later
    sites = [c.choices[0].logprobs.content[-1].top_logprobs for c in replies[1:]]
    assert any({t.token.strip() for t in top} != {"0", "1"} for top in sites)
    prefixes = ["", texts[1][:-1], texts[2][:-1]]
    want = [client._forced_choice([c], [p])[0] for c, p in zip(convs, prefixes, strict=True)]

    def no_second_request(*_a: object) -> list[float]:
        raise AssertionError("a forced-choice request was made")

    monkeypatch.setattr(client, "_forced_choice", no_second_request)
    for g, w in zip(client.entity_scores(convs), want, strict=True):
        assert abs(g - w) < 1e-4
    # Without the extension (vLLM's way) the same scores come from forced-choice requests.
    bias = BackboneClient(
        BackboneSettings(
            url=backbone_url, top_logprobs=2, forced_choice="logit_bias", timeout_s=300
        )
    )
    for g, w in zip(bias.entity_scores(convs), want, strict=True):
        assert abs(g - w) < 1e-4


def test_relation_outputs_are_text(cat, client):
    t = cat.get("find-v1/relations/f00025")
    out = call_target(t, ["France", "Japan"], RuntimeContext(backbone=client))
    assert [o.input for o in out] == ["France", "Japan"]
    for o in out:
        assert o.error is None and isinstance(o.output, str) and o.output.strip()


def test_composed_entity_through_env(cat, backbone_url, monkeypatch):
    monkeypatch.setenv("HARNESS_BACKBONE_URL", backbone_url + "/v1")
    out = call_target(cat.get("find-v1/entities/f00150"), ["factory"], RuntimeContext())
    assert out[0].error is None and 0 <= float(out[0].output) <= 1


def test_bad_requests_are_refused_clearly(backbone_url):
    r = httpx.post(
        backbone_url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "logit_bias": {"99999999": 5}},
        timeout=30,
    )
    assert r.status_code == 400 and "vocabulary" in r.json()["error"]["message"]
    r = httpx.post(
        backbone_url + "/v1/chat/completions",
        json={"model": "gpt-9", "messages": [{"role": "user", "content": "x"}]},
        timeout=30,
    )
    assert r.status_code == 404


def test_engine_batch_with_rows_finishing_at_different_steps(local_model):
    """Rows leave the decode batch as they finish (EOS, stop string, max_tokens); each result
    must still equal the same request run alone."""
    from interp_harness.model_services.backbone.engine import Engine, GenRequest

    engine = Engine(*local_model)
    prompts = ["Say only: 1", "Count from one to five.", "Name a color.", "Describe a river."]
    reqs = [
        GenRequest([{"role": "user", "content": p}], max_tokens=m, logprobs=True, stop=["."])
        for p, m in zip(prompts, [2, 7, 4, 6], strict=True)
    ]
    batched = engine.generate(reqs)
    for r, b in zip(reqs, batched, strict=True):
        (alone,) = engine.generate([r])
        assert b.text == alone.text and b.finish_reason == alone.finish_reason
        assert [t.token_id for t in b.tokens] == [t.token_id for t in alone.tokens]
        assert all(
            abs(x.logprob - y.logprob) < 1e-3 for x, y in zip(b.tokens, alone.tokens, strict=True)
        )
    assert len({len(b.tokens) for b in batched}) > 1  # the rows really finished at different steps


async def test_own_server_serves_the_judge(backbone_url):
    """The evaluator's OpenAI-compatible judge client, pointed at our server, gets verdicts (the
    offline judge); whether SmolLM2 judges well is not this test's business."""
    from interp_harness.evaluator.judge import OpenAICompatibleJudge
    from interp_harness.evaluator.strings.scorer import PROMPT as STRINGS
    from interp_harness.evaluator.unit_tests import judge_description
    from interp_harness.function_store.models import UnitTest

    judge = OpenAICompatibleJudge(
        backbone_url + "/v1", "SmolLM2-135M-Instruct", timeout_s=300, max_tokens=8
    )
    tests = [
        UnitTest(inputs=["abc", "dog", "hello"], outputs=["cba", "dgo", "hello"], correct=1),
        UnitTest(inputs=["sun", "map", "tree"], outputs=["snu", "pam", "tere"], correct=2),
    ]
    try:
        results = await judge_description(judge, STRINGS, "reverses the string", tests)
    finally:
        await judge.aclose()
    assert [r.status for r in results] == ["ok", "ok"], results[0].error
    for r in results:
        assert 0.0 <= r.value <= 1.0
        assert r.details["judge_model"] == "SmolLM2-135M-Instruct"
        assert all(v["reply"] for v in r.details["verdicts"])


def test_small_row_matmul_changes_no_reply(local_model):
    """Decode steps use W @ xᵀ for up to 4 rows (faster on CPU); replies and logprobs must match
    an engine on an untouched copy of the model, which uses torch's own linear throughout."""
    import torch.nn.functional as F

    from interp_harness.model_services.backbone import model as model_mod
    from interp_harness.model_services.backbone.engine import Engine, GenRequest

    fast = Engine(*local_model)
    plain = Engine(*model_mod.load(), small_row_matmul=False)
    layer = fast.model.model.layers[0].mlp.down_proj
    assert layer._small_rows == 4 and not hasattr(
        plain.model.model.layers[0].mlp.down_proj, "_small_rows"
    )
    for m in range(1, 7):
        x = torch.randn(1, m, layer.in_features)
        with torch.inference_mode():
            assert torch.allclose(layer(x), F.linear(x, layer.weight), rtol=1e-4, atol=1e-4)
    reqs = [
        GenRequest([{"role": "user", "content": p}], max_tokens=10, logprobs=True, top_logprobs=3)
        for p in ["Name three rivers.", "Count from one to ten.", "Say hello."]
    ]
    for batch in (reqs, reqs[:1]):  # several rows decoding, then a lone row
        for a, b in zip(fast.generate(batch), plain.generate(batch), strict=True):
            assert a.text == b.text and len(a.tokens) > 1
            for x, y in zip(a.tokens, b.tokens, strict=True):
                assert x.token_id == y.token_id and abs(x.logprob - y.logprob) < 1e-4
