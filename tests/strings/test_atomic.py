"""Exact behaviour of the 67 atomic FIND string functions (`string_functions.py`). Expected values
are worked out by hand from FIND's code, bugs included."""

from __future__ import annotations

import random

import pytest

from interp_harness.function_store.strings import ATOMIC, ATOMIC_NAMES
from interp_harness.function_store.strings.numwords import NUMBER_WORDS, number_word
from interp_harness.function_store.strings.program import Step


def f(name: str, s: str, *args):
    return Step(name=name, args=list(args)).apply(s, random.Random(0))


# (function, input, params, expected)
CASES = [
    ("convert_to_lowercase", "HeLLo 1!", (), "hello 1!"),
    ("convert_to_uppercase", "HeLLo 1!", (), "HELLO 1!"),
    ("capitalize_string", "hELLO wORLD", (), "Hello world"),
    ("capitalize_string", "", (), ""),
    ("reverse_string", "abc d", (), "d cba"),
    ("reverse_string_first_half", "abcdef", (), "cbadef"),
    ("reverse_string_first_half", "abcde", (), "bacde"),
    ("reverse_string_last_half", "abcdef", (), "abcfed"),
    ("reverse_string_last_half", "abcde", (), "abedc"),
    ("extract_digits", "a1b22c", (), "one two two"),
    ("extract_digits", "abc", (), ""),
    ("extract_digits", "", (), ""),
    ("remove_digits", "a1b22c", (), "abc"),
    ("extract_uppers", "Hello World ABC", (), "HWABC"),
    ("remove_whitespace", " a b\tc\n ", (), "abc"),
    ("get_string_length", "hello", (), "five"),
    ("get_string_length", "", (), "zero"),
    ("get_string_length", "x" * 21, (), "twenty-one"),
    ("get_string_length", "x" * 30, (), "thirty"),
    ("get_string_length", "x" * 31, (), "unknown"),
    # get_digit_indexes bug: only the last character counts
    ("get_digit_indexes", "a1b2", (), "three"),
    ("get_digit_indexes", "a1b2c", (), ""),
    ("get_digit_indexes", "1a1", (), "zero"),
    ("get_digit_indexes", "", (), ""),
    ("get_alpha_indexes", "ab1a", (), "zero one zero"),
    ("get_alpha_indexes", "12", (), ""),
    ("get_first_character", "hello", (), "h"),
    ("get_last_character", "hello", (), "o"),
    ("get_mid_character", "abcde", (), "c"),
    ("get_mid_character", "abcd", (), "bc"),
    ("get_mid_character", "a", (), "a"),
    ("get_mid_character", "", (), ""),
    ("remove_duplicates", "banana", (), "ban"),
    ("remove_duplicates", "Aa a", (), "Aa "),
    ("reverse_words", "hello big world", (), "olleh gib dlrow"),
    ("reverse_words", "  two  spaces ", (), "owt secaps"),
    ("count_vowels", "Education", (), "five"),
    ("count_vowels", "rhythm", (), "zero"),
    # count_consonants typo: lowercase 'a' counts, uppercase 'A' does not; vowels e/o do not
    ("count_consonants", "banana", (), "six"),
    ("count_consonants", "BANANA", (), "three"),
    ("count_consonants", "hello!", (), "three"),
    ("count_uppercase", "Hello World", (), "two"),
    ("count_lowercase", "Hello World", (), "eight"),
    ("count_character_repetitions", "banana", ("a",), "three"),
    ("count_character_repetitions", "Banana", ("b",), "zero"),
    ("replace_vowels_with_character", "hello world", ("x",), "hxllx wxrld"),
    ("replace_vowels_with_character", "AEIOU", ("q",), "qqqqq"),
    ("replace_vowels_with_first", "banana", (), "bbnbnb"),
    ("replace_vowels_with_last", "hello", (), "hollo"),
    ("replace_vowels_with_mid", "hello", (), "hllll"),
    ("replace_vowels_with_mid", "a", (), "a"),
    ("replace_vowels_with_mid", "ab", (), "bb"),
    ("replace_vowels_with_ind_of_count", "hello", (), "helle"),
    ("replace_vowels_with_ind_of_count", "rhythm", (), "rhythm"),
    ("replace_vowels_with_ind_of_count", "aXe", (), "XXX"),
    ("reverse_vowels", "hello world", (), "hollo werld"),
    ("reverse_vowels", "Education", (), "odicatuEn"),
    ("capitalize_alternating_letters", "hello world", (), "HeLlO WoRlD"),
    ("string_strip", "  a b  ", (), "a b"),
    ("string_lstrip", "  a b  ", (), "a b  "),
    ("string_rstrip", "  a b  ", (), "  a b"),
    ("add_number_to_string", "abz XYZ 9!", (3,), "dec ABC 9!"),
    ("subtract_number_to_string", "abz XYZ", (3,), "xyw UVW"),
    # advance/substract: letters come out lowercase; the shift is the order of s[inx]
    ("advance_by_character_order", "Hello", (1,), "lipps"),
    ("advance_by_character_order", "Hi 5", (0,), "op 5"),
    ("advance_by_character_order", "ABC", (3,), "ABC"),
    ("advance_by_character_order", "a1b", (1,), "e1f"),  # ord('1') - 97 = -48
    ("substract_by_character_order", "Hello", (1,), "dahhk"),
    ("add_len_to_string", "abc", (), "def"),
    ("add_len_to_string", "Zz", (), "Bb"),
    ("add_number_to_middle", "abcde", (2,), "abede"),
    ("add_number_to_middle", "abcd", (2,), "abcd"),
    ("add_number_to_middle", "a1c", (2,), "a1c"),
    ("add_number_to_middle", "xYz", (3,), "xBz"),
    ("add_number_to_middle", "a", (3,), "a"),
    ("add_len_to_middle", "abcde", (), "abhde"),
    ("add_len_to_middle", "xyz", (), "xbz"),
    ("subtract_middle_character", "abcde", (3,), "abzde"),
    ("add_order_of_inx1_to_inx2", "abcdef", (2, 4), "abcdgf"),
    ("add_order_of_inx1_to_inx2", "abc", (2, 5), "abc"),
    ("add_order_of_inx1_to_inx2", "ab3d", (1, 2), "ab3d"),
    # sub_order_of_inx1_to_inx2 bug: it adds, like the add version
    ("sub_order_of_inx1_to_inx2", "abcdef", (2, 4), "abcdgf"),
    ("add_order_to_inx", "q", (), "q"),
    ("sub_order_to_inx", "", (), ""),
    ("insert_number", "abcd", (7,), "ab7cd"),
    ("insert_number", "abc", (7,), "a7bc"),
    ("insert_number", "", (7,), "7"),
    ("add_letter_if_needed", "cat", ("s",), "cats"),
    ("add_letter_if_needed", "cats", ("s",), "cats"),
    ("add_letter_if_needed", "catS", ("s",), "catSs"),
    ("insert_letter", "abcd", ("X",), "abXcd"),
    ("split_string", "banana", ("n",), "ba a a"),
    ("split_string", "Banana", ("b",), "Banana"),
    ("string_concatenate", "abc", ("XyZ",), "abcXyZ"),
    ("count_substring", "banana", ("a",), "three"),
    ("find_string", "banana", ("n",), "two"),
    ("find_string", "banana", ("z",), "none"),
    ("remove_substring", "banana", ("a",), "bnn"),
    ("replace_substring", "banana", ("a", "o"), "bonono"),
    ("duplicate_first_letter", "abc", (), "abca"),
    ("duplicate_last_letter", "abc", (), "abcc"),
    ("duplicate_mid_letter", "abcd", (), "abcdc"),
    ("swap_first_last", "hello", (), "oellh"),
    ("swap_first_last", "a", (), "a"),
    ("swap_first_last", "ab", (), "ba"),
    ("swap_rand", "abcdef", (1, 4), "aecdbf"),
    ("swap_rand", "abc", (1, 5), "abc"),
    ("get_first_character_ordinality", "Hello", (), "eight"),
    ("get_first_character_ordinality", "1abc", (), "zero"),
    ("get_last_character_ordinality", "abcZ", (), "twenty-six"),
    ("get_mid_character_ordinality", "abcde", (), "three"),
    ("get_mid_character_ordinality", "abcd", (), "three"),
    ("shift_last_letter_rand", "abc", (2,), "abe"),
    ("shift_last_letter_rand", "abz", (2,), "aba"),
    ("shift_last_letter_rand", "abZ", (2,), "abA"),
    ("shift_last_letter_rand", "ab1", (2,), "ab1"),
    ("shift_last_letter_rand", "", (2,), ""),
    ("shift_last_letter_rand", "aby", (5,), "ab~"),  # leaves a-z: 'y' + 5 is '~'
    ("shift_first_letter_rand", "abc", (2,), "cbc"),
    ("shift_first_letter_rand", "zbc", (2,), "abc"),
    ("shift_first_letter_rand", "Xbc", (5,), "]bc"),
    ("shift_last_letter_predecessor_rand", "abc", (2,), "aba"),
    ("shift_last_letter_predecessor_rand", "xya", (3,), "xyz"),
    ("shift_last_letter_predecessor_rand", "xyA", (3,), "xyZ"),
    ("shift_last_letter_predecessor_rand", "abC", (5,), "ab>"),
    ("shift_first_letter_predecessor_rand", "dog", (3,), "aog"),
    ("shift_first_letter_predecessor_rand", "apple", (3,), "zpple"),
    ("shift_first_letter_predecessor_rand", "Bob", (4,), ">ob"),
    ("shift_first_letter_predecessor_rand", "1ab", (4,), "1ab"),
]

