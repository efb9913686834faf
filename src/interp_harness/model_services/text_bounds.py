"""How many characters a text of at most N tokens can hold, from the tokenizer's vocabulary.

A token stands for at most as many characters as its vocabulary string is long (a byte-level
BPE string has one character per byte; a byte-fallback piece `<0x0A>` is longer than its byte),
so a text longer than N times the longest token can never tokenize to N tokens or fewer. The
servers refuse such a text before tokenizing it: tokenizing 20 MB took 20 s and 2.6 GB (issue 38).
A tokenizer that normalizes text first (Unicode composition may turn 3 characters into 1) gets
`NORMALIZER_SLACK` times more room.
"""

from __future__ import annotations

from typing import Any

NORMALIZER_SLACK = 4


def token_chars(tokenizer: Any) -> int:
    """The most characters of text one token can stand for (an upper bound)."""
    longest = max((len(s) for s in tokenizer.get_vocab()), default=1)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    # no fast tokenizer to ask: assume it may normalize
    normalizes = backend is None or backend.normalizer is not None
    return max(1, longest) * (NORMALIZER_SLACK if normalizes else 1)
