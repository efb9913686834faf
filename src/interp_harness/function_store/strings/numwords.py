"""English number words as FIND's string functions spell them (`'zero'` ... `'thirty'`)."""

from __future__ import annotations

_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()

# zero..thirty; 21..29 are hyphenated ("twenty-one"), as in the released functions.
NUMBER_WORDS: tuple[str, ...] = (
    *_UNITS,
    "twenty",
    *(f"twenty-{u}" for u in _UNITS[1:10]),
    "thirty",
)

DIGIT_WORDS: dict[str, str] = {str(i): NUMBER_WORDS[i] for i in range(10)}


def number_word(n: int, limit: int = 30) -> str:
    """W(n). Outside 0..limit FIND's table lookup fails with KeyError('<n>'); so does this."""
    if 0 <= n <= limit:
        return NUMBER_WORDS[n]
    raise KeyError(str(n))
