"""Type I / Type II probes for a new explanation: an OpenAI-compatible endpoint imitated by a real
HTTP server on loopback (the judge is a paid API in production), SmolLM2 behind the real
intervention service, cache by (explanation, model, neuron)."""

from __future__ import annotations

import asyncio
import json

import pytest
from support import LoopbackHTTP, QuietHandler

from interp_harness.evaluator.judge import OpenAICompatibleJudge
from interp_harness.evaluator.neurons import judge_probes as J

CORPUS = [
    "The red car stopped at the corner.",
    "She painted the fence green last summer.",
    "Numbers such as seven and twelve are small.",
    "He walked to the station in the rain.",
]
TYPE1_REPLY = "\n".join(
    [
        json.dumps({"string": "red", "sentence": "A red apple fell from the tree."}),
        json.dumps({"string": "blue", "sentence": "The sky was blue all day."}),
        json.dumps({"string": "violet", "sentence": "This sentence lacks the colour."}),
        "not json",
    ]
)


class _Fake(QuietHandler):
    calls: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        user = body["messages"][-1]["content"]
        _Fake.calls.append(user)
        if user.startswith("Description:") and "List " in user:
            text = TYPE1_REPLY
        else:
            s = user.split('Highlighted string: "', 1)[1].split('"', 1)[0].lower()
            text = "yes" if s in ("red", "green", "blue") else "no"
        out = {
            "model": body["model"],
            "choices": [{"message": {"role": "assistant", "content": text}}],
        }
        self.send_json(200, out)


@pytest.fixture()
def fake_llm():
    srv = LoopbackHTTP()
    srv.serve(_Fake)
    _Fake.calls = []
    yield srv.url + "/v1"
    srv.close()


def test_parse_type1_keeps_embedded_strings_and_counts_the_rest():
    probes, dropped = J.parse_type1(TYPE1_REPLY)
    assert [p.text[p.span[0] : p.span[1]] for p in probes] == ["red", "blue"]
    assert dropped == 1  # "violet" is not in its sentence; the non-JSON line is not an item


def test_form_regex():
    assert J.form_regex('words starting with "un"').search("undo")
    assert not J.form_regex('words starting with "un"').search("fun")
    assert J.form_regex("tokens ending in 'ing'").search("running")
    assert J.form_regex("the colour of things") is None


def test_build_score_and_cache(smol, fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    judge = OpenAICompatibleJudge(fake_llm, "fake-gpt", max_tokens=512, mode="generate")
    kw = dict(model="smollm2", layer=3, index=11, client=smol, corpus=CORPUS, corpus_name="t")

    async def build():
        return await J.build_probe_set("colour words", judge=judge, n_type2=3, **kw)

    ps = asyncio.run(build())
    assert ps.decider == "lm" and ps.dropped == 1
    kinds = [p.kind for p in ps.probes]
    assert kinds.count("type1") == 2 and 1 <= kinds.count("type2") <= 3
    for p in ps.probes:
        if p.kind == "type2":  # the judge's verdict on the mined token
            assert p.in_explanation == (p.text[p.span[0] : p.span[1]].lower() in ("red", "green"))
    n_calls = len(_Fake.calls)
    assert n_calls == 1 + kinds.count("type2")
    again = asyncio.run(build())
    assert again == ps and len(_Fake.calls) == n_calls  # cached: no second LM call
    v, c = J.score_probe_set(ps, smol, 3, 11)
    assert c.n == len(ps.probes) and c.claimed == sum(p.in_explanation for p in ps.probes)


def test_form_based_needs_no_lm(smol, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    ps = asyncio.run(
        J.build_probe_set(
            'words starting with "st"',
            model="smollm2",
            layer=3,
            index=11,
            client=smol,
            corpus=CORPUS,
            corpus_name="t",
            judge=None,
            n_type2=2,
        )
    )
    assert ps.decider == "regex"
    type1 = {p.text[p.span[0] : p.span[1]] for p in ps.probes if p.kind == "type1"}
    assert type1 == {"stopped", "station"}
