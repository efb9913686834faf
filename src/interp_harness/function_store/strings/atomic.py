"""The 67 atomic string functions of FIND, with the released behaviour (FIND's
`make_strings/string_functions.py`).

Each function takes the input string first and its parameters after it; the two stochastic ones
(`add_order_to_inx`, `sub_order_to_inx`) also take a `random.Random`. Bugs of the released
functions are kept on purpose, since the released unit tests encode them; each is marked "FIND:".
Python's own `str` predicates (`isdigit`, `isalpha`, `islower`, ...) are used exactly where the
released functions use them, so non-ASCII input behaves (and fails) the same way.
"""

from __future__ import annotations

import random

from interp_harness.function_store.strings.numwords import DIGIT_WORDS, number_word

VOWELS = "aeiouAEIOU"
# FIND: lowercase 'a' is listed among the consonants (and 'A' is not); the GT keeps the typo.
CONSONANTS = "abcdfghjklmnpqrstvwxyzBCDFGHJKLMNPQRSTVWXYZ"
ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def _rot(c: str, k: int) -> str:
    """Caesar shift of one alphabetic char by k, keeping its case (non-ASCII letters are shifted
    by the same arithmetic, as in FIND)."""
    base = ord("a") if c.islower() else ord("A")
    return chr((ord(c) - base + k) % 26 + base)


def _rot_letters(s: str, k: int) -> str:
    return "".join(_rot(c, k) if c.isalpha() else c for c in s)


def _rot_at(s: str, i: int, k: int) -> str:
    """Shift the char at index i by k if it is a letter; otherwise leave s unchanged."""
    if not s[i].isalpha():
        return s
    return s[:i] + _rot(s[i], k) + s[i + 1 :]


def _replace_vowels(s: str, c: str) -> str:
    return "".join(c if ch in VOWELS else ch for ch in s)


def _ordinality(c: str) -> str:
    """Alphabet position (1..26) of a char as a word; 'zero' for a non-letter."""
    c = c.lower()
    if not c.isalpha():
        return "zero"
    return number_word(ALPHABET.index(c) + 1)  # FIND: non-ASCII letters raise ValueError


# --- case and order -----------------------------------------------------------------------


def convert_to_lowercase(s: str) -> str:
    return s.lower()


def convert_to_uppercase(s: str) -> str:
    return s.upper()


def capitalize_string(s: str) -> str:
    return s.capitalize()


def reverse_string(s: str) -> str:
    return s[::-1]


def reverse_string_first_half(s: str) -> str:
    h = len(s) // 2
    return s[:h][::-1] + s[h:]


def reverse_string_last_half(s: str) -> str:
    h = len(s) // 2
    return s[:h] + s[h:][::-1]


def reverse_words(s: str) -> str:
    return " ".join(w[::-1] for w in s.split())


def reverse_vowels(s: str) -> str:
    chars = list(s)
    i, j = 0, len(chars) - 1
    while i < j:
        if chars[i] in VOWELS and chars[j] in VOWELS:
            chars[i], chars[j] = chars[j], chars[i]
            i, j = i + 1, j - 1
        elif chars[i] not in VOWELS:
            i += 1
        else:
            j -= 1
    return "".join(chars)


def capitalize_alternating_letters(s: str) -> str:
    return "".join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(s))


# --- filtering ----------------------------------------------------------------------------


def extract_digits(s: str) -> str:
    # FIND: any char with isdigit() is looked up in the 0..9 table (KeyError for e.g. '²').
    return " ".join(DIGIT_WORDS[c] for c in s if c.isdigit())


def remove_digits(s: str) -> str:
    return "".join(c for c in s if not c.isdigit())


def extract_uppers(s: str) -> str:
    return "".join(c for c in s if c.isupper())


def remove_whitespace(s: str) -> str:
    return "".join(s.split())


def remove_duplicates(s: str) -> str:
    return "".join(dict.fromkeys(s))  # first occurrence of each char, in order


def string_strip(s: str) -> str:
    return s.strip()


