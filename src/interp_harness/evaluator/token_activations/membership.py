"""Deciding q ∈ ⟦E⟧ for a new explanation E (the role the paper gives an LM or, for form-based
explanations, a regex program).

`LexicalMembership` is the offline decider: E's quoted strings ("then", "next") are its members,
compared case-insensitively with the span's text, stripped of spaces and punctuation; an
explanation without quotes falls back to its content words. It suits exemplar-list explanations
(the scripted baseline's) and form-based ones; an LM decider (`judge_probes`) covers the rest.
"""

from __future__ import annotations

import re
from typing import Protocol

_QUOTED = re.compile(r"[\"“”']([^\"“”']{1,40})[\"“”']")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
STOPWORDS = frozenset(
    "the a an and or of in on to for with as by at from that this these those is are be being "
    "word words token tokens term terms phrase phrases related other such like which its it "
    "use used using express expressing indicate indicating refer referring context contexts "
    "often typically especially various different specific particular similar concept concepts "
    "neuron fires activates mentions mention".split()
)


class Membership(Protocol):
    def __call__(self, span: str) -> bool: ...


def _norm(s: str) -> str:
    return s.strip().strip(".,;:!?()[]{}\"'“”").lower()


class LexicalMembership:
    def __init__(self, explanation: str) -> None:
        quoted = {_norm(m) for m in _QUOTED.findall(explanation)} - {""}
        self.members = quoted or {
            w.lower() for w in _WORD.findall(explanation) if w.lower() not in STOPWORDS
        }
        self.quoted = bool(quoted)

    def __call__(self, span: str) -> bool:
        return _norm(span) in self.members