_SHIFT_BY_ONE = {c: chr((ord(c) - 97 + 1) % 26 + 97) for c in "abcdefghijklmnopqrstuvwxyz"}


@pytest.mark.parametrize(("name", "s", "args", "expected"), CASES)
def test_atomic_exact(name, s, args, expected):
    assert f(name, s, *args) == expected


def test_map_string_lowercases_mapped_letters_and_keeps_others():
    assert f("map_string", "Hello, World", _SHIFT_BY_ONE) == "ifmmp, xpsme"


# (function, input, params, exception type)
RAISES = [
    ("get_first_character", "", (), IndexError),
    ("get_last_character", "", (), IndexError),
    ("replace_vowels_with_first", "", (), IndexError),
    ("replace_vowels_with_last", "", (), IndexError),
    ("replace_vowels_with_ind_of_count", "", (), IndexError),
    ("duplicate_first_letter", "", (), IndexError),
    ("duplicate_last_letter", "", (), IndexError),
    ("duplicate_mid_letter", "", (), IndexError),
    ("get_first_character_ordinality", "", (), IndexError),
    ("get_last_character_ordinality", "", (), IndexError),
    ("get_mid_character_ordinality", "", (), IndexError),
    (
        "get_first_character_ordinality",
        "éa",
        (),
        ValueError,
    ),  # alphabet.index of a non-ASCII letter
    ("extract_digits", "x²", (), KeyError),  # '²'.isdigit() but not in the 0..9 table
    # number words stop at thirty
    ("count_vowels", "a" * 31, (), KeyError),
    ("count_consonants", "b" * 31, (), KeyError),
    ("count_uppercase", "B" * 31, (), KeyError),
    ("count_lowercase", "b" * 31, (), KeyError),
    ("count_character_repetitions", "q" * 31, ("q",), KeyError),
    ("count_substring", "x" * 31, ("x",), KeyError),
    ("find_string", "x" * 31 + "q", ("q",), KeyError),
    ("get_alpha_indexes", "x" * 31 + "b", (), KeyError),
    # the digit at index 31 is looked up although it is not the last character
    ("get_digit_indexes", "x" * 31 + "5y", (), KeyError),
]


