"""The atomic string functions as data: parameter kind, sampler, and a one-sentence description.

Order follows FIND's sampling list (`string_functions.py`); `INNER_NAMES` is its 64-entry inner
list for compositions (the atomic list without the four single-character getters and map_string,
with remove_digits twice).
"""

from __future__ import annotations

import random
import string as _string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from interp_harness.function_store.strings import atomic as A

Args = list[Any]  # JSON-safe positional parameters, e.g. [], [3], ["x"], ["a", "b"], [{...}]


def _q(c: str) -> str:
    return repr(c)


def _letters(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_string.ascii_letters) for _ in range(n))


def _distinct_pair(rng: random.Random, draw: Callable[[], Any]) -> list[Any]:
    a, b = draw(), draw()
    while b == a:
        b = draw()
    return [a, b]


# Parameter kinds and their samplers (FIND's `sample_single_f`).
SAMPLERS: dict[str, Callable[[random.Random], Args]] = {
    "none": lambda rng: [],
    "number": lambda rng: [rng.randint(1, 9)],
    "letter": lambda rng: [rng.choice(_string.ascii_letters)],
    "concat": lambda rng: [_letters(rng, rng.randint(1, 5))],
    "letter_pair": lambda rng: _distinct_pair(rng, lambda: rng.choice(_string.ascii_letters)),
    "index_pair": lambda rng: _distinct_pair(rng, lambda: rng.randint(0, 9)),
    "mapping": lambda rng: [
        dict(zip(_string.ascii_lowercase, rng.sample(_string.ascii_lowercase, 26), strict=True))
    ],
    "shift": lambda rng: [rng.randint(0, 25)],
}


@dataclass(frozen=True)
class AtomicSpec:
    name: str
    fn: Callable[..., str]
    params: str  # key of SAMPLERS
    describe: Callable[[Args], str]  # "reverses the string" (a verb phrase, no subject)
    stochastic: bool = False

    def sample_args(self, rng: random.Random) -> Args:
        return SAMPLERS[self.params](rng)

    def check_args(self, args: Sequence[Any]) -> None:
        n = {"none": 0, "letter_pair": 2, "index_pair": 2}.get(self.params, 1)
        if len(args) != n:
            raise ValueError(f"{self.name} takes {n} parameter(s), got {list(args)!r}")


def _word(what: str) -> str:
    return f"returns {what} as an English number word (zero to thirty)"


