"""The asked programs of `circuits-lib`: tracr's library programs, each with the vocabulary and
length it is compiled for, and a description of its input-to-output function in our words
(hidden: it is the target's ground-truth description). Build time only (imports tracr)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

LETTERS = ["a", "b", "c", "d"]
DIGITS = [1, 2, 3, 4, 5]


@dataclass(frozen=True)
class LibraryProgram:
    name: str
    make: Callable[[], Any]  # () -> a RASP SOp
    vocab: list[Any]
    max_len: int
    description: str


def _lib() -> Any:
    from tracr.compiler import lib

    return lib


def _tokens() -> Any:
    from tracr.rasp import rasp

    return rasp.tokens


def _length() -> Any:
    from tracr.rasp import rasp

    return rasp.categorical(_lib().make_length())


def _frac_prevs() -> Any:
    return _lib().make_frac_prevs(_tokens() == "x")


LIBRARY: dict[str, LibraryProgram] = {
    p.name: p
    for p in (
        LibraryProgram(
            "length",
            _length,
            LETTERS,
            5,
            "every position outputs the length of the input (the number of tokens)",
        ),
        LibraryProgram(
            "frac_prevs",
            _frac_prevs,
            ["x", "y", "z"],
            5,
            "each position outputs the fraction of the tokens up to and including it that are "
            '"x" (a number between 0 and 1)',
        ),
        LibraryProgram(
            "reverse",
            lambda: _lib().make_reverse(_tokens()),
            LETTERS,
            5,
            "the input reversed: position i outputs the token at position n-1-i",
        ),
        LibraryProgram(
            "sort",
            lambda: _lib().make_sort(_tokens(), _tokens(), max_seq_len=5, min_key=1),
            DIGITS,
            5,
            "the tokens sorted in ascending order (repeated tokens kept, equal ones in input "
            "order)",
        ),
        LibraryProgram(
            "sort_unique",
            lambda: _lib().make_sort_unique(_tokens(), _tokens()),
            DIGITS,
            5,
            "the tokens sorted in ascending order, for inputs without repeated tokens; where a "
            "token repeats, some positions have no output",
        ),
        LibraryProgram(
            "hist",
            lambda: _lib().make_hist(),
            LETTERS,
            5,
            "each position outputs how many times its own token occurs in the whole input",
        ),
        LibraryProgram(
            "count_less_freq",
            lambda: _lib().make_count_less_freq(2),
            LETTERS,
            5,
            "every position outputs the number of positions whose token occurs at most twice "
            "in the input",
        ),
        LibraryProgram(
            "sort_freq",
            lambda: _lib().make_sort_freq(5),
            LETTERS,
            5,
            "the tokens sorted by how often they occur, most frequent first (equally frequent "
            "tokens in input order)",
        ),
        LibraryProgram(
            "pair_balance",
            lambda: _lib().make_pair_balance(_tokens(), "(", ")"),
            ["(", ")", "a"],
            6,
            'each position outputs (number of "(" minus number of ")") among the tokens up to '
            "and including it, divided by the position's 1-based index",
        ),
        LibraryProgram(
            "shuffle_dyck",
            lambda: _lib().make_shuffle_dyck(["()", "{}"]),
            ["(", ")", "{", "}"],
            6,
            'every position outputs 1 if the input is balanced for both bracket kinds "()" and '
            '"{}" taken separately (each kind\'s count never goes negative and ends at 0), else 0',
        ),
    )
}


def evaluate(program: Any, x: list[Any]) -> list[Any]:
    """RASP's own evaluation of the program on one input (the reference function)."""
    from tracr.rasp import rasp

    return list(rasp.evaluate(program, x))