@pytest.mark.parametrize(("name", "s", "args", "exc"), RAISES)
def test_atomic_raises(name, s, args, exc):
    with pytest.raises(exc):
        f(name, s, *args)


def test_every_atomic_function_has_a_case():
    covered = {c[0] for c in CASES} | {"map_string"}
    assert covered == set(ATOMIC_NAMES)
    assert len(ATOMIC_NAMES) == 67


def test_number_words():
    assert len(NUMBER_WORDS) == 31
    assert [number_word(n) for n in (0, 13, 20, 21, 29, 30)] == [
        "zero",
        "thirteen",
        "twenty",
        "twenty-one",
        "twenty-nine",
        "thirty",
    ]
    with pytest.raises(KeyError):
        number_word(31)
    with pytest.raises(KeyError):
        number_word(-1)


class _FixedIndex:
    """Stands in for the RNG: always picks index i."""

    def __init__(self, i: int) -> None:
        self.i = i

    def randint(self, a: int, b: int) -> int:
        assert (a, b) == (0, 9)  # the index is drawn over the whole string "abcdefghiJ"
        return self.i


@pytest.mark.parametrize(
    ("i", "add", "sub"),
    [
        (0, "abcdefghiJ", "abcdefghiJ"),
        (3, "abcgefghiJ", "abcaefghiJ"),
        (9, "abcdefghiS", "abcdefghiA"),
    ],
)
def test_order_to_inx_shifts_the_drawn_index_by_itself(i, add, sub):
    assert ATOMIC["add_order_to_inx"].fn("abcdefghiJ", _FixedIndex(i)) == add
    assert ATOMIC["sub_order_to_inx"].fn("abcdefghiJ", _FixedIndex(i)) == sub


def test_order_to_inx_is_stochastic():
    rng = random.Random(1)
    outs = {ATOMIC["add_order_to_inx"].fn("abcdefghij", rng) for _ in range(100)}
    assert len(outs) > 3
