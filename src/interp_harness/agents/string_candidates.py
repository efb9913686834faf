"""A small library of candidate string transformations for the scripted strings agent.

Our own candidate set (it does not read any target definition). Each candidate is a Python
expression in `s` over the helpers in HELPERS; the agent evaluates exactly the code it will write
in its answer, so the behaviour it checked is the behaviour it reports.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

HELPERS = """
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
         "nineteen", "twenty"] + ["twenty-" + w for w in ["one", "two", "three", "four", "five", "six",
         "seven", "eight", "nine"]] + ["thirty"]
VOWELS = "aeiouAEIOU"


def word(n):
    return WORDS[n] if 0 <= n < len(WORDS) else "unknown"


def caesar(s, k):
    out = []
    for c in s:
        if c.islower():
            out.append(chr((ord(c) - 97 + k) % 26 + 97))
        elif c.isupper():
            out.append(chr((ord(c) - 65 + k) % 26 + 65))
        else:
            out.append(c)
    return "".join(out)


def mid(s):
    n = len(s)
    return s[n // 2] if n % 2 else s[n // 2 - 1 : n // 2 + 1]


def dedup(s):
    seen = []
    for c in s:
        if c not in seen:
            seen.append(c)
    return "".join(seen)


def replace_vowels(s, r):
    return "".join(r if c in VOWELS else c for c in s)


def reverse_vowels(s):
    vs = [c for c in s if c in VOWELS]
    return "".join(vs.pop() if c in VOWELS else c for c in s)


def alternate_case(s):
    return "".join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(s))


def swap(s, i, j):
    if max(i, j) >= len(s):
        return s
    t = list(s)
    t[i], t[j] = t[j], t[i]
    return "".join(t)


def ordinal(c):
    return word(ord(c.lower()) - 96) if c.isalpha() and c.isascii() else "zero"


def digit_words(s):
    return " ".join(WORDS[int(c)] for c in s if c in "0123456789")