def string_lstrip(s: str) -> str:
    return s.lstrip()


def string_rstrip(s: str) -> str:
    return s.rstrip()


# --- positions and counts (number words) --------------------------------------------------


def get_string_length(s: str) -> str:
    return number_word(len(s)) if len(s) <= 30 else "unknown"


def get_digit_indexes(s: str) -> str:
    # FIND: the result list is reset on every character, so only the last char survives; every
    # digit is still looked up on the way (an index > 30 raises KeyError even if it is not last).
    found: list[str] = []
    for c in s:
        found = []
        if c.isdigit():
            found.append(number_word(s.find(c)))
    return " ".join(found)


def get_alpha_indexes(s: str) -> str:
    return " ".join(number_word(s.find(c)) for c in s if c.isalpha())


def get_first_character(s: str) -> str:
    return s[0]


def get_last_character(s: str) -> str:
    return s[-1]


def get_mid_character(s: str) -> str:
    n = len(s)
    return s[n // 2 - 1 : n // 2 + 1] if n % 2 == 0 else s[n // 2]


def count_vowels(s: str) -> str:
    return number_word(sum(c in VOWELS for c in s))


def count_consonants(s: str) -> str:
    return number_word(sum(c in CONSONANTS for c in s))


def count_uppercase(s: str) -> str:
    return number_word(sum(c.isupper() for c in s))


def count_lowercase(s: str) -> str:
    return number_word(sum(c.islower() for c in s))


def count_character_repetitions(s: str, char: str) -> str:
    return number_word(sum(c == char for c in s))


def count_substring(s: str, substring: str) -> str:
    return number_word(s.count(substring))


def find_string(s: str, substring: str) -> str:
    i = s.find(substring)
    return "none" if i == -1 else number_word(i)


def get_first_character_ordinality(s: str) -> str:
    return _ordinality(s[0])


def get_last_character_ordinality(s: str) -> str:
    return _ordinality(s[-1])


def get_mid_character_ordinality(s: str) -> str:
    return _ordinality(s[len(s) // 2])


# --- vowel replacement --------------------------------------------------------------------


def replace_vowels_with_character(s: str, char: str) -> str:
    return _replace_vowels(s, char)


def replace_vowels_with_first(s: str) -> str:
    return _replace_vowels(s, s[0])


def replace_vowels_with_last(s: str) -> str:
    return _replace_vowels(s, s[-1])


def replace_vowels_with_mid(s: str) -> str:
    if len(s) < 2:
        return s
    return _replace_vowels(s, s[len(s) // 2])


def replace_vowels_with_ind_of_count(s: str) -> str:
    k = sum(c in VOWELS for c in s)
    return _replace_vowels(s, s[k - 1])  # k = 0 picks the last char; '' raises IndexError


# --- Caesar shifts ------------------------------------------------------------------------


def add_number_to_string(s: str, number: int) -> str:
    return _rot_letters(s, number)


def subtract_number_to_string(s: str, number: int) -> str:
    return _rot_letters(s, -number)


def add_len_to_string(s: str) -> str:
    return _rot_letters(s, len(s))


def _advance(s: str, inx: int, sign: int) -> str:
    if len(s) < inx + 1:
        return s
    order = ord(s[inx].lower()) - ord("a")  # may be negative for a non-letter; FIND keeps it
    # FIND: letters are shifted through their lowercase form, so they come out lowercase.
    return "".join(
        chr((ord(c.lower()) - ord("a") + sign * order) % 26 + ord("a")) if c.isalpha() else c
        for c in s
    )


def advance_by_character_order(s: str, inx: int) -> str:
    return _advance(s, inx, +1)


def substract_by_character_order(s: str, inx: int) -> str:
    return _advance(s, inx, -1)


def _shift_middle(s: str, k: int) -> str:
    n = len(s)
    if n % 2 == 0 or n < 3:
        return s
    return _rot_at(s, n // 2, k)


def add_number_to_middle(s: str, number: int) -> str:
    return _shift_middle(s, number)


def add_len_to_middle(s: str) -> str:
    return _shift_middle(s, len(s))


def subtract_middle_character(s: str, number: int) -> str:
    return _shift_middle(s, -number)


def add_order_to_inx(s: str, rng: random.Random) -> str:
    """Stochastic: a random index i, and the char there is shifted by i."""
    if len(s) < 2:
        return s
    i = rng.randint(0, len(s) - 1)
    return _rot_at(s, i, i)


def sub_order_to_inx(s: str, rng: random.Random) -> str:
    if len(s) < 2:
        return s
    i = rng.randint(0, len(s) - 1)
    return _rot_at(s, i, -i)


def add_order_of_inx1_to_inx2(s: str, inx1: int, inx2: int) -> str:
    if len(s) < inx1 + 1 or len(s) < inx2 + 1:
        return s
    return _rot_at(s, inx2, inx1)


def sub_order_of_inx1_to_inx2(s: str, inx1: int, inx2: int) -> str:
    # FIND: the released code adds (identical to add_order_of_inx1_to_inx2); kept for the GT.
    return add_order_of_inx1_to_inx2(s, inx1, inx2)


# --- insertion, removal, concatenation ----------------------------------------------------


def insert_number(s: str, number: int) -> str:
    h = len(s) // 2
    return s[:h] + str(number) + s[h:]


def add_letter_if_needed(s: str, letter: str) -> str:
    return s if s.endswith(letter) else s + letter


def insert_letter(s: str, letter: str) -> str:
    h = len(s) // 2
    return s[:h] + letter + s[h:]


def split_string(s: str, substring: str) -> str:
    return " ".join(s.split(substring))


def string_concatenate(s: str, new_string: str) -> str:
    return s + new_string


def remove_substring(s: str, substring: str) -> str:
    return s.replace(substring, "")


def replace_substring(s: str, old: str, new: str) -> str:
    return s.replace(old, new)


def duplicate_first_letter(s: str) -> str:
    return s + s[0]


def duplicate_last_letter(s: str) -> str:
    return s + s[-1]


def duplicate_mid_letter(s: str) -> str:
    return s + s[len(s) // 2]


def swap_first_last(s: str) -> str:
    if len(s) < 2:
        return s
    return s[-1] + s[1:-1] + s[0]


def swap_rand(s: str, ind1: int, ind2: int) -> str:
    if len(s) - 1 < ind1 or len(s) - 1 < ind2:
        return s
    chars = list(s)
    chars[ind1], chars[ind2] = s[ind2], s[ind1]
    return "".join(chars)


def map_string(s: str, mapping: dict[str, str]) -> str:
    # letters are looked up lowercased, so a mapped letter loses its case; others pass through
    return "".join(mapping.get(c.lower(), c) for c in s)


# --- single-letter shifts that may leave a-z ----------------------------------------------


def shift_last_letter_rand(s: str, rand: int) -> str:
    if s == "" or not s[-1].isalpha():
        return s
    if s[-1] in "zZ":
        return s[:-1] + ("a" if s[-1] == "z" else "A")
    return s[:-1] + chr(ord(s[-1]) + rand)  # FIND: no wrap-around, 'y'+5 gives '~'


def shift_first_letter_rand(s: str, rand: int) -> str:
    if s == "" or not s[0].isalpha():
        return s
    if s[0] in "zZ":
        return ("a" if s[0] == "z" else "A") + s[1:]
    return chr(ord(s[0]) + rand) + s[1:]


def shift_last_letter_predecessor_rand(s: str, rand: int) -> str:
    if s == "" or not s[-1].isalpha():
        return s
    if s[-1] in "aA":
        return s[:-1] + ("z" if s[-1] == "a" else "Z")
    return s[:-1] + chr(ord(s[-1]) - rand)


def shift_first_letter_predecessor_rand(s: str, rand: int) -> str:
    if s == "" or not s[0].isalpha():
        return s
    if s[0] in "aA":
        return ("z" if s[0] == "a" else "Z") + s[1:]
    return chr(ord(s[0]) - rand) + s[1:]
