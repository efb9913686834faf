"""The prompts of FIND's synthetic neural modules, typed from FIND's
`neurons_entities` / `neurons_relations` function files.

A user template ends with `INPUT_SLOT`, where the agent's word goes (filled by `fill`, never by
`str.format`, so braces in a word or a concept are harmless).
"""

from __future__ import annotations

import re

INPUT_SLOT = "{input}"

ENTITY_SYSTEM = "You are an AI trained to identify words related to input concepts."

RELATION_SYSTEM = (
    "You are a helpful assistant. You apply real-world knowledge to map input words to output "
    "words according to a rule provided by the user. Try to be as precise as possible. "
    "Do not include additional explanation."
)

_ENTITY_TAIL = "Do not return any additional information other than the 0 or 1 answer.\nInput: "
_RELATION_TAIL = "Do not include any additional information other than the output.\n"


def entity_template(concept: str) -> str:
    """Atomic entity module: the digits are double-quoted, the concept is not."""
    return (
        f'I am going to give you an input. Return only "1" if that input is related to {concept}. '
        f'Return only "0" otherwise.\n{_ENTITY_TAIL}{INPUT_SLOT}'
    )


def composed_entity_template(concept1: str, concept2: str) -> str:
    """Composed entity module (an OR of two concepts): digits unquoted, concepts single-quoted."""
    return (
        f"I am going to give you an input. Return only 1 if that input is related to '{concept1}'. "
        f"Return only 1 if that input is related to '{concept2}'. Return only 0 otherwise.\n"
        f"{_ENTITY_TAIL}{INPUT_SLOT}"
    )


def relation_template(
    concept1: str, concept2: str, exception: str | None = None, *, fixed: bool = False
) -> str:
    """Relation module. As released (`fixed=False`) there is no space after "input." nor after
    "Input:". The corrupted text is not shipped; we infer it as the clean text
    with `If <exception>, return 'undefined'.` added after the third sentence. `fixed=True` adds
    the two missing spaces (find-gen)."""
    sep = " " if fixed else ""
    text = (
        f"I am going to give you an input.{sep}If the input is {concept1}, reply with only "
        f"{concept2}. If the input is not {concept1}, return 'undefined'."
    )
    if exception is not None:
        text += f" If {exception}, return 'undefined'."
    return f"{text}\n{_RELATION_TAIL}Input:{sep}{INPUT_SLOT}"


def fill(template: str, word: str) -> str:
    head, slot, tail = template.rpartition(INPUT_SLOT)
    if not slot:
        raise ValueError("template has no input slot")
    return head + word + tail


def messages(system: str, template: str, word: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": fill(template, word)},
    ]


_QUOTES = "\"'`“”‘’"


def normalize_relation_output(text: str | None) -> str:
    """A relation reply reduced for comparison: FIND prints replies raw (often with a leading space,
    quotes or a final period); scoring compares this form. `undefined` in any case -> `undefined`."""
    if text is None:
        return ""
    t = " ".join(text.split())
    t = t.strip(_QUOTES + " ").rstrip(".").strip(_QUOTES + " ")
    if re.fullmatch(r"undefined", t, flags=re.IGNORECASE):
        return "undefined"
    return t