"""

_NS: dict[str, object] = {}
exec(
    compile(HELPERS, "<interp_harness.agents.string_candidates.HELPERS>", "exec"), _NS
)  # our own fixed source


@dataclass(frozen=True)
class Candidate:
    expr: str  # Python expression in `s`
    description: str
    cost: int = 1  # simpler first

    def fn(self) -> Callable[[str], str]:
        return _compiled(self.expr)


_CACHE: dict[str, Callable[[str], str]] = {}


def _compiled(expr: str) -> Callable[[str], str]:
    if expr not in _CACHE:
        _CACHE[expr] = eval(f"lambda s: {expr}", _NS)  # noqa: S307 - expressions from this module only
    return _CACHE[expr]


LETTERS = string.ascii_letters


def atomic_candidates() -> list[Candidate]:
    c: list[Candidate] = [
        Candidate("s", "returns the input unchanged", 0),
        Candidate("s.lower()", "converts the string to lowercase"),
        Candidate("s.upper()", "converts the string to uppercase"),
        Candidate("s.capitalize()", "capitalizes the first letter and lowercases the rest"),
        Candidate("s.swapcase()", "swaps the case of every letter"),
        Candidate("s[::-1]", "reverses the string"),
        Candidate(
            "s[: len(s) // 2][::-1] + s[len(s) // 2 :]", "reverses the first half of the string"
        ),
        Candidate(
            "s[: len(s) // 2] + s[len(s) // 2 :][::-1]", "reverses the second half of the string"
        ),
        Candidate(
            "digit_words(s)", "writes each digit of the string as an English word, space-separated"
        ),
        Candidate("''.join(ch for ch in s if not ch.isdigit())", "removes all digits"),
        Candidate("''.join(ch for ch in s if ch.isupper())", "keeps only the uppercase letters"),
        Candidate("''.join(s.split())", "removes all whitespace"),
        Candidate("s.strip()", "strips leading and trailing whitespace"),
        Candidate("word(len(s))", "returns the length of the string as an English number word"),
        Candidate("s[0]", "returns the first character"),
        Candidate("s[-1]", "returns the last character"),
        Candidate("mid(s)", "returns the middle character (the middle two for even lengths)"),
        Candidate("dedup(s)", "removes repeated characters, keeping the first occurrence of each"),
        Candidate("' '.join(w[::-1] for w in s.split())", "reverses each word"),
        Candidate(
            "word(sum(ch in VOWELS for ch in s))", "counts the vowels, as an English number word"
        ),
        Candidate(
            "word(sum(ch.isalpha() and ch not in VOWELS for ch in s))",
            "counts the consonants, as an English number word",
        ),
        Candidate(
            "word(sum(ch.isupper() for ch in s))",
            "counts uppercase letters, as an English number word",
        ),
        Candidate(
            "word(sum(ch.islower() for ch in s))",
            "counts lowercase letters, as an English number word",
        ),
        Candidate("reverse_vowels(s)", "reverses the order of the vowels in the string"),
        Candidate(
            "alternate_case(s)",
            "alternates case: uppercase at even positions, lowercase at odd ones",
        ),
        Candidate("replace_vowels(s, s[0])", "replaces every vowel with the first character"),
        Candidate("replace_vowels(s, s[-1])", "replaces every vowel with the last character"),
        Candidate(
            "replace_vowels(s, s[len(s) // 2])", "replaces every vowel with the middle character"
        ),
        Candidate("s + s[0]", "appends the first character to the end"),
        Candidate("s + s[-1]", "appends the last character again"),
        Candidate("s + s[len(s) // 2]", "appends the middle character to the end"),
        Candidate(
            "s if len(s) < 2 else s[-1] + s[1:-1] + s[0]", "swaps the first and last characters"
        ),
        Candidate(
            "ordinal(s[0])", "returns the alphabet position of the first character as a number word"
        ),
        Candidate(
            "ordinal(s[-1])", "returns the alphabet position of the last character as a number word"
        ),
        Candidate(
            "ordinal(s[len(s) // 2])",
            "returns the alphabet position of the middle character as a number word",
        ),
        Candidate(
            "caesar(s, len(s))",
            "shifts each letter forward in the alphabet by the string's length (Caesar shift)",
        ),
    ]
    for k in range(1, 26):
        c.append(
            Candidate(
                f"caesar(s, {k})",
                f"shifts each letter {k} places forward in the alphabet (Caesar shift by {k}, wrapping around, case kept)",
                2,
            )
        )
    for k in range(10):
        c.append(
            Candidate(
                f"s[: len(s) // 2] + '{k}' + s[len(s) // 2 :]",
                f"inserts the digit {k} in the middle of the string",
                2,
            )
        )
    for i in range(6):
        for j in range(i + 1, 7):
            c.append(
                Candidate(
                    f"swap(s, {i}, {j})",
                    f"swaps the characters at positions {i} and {j} (0-based) when both exist",
                    3,
                )
            )
    for ch in LETTERS:
        q = repr(ch)
        c += [
            Candidate(
                f"word(s.count({q}))", f"counts occurrences of {q}, as an English number word", 3
            ),
            Candidate(f"replace_vowels(s, {q})", f"replaces every vowel with {q}", 3),
            Candidate(
                f"s[: len(s) // 2] + {q} + s[len(s) // 2 :]",
                f"inserts {q} in the middle of the string",
                3,
            ),
            Candidate(
                f"s if s.endswith({q}) else s + {q}",
                f"appends {q} unless the string already ends with it",
                3,
            ),
            Candidate(f"s.replace({q}, '')", f"removes every {q}", 3),
            Candidate(f"' '.join(s.split({q}))", f"replaces every {q} with a space", 3),
        ]
    return c


def data_candidates(pairs: list[tuple[str, str]]) -> list[Candidate]:
    """Candidates whose parameters are read off the examples: a constant suffix or prefix, and a
    consistent character-by-character mapping."""
    out: list[Candidate] = []
    if pairs:
        x, y = pairs[0]
        if y.startswith(x) and len(y) > len(x):
            t = y[len(x) :]
            out.append(Candidate(f"s + {t!r}", f"appends {t!r} to the end of the string", 2))
        if y.endswith(x) and len(y) > len(x):
            t = y[: len(y) - len(x)]
            out.append(Candidate(f"{t!r} + s", f"prepends {t!r} to the string", 2))
    mapping: dict[str, str] = {}
    ok = bool(pairs)
    for x, y in pairs:
        if len(x) != len(y):
            ok = False
            break
        for a, b in zip(x, y, strict=True):
            if mapping.setdefault(a, b) != b:
                ok = False
                break
        if not ok:
            break
    if ok and any(a != b for a, b in mapping.items()):
        changed = {a: b for a, b in sorted(mapping.items()) if a != b}
        out.append(
            Candidate(
                f"''.join({changed!r}.get(ch, ch) for ch in s)",
                f"replaces characters one by one according to the mapping {changed}",
                5,
            )
        )
    return out
