"""Entity scores from token logprobs: P("1") / (P("0") + P("1")) at the first 0/1 token
(FIND's entity function files).

FIND indexed a full [tokens x vocab] matrix with Llama's ids of '0' and '1'. We read the
`top_logprobs` an OpenAI-compatible server returns, in the backbone's own tokenizer: every listed
alternative whose text, stripped of whitespace, is the digit counts for it (e.g. "1" and "▁1" /
" 1" both count; their probabilities are added). When either digit is missing from the list the
caller makes a forced-choice request at the same position (see `client.BackboneClient`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

DIGITS = ("0", "1")


@dataclass
class DigitSite:
    """Where the first 0/1 token of a reply sits, and what the server listed there."""

    prefix: str  # reply text before that token (continued in a forced-choice request)
    score: float | None  # None: a digit was missing from the listed alternatives
    found: bool  # False: the reply has no 0/1 token (prefix is then "", the reply's start)


def digit_score(alternatives: list[dict[str, Any]]) -> float | None:
    """P(1)/(P(0)+P(1)) from a list of {token, logprob}; None unless both digits are listed."""
    seen: dict[str, float] = {}
    for alt in alternatives:
        tok = alt.get("token")
        lp = alt.get("logprob")
        if isinstance(tok, str) and isinstance(lp, int | float) and tok not in seen:
            seen[tok] = float(lp)
    mass = dict.fromkeys(DIGITS, 0.0)
    present = set()
    for tok, lp in seen.items():
        d = tok.strip().replace("\u2581", "")  # "▁1" (SentencePiece) counts as "1"
        if d in mass and math.isfinite(lp):
            mass[d] += math.exp(lp)
            present.add(d)
    if present != set(DIGITS) or mass["0"] + mass["1"] <= 0:
        return None
    return mass["1"] / (mass["0"] + mass["1"])


def _alternatives(item: dict[str, Any]) -> list[dict[str, Any]]:
    return list(item.get("top_logprobs") or []) + [item]


def find_digit_site(content: list[dict[str, Any]] | None) -> DigitSite:
    """Scan a reply's `logprobs.content` for its first 0/1 token. A reply without one is scored
    at its first token (from what is listed there; a server with our `extra_logprobs` extension
    lists both digits)."""
    prefix = ""
    for item in content or []:
        tok = item.get("token", "")
        if tok.strip().replace("\u2581", "") in DIGITS:
            return DigitSite(prefix=prefix, score=digit_score(_alternatives(item)), found=True)
        prefix += tok
    score = digit_score(_alternatives(content[0])) if content else None
    return DigitSite(prefix="", score=score, found=False)


def format_score(p: float) -> str:
    """FIND prints entity outputs with 4 decimals."""
    return f"{p:.4f}"
