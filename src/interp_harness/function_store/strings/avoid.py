"""Forbidden inner functions per outer function in compositions (FIND's `func2_avoid_dict`).

`AVOID_FIND` is the dict as the released generator parsed it, including two missing-comma typos
that glue neighbouring names together (so those inner functions were NOT excluded):
  "string_rstrip" "add_order_to_inx"   -> "string_rstripadd_order_to_inx"
  "get_digit_indexes" "get_alpha_indexes" -> "get_digit_indexesget_alpha_indexes"
`AVOID_FIXED` splits them again; find-gen uses it. Only membership is ever tested, so the values
are frozensets (FIND's lists also repeat `extract_digits` in some entries; that changes nothing).
"""

from __future__ import annotations

_TYPO_RSTRIP = "string_rstripadd_order_to_inx"
_TYPO_INDEXES = "get_digit_indexesget_alpha_indexes"
TYPO_FIXES: dict[str, tuple[str, str]] = {
    _TYPO_RSTRIP: ("string_rstrip", "add_order_to_inx"),
    _TYPO_INDEXES: ("get_digit_indexes", "get_alpha_indexes"),
}

# Inner functions whose output is a number word or otherwise makes a count/position outer
# degenerate; forbidden under every number-word producer/consumer.
_NUMBERISH = (
    "get_string_length",
    "convert_to_lowercase",
    "extract_digits",
    "remove_digits",
    "get_digit_indexes",
    "get_alpha_indexes",
    "count_vowels",
    "replace_vowels_with_ind_of_count",
    "count_consonants",
    "count_uppercase",
    "count_lowercase",
    "string_strip",
    "string_lstrip",
    "string_rstrip",
    "add_order_to_inx",
    "add_order_of_inx1_to_inx2",
    "sub_order_to_inx",
    "sub_order_of_inx1_to_inx2",
    "find_string",
    "map_string",
    "count_substring",
    "count_character_repetitions",
)


def _glue(names: tuple[str, ...], *typos: str) -> tuple[str, ...]:
    """Reproduce a missing-comma typo: replace the two names it merged by the merged string."""
    out = list(names)
    for typo in typos:
        a, b = TYPO_FIXES[typo]
        i = out.index(a)
        assert out[i + 1] == b
        out[i : i + 2] = [typo]
    return tuple(out)


_NUM_RSTRIP = _glue(_NUMBERISH, _TYPO_RSTRIP)
_NUM_BOTH = _glue(_NUMBERISH, _TYPO_RSTRIP, _TYPO_INDEXES)
_VOWEL_REPLACERS = (
    "replace_vowels_with_character",
    "replace_vowels_with_first",
    "replace_vowels_with_last",
    "replace_vowels_with_mid",
    "replace_vowels_with_ind_of_count",
    "reverse_vowels",
    "count_vowels",
)
_STRIPPERS = ("remove_whitespace", "string_strip", "string_lstrip", "string_rstrip")

# Outer functions whose only forbidden inner function is themselves.
_SELF_ONLY = (
    "capitalize_string",
    "reverse_string",
    "reverse_string_first_half",
    "reverse_string_last_half",
    "remove_duplicates",
    "reverse_words",
    "reverse_vowels",
    "capitalize_alternating_letters",
    "add_number_to_string",
    "advance_by_character_order",
    "substract_by_character_order",
    "add_len_to_string",
    "add_number_to_middle",
    "add_len_to_middle",
    "add_order_to_inx",
    "add_order_of_inx1_to_inx2",
    "sub_order_to_inx",
    "sub_order_of_inx1_to_inx2",
    "subtract_number_to_string",
    "subtract_middle_character",
    "insert_number",
    "add_letter_if_needed",
    "insert_letter",
    "split_string",
    "string_concatenate",
    "find_string",
    "remove_substring",
    "duplicate_first_letter",
    "duplicate_last_letter",
    "duplicate_mid_letter",
    "swap_first_last",
    "swap_rand",
    "map_string",
    "get_first_character_ordinality",
    "get_last_character_ordinality",
    "get_mid_character_ordinality",
    "replace_substring",
    "shift_last_letter_rand",
    "shift_first_letter_rand",
    "shift_last_letter_predecessor_rand",
    "shift_first_letter_predecessor_rand",
)

_AVOID: dict[str, tuple[str, ...]] = {
    "convert_to_lowercase": (
        "convert_to_lowercase",
        "convert_to_uppercase",
        "extract_uppers",
        "count_uppercase",
    ),
    "convert_to_uppercase": ("convert_to_uppercase", "convert_to_lowercase", "count_lowercase"),
    "extract_digits": _NUMBERISH,
    "remove_digits": ("remove_digits", "get_digit_indexes", "extract_digits"),
    "extract_uppers": ("extract_uppers", "count_lowercase"),
    "get_string_length": _NUMBERISH,
    "get_digit_indexes": _NUMBERISH,
    "get_alpha_indexes": _NUM_RSTRIP,
    **{
        name: (name, *_NUM_RSTRIP, "split_string", "remove_substring")
        for name in ("get_first_character", "get_last_character", "get_mid_character")
    },
    **{
        name: (name, "replace_vowels_with_character", *_NUM_BOTH)
        for name in (
            "count_vowels",
            "count_consonants",
            "count_uppercase",
            "count_lowercase",
            "count_character_repetitions",
            "count_substring",
        )
    },
    **{
        name: _VOWEL_REPLACERS
        for name in _VOWEL_REPLACERS
        if name != "reverse_vowels" and name != "count_vowels"
    },
    **{name: _STRIPPERS for name in _STRIPPERS},
    **{name: (name,) for name in _SELF_ONLY},
}

AVOID_FIND: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in _AVOID.items()}


def _fix(names: frozenset[str]) -> frozenset[str]:
    out: set[str] = set()
    for n in names:
        out.update(TYPO_FIXES.get(n, (n,)))
    return frozenset(out)


AVOID_FIXED: dict[str, frozenset[str]] = {k: _fix(v) for k, v in AVOID_FIND.items()}


def allowed(outer: str, inner: str, *, fixed: bool = True) -> bool:
    """Whether `outer(inner(s))` may be sampled (find-gen uses the fixed dict)."""
    table = AVOID_FIXED if fixed else AVOID_FIND
    return inner not in table.get(outer, frozenset())
