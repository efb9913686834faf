"""Test inputs for generated string functions: a fixed pool of varied strings written for this
project (words, sentences, digits, punctuation, mixed case, edge whitespace, long strings).

No string contains a single quote or a backslash: FIND's code scorer pastes inputs inside single
quotes without escaping (its `string_indicator.py`), so such inputs would fail any agent code. There
is no empty string either; FIND's string CLI cannot take one meaningfully and many functions raise
on it.
"""

from __future__ import annotations

INPUT_POOL: tuple[str, ...] = (
    # single words, assorted case
    "lantern",
    "Orchid",
    "MARBLE",
    "kayak",
    "bRiGhTnEsS",
    "Zebra",
    "quiz",
    "yellow",
    "Umbrella",
    "aardvark",
    "rhythm",
    "Eagle",
    "oboe",
    "syzygy",
    "Jazz",
    "level",
    "tomato",
    "Queue",
    # short and very short
    "a",
    "Z",
    "ox",
    "Hi",
    "abc",
    "xyz",
    "IoU",
    # sentences and phrases
    "the cat sat on the mat",
    "Good Morning Sunshine",
    "walk the dog at noon",
    "Rain falls softly",
    "meet me by the old oak",
    "ALL CAPS HERE",
    "mixed Case words",
    "a e i o u",
    "one two three",
    # digits and mixed alphanumerics
    "12345",
    "2024",
    "room 101",
    "abc123",
    "R2D2",
    "agent007",
    "x9y8z7",
    "Level5Boss",
    "4 score and 7 years",
    "v1.2.3",
    "0",
    # punctuation and symbols
    "hello, world!",
    "wait...what?",
    "#hashtag",
    "snake_case_name",
    "kebab-case-name",
    "email@example.com",
    "(parenthesis)",
    "50% off!",
    "C++ & Java",
    "dot.separated.words",
    "semi;colon:pairs",
    "under_score 42",
    'quote"mark',
    # edge whitespace (exercises the strip functions)
    "  padded both  ",
    "   leading spaces",
    "trailing spaces   ",
    " x ",
    # longer than thirty characters (length words become 'unknown'; indexes past 30 raise)
    "the quick brown fox jumps over the lazy dog",
    "Pack my box with five dozen liquor jugs",
    "abcdefghijklmnopqrstuvwxyz0123456789",
    "Supercalifragilisticexpialidocious",
)