_SPECS: list[AtomicSpec] = [
    AtomicSpec(
        "convert_to_lowercase",
        A.convert_to_lowercase,
        "none",
        lambda a: "converts the string to lowercase",
    ),
    AtomicSpec(
        "convert_to_uppercase",
        A.convert_to_uppercase,
        "none",
        lambda a: "converts the string to uppercase",
    ),
    AtomicSpec(
        "capitalize_string",
        A.capitalize_string,
        "none",
        lambda a: "capitalizes the first character and lowercases the rest",
    ),
    AtomicSpec("reverse_string", A.reverse_string, "none", lambda a: "reverses the string"),
    AtomicSpec(
        "reverse_string_first_half",
        A.reverse_string_first_half,
        "none",
        lambda a: (
            "reverses the first half of the string (the first len//2 characters) and keeps the rest"
        ),
    ),
    AtomicSpec(
        "reverse_string_last_half",
        A.reverse_string_last_half,
        "none",
        lambda a: "keeps the first len//2 characters and reverses the rest of the string",
    ),
    AtomicSpec(
        "extract_digits",
        A.extract_digits,
        "none",
        lambda a: (
            "keeps only the digits, each written as an English word (0 -> zero), separated by spaces"
        ),
    ),
    AtomicSpec("remove_digits", A.remove_digits, "none", lambda a: "removes every digit"),
    AtomicSpec(
        "extract_uppers", A.extract_uppers, "none", lambda a: "keeps only the uppercase letters"
    ),
    AtomicSpec(
        "remove_whitespace", A.remove_whitespace, "none", lambda a: "removes all whitespace"
    ),
    AtomicSpec(
        "get_string_length",
        A.get_string_length,
        "none",
        lambda a: _word("the length of the string") + ", or 'unknown' above thirty",
    ),
    AtomicSpec(
        "get_digit_indexes",
        A.get_digit_indexes,
        "none",
        lambda a: (
            "returns, if the last character is a digit, the index of that digit's first occurrence as a number word, and otherwise an empty string"
        ),
    ),
    AtomicSpec(
        "get_alpha_indexes",
        A.get_alpha_indexes,
        "none",
        lambda a: (
            "replaces each letter by the index of its first occurrence in the string, written as a number word, space-separated, dropping all other characters"
        ),
    ),
    AtomicSpec(
        "get_first_character",
        A.get_first_character,
        "none",
        lambda a: "returns the first character",
    ),
    AtomicSpec(
        "get_last_character", A.get_last_character, "none", lambda a: "returns the last character"
    ),
    AtomicSpec(
        "get_mid_character",
        A.get_mid_character,
        "none",
        lambda a: "returns the middle character (the middle two characters for an even length)",
    ),
    AtomicSpec(
        "remove_duplicates",
        A.remove_duplicates,
        "none",
        lambda a: "removes repeated characters, keeping the first occurrence of each",
    ),
    AtomicSpec(
        "reverse_words",
        A.reverse_words,
        "none",
        lambda a: (
            "reverses each whitespace-separated word in place and joins the words with single spaces"
        ),
    ),
    AtomicSpec("count_vowels", A.count_vowels, "none", lambda a: _word("the number of vowels")),
    AtomicSpec(
        "replace_vowels_with_character",
        A.replace_vowels_with_character,
        "letter",
        lambda a: f"replaces every vowel with {_q(a[0])}",
    ),
    AtomicSpec(
        "replace_vowels_with_first",
        A.replace_vowels_with_first,
        "none",
        lambda a: "replaces every vowel with the first character of the string",
    ),
    AtomicSpec(
        "replace_vowels_with_last",
        A.replace_vowels_with_last,
        "none",
        lambda a: "replaces every vowel with the last character of the string",
    ),
    AtomicSpec(
        "replace_vowels_with_mid",
        A.replace_vowels_with_mid,
        "none",
        lambda a: (
            "replaces every vowel with the character at index len//2 (strings shorter than two characters are unchanged)"
        ),
    ),
    AtomicSpec(
        "replace_vowels_with_ind_of_count",
        A.replace_vowels_with_ind_of_count,
        "none",
        lambda a: (
            "replaces every vowel with the character whose 1-based position equals the number of vowels (the last character if there are none)"
        ),
    ),
    AtomicSpec(
        "reverse_vowels",
        A.reverse_vowels,
        "none",
        lambda a: "reverses the order of the vowels, leaving other characters in place",
    ),
    AtomicSpec(
        "capitalize_alternating_letters",
        A.capitalize_alternating_letters,
        "none",
        lambda a: "uppercases characters at even positions and lowercases those at odd positions",
    ),
    AtomicSpec(
        "count_consonants",
        A.count_consonants,
        "none",
        lambda a: _word(
            "the number of consonants (lowercase 'a' is also counted, uppercase 'A' is not)"
        ),
    ),
    AtomicSpec(
        "count_uppercase",
        A.count_uppercase,
        "none",
        lambda a: _word("the number of uppercase letters"),
    ),
    AtomicSpec(
        "count_lowercase",
        A.count_lowercase,
        "none",
        lambda a: _word("the number of lowercase letters"),
    ),
    AtomicSpec(
        "count_character_repetitions",
        A.count_character_repetitions,
        "letter",
        lambda a: _word(f"the number of occurrences of {_q(a[0])}"),
    ),
    AtomicSpec(
        "string_strip", A.string_strip, "none", lambda a: "strips leading and trailing whitespace"
    ),
    AtomicSpec("string_lstrip", A.string_lstrip, "none", lambda a: "strips leading whitespace"),
    AtomicSpec("string_rstrip", A.string_rstrip, "none", lambda a: "strips trailing whitespace"),
    AtomicSpec(
        "add_number_to_string",
        A.add_number_to_string,
        "number",
        lambda a: (
            f"shifts every letter {a[0]} places forward in the alphabet (wrapping around, keeping case)"
        ),
    ),
    AtomicSpec(
        "advance_by_character_order",
        A.advance_by_character_order,
        "number",
        lambda a: (
            f"lowercases every letter and shifts it forward (wrapping around) by the alphabet position (a = 0) of the character at index {a[0]}, leaving strings of {a[0]} or fewer characters unchanged"
        ),
    ),
    AtomicSpec(
        "substract_by_character_order",
        A.substract_by_character_order,
        "number",
        lambda a: (
            f"lowercases every letter and shifts it backward (wrapping around) by the alphabet position (a = 0) of the character at index {a[0]}, leaving strings of {a[0]} or fewer characters unchanged"
        ),
    ),
    AtomicSpec(
        "add_len_to_string",
        A.add_len_to_string,
        "none",
        lambda a: (
            "shifts every letter forward in the alphabet by the length of the string (wrapping around, keeping case)"
        ),
    ),
    AtomicSpec(
        "add_number_to_middle",
        A.add_number_to_middle,
        "number",
        lambda a: (
            f"shifts the middle character {a[0]} places forward in the alphabet when the length is odd and at least three and that character is a letter"
        ),
    ),
    AtomicSpec(
        "add_len_to_middle",
        A.add_len_to_middle,
        "none",
        lambda a: (
            "shifts the middle character forward in the alphabet by the string's length when the length is odd and at least three and that character is a letter"
        ),
    ),
    AtomicSpec(
        "add_order_to_inx",
        A.add_order_to_inx,
        "none",
        lambda a: (
            "picks a random position i and shifts the letter there i places forward in the alphabet (random on every call; strings shorter than two are unchanged)"
        ),
        stochastic=True,
    ),
    AtomicSpec(
        "add_order_of_inx1_to_inx2",
        A.add_order_of_inx1_to_inx2,
        "index_pair",
        lambda a: (
            f"shifts the letter at index {a[1]} forward by {a[0]} places in the alphabet, when the string is long enough to have indexes {a[0]} and {a[1]}"
        ),
    ),
    AtomicSpec(
        "sub_order_to_inx",
        A.sub_order_to_inx,
        "none",
        lambda a: (
            "picks a random position i and shifts the letter there i places backward in the alphabet (random on every call; strings shorter than two are unchanged)"
        ),
        stochastic=True,
    ),
    # FIND's "sub" variant adds, like the add variant; the description says what it does.
    AtomicSpec(
        "sub_order_of_inx1_to_inx2",
        A.sub_order_of_inx1_to_inx2,
        "index_pair",
        lambda a: (
            f"shifts the letter at index {a[1]} forward by {a[0]} places in the alphabet, when the string is long enough to have indexes {a[0]} and {a[1]}"
        ),
    ),
    AtomicSpec(
        "subtract_number_to_string",
        A.subtract_number_to_string,
        "number",
        lambda a: (
            f"shifts every letter {a[0]} places backward in the alphabet (wrapping around, keeping case)"
        ),
    ),
    AtomicSpec(
        "subtract_middle_character",
        A.subtract_middle_character,
        "number",
        lambda a: (
            f"shifts the middle character {a[0]} places backward in the alphabet when the length is odd and at least three and that character is a letter"
        ),
    ),
    AtomicSpec(
        "insert_number",
        A.insert_number,
        "number",
        lambda a: f"inserts the digit {a[0]} at index len//2",
    ),
    AtomicSpec(
        "add_letter_if_needed",
        A.add_letter_if_needed,
        "letter",
        lambda a: f"appends {_q(a[0])} unless the string already ends with it",
    ),
    AtomicSpec(
        "insert_letter", A.insert_letter, "letter", lambda a: f"inserts {_q(a[0])} at index len//2"
    ),
    AtomicSpec(
        "split_string",
        A.split_string,
        "letter",
        lambda a: f"replaces every {_q(a[0])} with a space",
    ),
    AtomicSpec(
        "string_concatenate", A.string_concatenate, "concat", lambda a: f"appends {_q(a[0])}"
    ),
    AtomicSpec(
        "count_substring",
        A.count_substring,
        "letter",
        lambda a: _word(f"the number of occurrences of {_q(a[0])}"),
    ),
    AtomicSpec(
        "find_string",
        A.find_string,
        "letter",
        lambda a: (
            f"returns the index of the first {_q(a[0])} as an English number word, or 'none' if absent"
        ),
    ),
    AtomicSpec(
        "remove_substring", A.remove_substring, "letter", lambda a: f"removes every {_q(a[0])}"
    ),
    AtomicSpec(
        "duplicate_first_letter",
        A.duplicate_first_letter,
        "none",
        lambda a: "appends a copy of the first character",
    ),
    AtomicSpec(
        "duplicate_last_letter",
        A.duplicate_last_letter,
        "none",
        lambda a: "appends a copy of the last character",
    ),
    AtomicSpec(
        "duplicate_mid_letter",
        A.duplicate_mid_letter,
        "none",
        lambda a: "appends a copy of the character at index len//2",
    ),
    AtomicSpec(
        "swap_first_last",
        A.swap_first_last,
        "none",
        lambda a: "swaps the first and last characters",
    ),
    AtomicSpec(
        "swap_rand",
        A.swap_rand,
        "index_pair",
        lambda a: f"swaps the characters at indexes {a[0]} and {a[1]} when both exist",
    ),
    AtomicSpec(
        "map_string",
        A.map_string,
        "mapping",
        lambda a: (
            "replaces every letter by a fixed substitution letter (output lowercase): "
            + ", ".join(f"{k}->{v}" for k, v in a[0].items())
        ),
    ),
    AtomicSpec(
        "get_first_character_ordinality",
        A.get_first_character_ordinality,
        "none",
        lambda a: (
            "returns the alphabet position (a = one) of the first character as a number word, 'zero' if it is not a letter"
        ),
    ),
    AtomicSpec(
        "get_last_character_ordinality",
        A.get_last_character_ordinality,
        "none",
        lambda a: (
            "returns the alphabet position (a = one) of the last character as a number word, 'zero' if it is not a letter"
        ),
    ),
    AtomicSpec(
        "get_mid_character_ordinality",
        A.get_mid_character_ordinality,
        "none",
        lambda a: (
            "returns the alphabet position (a = one) of the character at index len//2 as a number word, 'zero' if it is not a letter"
        ),
    ),
    AtomicSpec(
        "replace_substring",
        A.replace_substring,
        "letter_pair",
        lambda a: f"replaces every {_q(a[0])} with {_q(a[1])}",
    ),
    AtomicSpec(
        "shift_last_letter_rand",
        A.shift_last_letter_rand,
        "shift",
        lambda a: (
            f"moves the last character, when it is a letter, {a[0]} code points forward (which can leave the alphabet), except that z/Z becomes a/A"
        ),
    ),
    AtomicSpec(
        "shift_first_letter_rand",
        A.shift_first_letter_rand,
        "shift",
        lambda a: (
            f"moves the first character, when it is a letter, {a[0]} code points forward (which can leave the alphabet), except that z/Z becomes a/A"
        ),
    ),
    AtomicSpec(
        "shift_last_letter_predecessor_rand",
        A.shift_last_letter_predecessor_rand,
        "shift",
        lambda a: (
            f"moves the last character, when it is a letter, {a[0]} code points back (which can leave the alphabet), except that a/A becomes z/Z"
        ),
    ),
    AtomicSpec(
        "shift_first_letter_predecessor_rand",
        A.shift_first_letter_predecessor_rand,
        "shift",
        lambda a: (
            f"moves the first character, when it is a letter, {a[0]} code points back (which can leave the alphabet), except that a/A becomes z/Z"
        ),
    ),
]

ATOMIC: dict[str, AtomicSpec] = {s.name: s for s in _SPECS}
ATOMIC_NAMES: tuple[str, ...] = tuple(ATOMIC)

# Inner (function2) list of compositions: the atomic list without the four below, and with
# remove_digits listed twice (so it is drawn with double weight), as in FIND.
_NOT_INNER = {"get_first_character", "get_last_character", "get_mid_character", "map_string"}
INNER_NAMES: tuple[str, ...] = tuple(n for n in ATOMIC_NAMES if n not in _NOT_INNER) + (
    "remove_digits",
)
