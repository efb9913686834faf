"""Prompt texts against FIND's (expected strings typed from FIND's function files, not from the
code)."""

from __future__ import annotations

import math

from interp_harness.function_store.entities_relations import backbone_prompts as P
from interp_harness.function_store.entities_relations.scoring import (
    digit_score,
    find_digit_site,
    format_score,
)


def test_atomic_entity_prompt_is_finds_text():
    msgs = P.messages(P.ENTITY_SYSTEM, P.entity_template("sport organizations"), "NFL")
    assert msgs[0] == {
        "role": "system",
        "content": "You are an AI trained to identify words related to input concepts.",
    }
    assert msgs[1]["content"] == (
        'I am going to give you an input. Return only "1" if that input is related to sport '
        'organizations. Return only "0" otherwise.\nDo not return any additional information '
        "other than the 0 or 1 answer.\nInput: NFL"
    )


def test_composed_entity_prompt_quotes_concepts_not_digits():
    text = P.fill(P.composed_entity_template("computing", "processes and manufacturing"), "factory")
    assert text == (
        "I am going to give you an input. Return only 1 if that input is related to 'computing'. "
        "Return only 1 if that input is related to 'processes and manufacturing'. Return only 0 "
        "otherwise.\nDo not return any additional information other than the 0 or 1 answer.\n"
        "Input: factory"
    )


def test_relation_prompts_clean_corrupted_and_fixed():
    clean = P.fill(P.relation_template("a country", "the capital of that country"), "France")
    assert clean == (
        "I am going to give you an input.If the input is a country, reply with only the capital "
        "of that country. If the input is not a country, return 'undefined'.\nDo not include any "
        "additional information other than the output.\nInput:France"
    )
    bad = P.fill(
        P.relation_template(
            "a country", "the capital of that country", "the input country is in Asia"
        ),
        "Japan",
    )
    assert bad == (
        "I am going to give you an input.If the input is a country, reply with only the capital "
        "of that country. If the input is not a country, return 'undefined'. If the input country "
        "is in Asia, return 'undefined'.\nDo not include any additional information other than "
        "the output.\nInput:Japan"
    )
    fixed = P.fill(P.relation_template("a river", "x", fixed=True), "Nile")
    assert fixed.startswith("I am going to give you an input. If the input is a river")
    assert fixed.endswith("\nInput: Nile")
    assert P.RELATION_SYSTEM == (
        "You are a helpful assistant. You apply real-world knowledge to map input words to output "
        "words according to a rule provided by the user. Try to be as precise as possible. Do not "
        "include additional explanation."
    )


def test_fill_keeps_braces_and_slot_text_in_words():
    t = P.entity_template("a {weird} concept")
    assert P.fill(t, "{input}").endswith("Input: {input}")
    assert "a {weird} concept" in P.fill(t, "x")


def test_normalize_relation_output():
    assert P.normalize_relation_output(" Copenhagen") == "Copenhagen"
    assert P.normalize_relation_output("'Undefined'.") == "undefined"
    assert P.normalize_relation_output(' "Paris."\n') == "Paris"
    assert P.normalize_relation_output("New  York\nCity") == "New York City"
    assert P.normalize_relation_output(None) == ""


def test_digit_score_hand_computed():
    alts = [
        {"token": "1", "logprob": math.log(0.6)},
        {"token": "The", "logprob": math.log(0.1)},
        {"token": "0", "logprob": math.log(0.2)},
    ]
    assert abs(digit_score(alts) - 0.75) < 1e-12
    # variants of a digit add up: " 1" 0.1 + "1" 0.5 vs "0" 0.2 -> 0.6/0.8
    alts = [
        {"token": "1", "logprob": math.log(0.5)},
        {"token": " 1", "logprob": math.log(0.1)},
        {"token": "\u25810", "logprob": math.log(0.2)},
    ]
    assert abs(digit_score(alts) - 0.75) < 1e-12
    assert digit_score([{"token": "1", "logprob": -0.1}]) is None  # "0" missing


def test_find_digit_site_first_digit_and_prefix():
    content = [
        {"token": "Answer", "logprob": -1.0, "top_logprobs": []},
        {"token": ":", "logprob": -0.5, "top_logprobs": []},
        {
            "token": " 0",
            "logprob": math.log(0.3),
            "top_logprobs": [
                {"token": " 0", "logprob": math.log(0.3)},
                {"token": " 1", "logprob": math.log(0.1)},
            ],
        },
        {"token": "1", "logprob": -0.1, "top_logprobs": []},
    ]
    site = find_digit_site(content)
    assert site.found and site.prefix == "Answer:"
    assert abs(site.score - 0.25) < 1e-12
    none = find_digit_site([{"token": "Yes", "logprob": -0.1, "top_logprobs": []}])
    assert not none.found and none.score is None and none.prefix == ""
    assert format_score(0.123456) == "0.1235" and format_score(1.0) == "1.0000"
