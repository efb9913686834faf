"""The linear lexers agree with what they replace (shlex; FIND's recursive regex) on random
inputs built from the characters that matter, and stay linear on the inputs that stalled."""

import random
import re
import shlex
import time

import pytest
import regex

from interp_harness.agents.protocol.lexer import first_command, split_words

FIND_PATTERN = regex.compile(r"([A-Z]+\(((?:[^()\"']|(?:\"[^\"]*\")|(?:'[^']*')|\((?1)*\))*)\))")


def _shlex(text: str, *, commas: bool, operators: bool) -> list[str]:
    if operators:
        lex = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
    else:
        lex = shlex.shlex(text, posix=True)
    lex.whitespace_split = True
    lex.commenters = ""
    if commas:
        lex.whitespace += ","
    words = []
    for tok in lex:
        if operators and tok and set(tok) <= set(";&|<>()"):
            break
        words.append(tok)
    return words


QUOTED_OPERATOR = re.compile(r"""[\\'"][;&|<>()]|[;&|<>()]['"]""")


def test_quoted_operators_are_words():
    # bash hands a quoted or escaped operator to `python` as an argument (the shlex-based parser
    # took `"("` for a control operator and dropped everything from there)
    assert split_words('f.py "(" 2', stop_at_operators=True) == ["f.py", "(", "2"]
    assert split_words("f.py \\; 2; cat x", stop_at_operators=True) == ["f.py", ";", "2"]
    assert split_words("f.py 'a|b' 2|cat", stop_at_operators=True) == ["f.py", "a|b", "2"]


def _outcome(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except ValueError as e:
        return ("error", str(e))


@pytest.mark.parametrize("commas", [False, True])
@pytest.mark.parametrize("operators", [False, True])
def test_split_words_agrees_with_shlex(commas, operators):
    rng = random.Random(f"{commas}{operators}")
    alphabet = "ab 1,\t\n'\"\\;&|<>()#é"
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        if operators and commas:
            continue  # find-compat never splits on commas
        if operators and QUOTED_OPERATOR.search(text):
            continue  # shlex cannot tell `"("` from `(`: see test_quoted_operators_are_words
        want = _outcome(_shlex, text, commas=commas, operators=operators)
        got = _outcome(split_words, text, commas=commas, stop_at_operators=operators)
        assert got == want, repr(text)


def test_first_command_agrees_with_find_regex():
    rng = random.Random(0)
    alphabet = ["P", "X", "(", ")", "(", ")", '"', "'", "a", " ", "PYTHON("]
    for _ in range(30_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        found = FIND_PATTERN.findall(text)
        want = found[0] if found else None
        assert first_command(text) == want, repr(text)


@pytest.mark.parametrize(
    "fn",
    [
        lambda: split_words("a" * 1_500_000, commas=True),
        lambda: split_words('"' + "a\\b" * 300_000 + '"'),
        lambda: first_command("PYTHON(" + "X(" * 50_000),
        lambda: first_command("PYTHON(" + "X(" * 50_000 + ")" * 50_001),
        lambda: first_command(("A(" + "'" * 3) * 20_000),
    ],
    ids=["long-word", "escapes", "open-nesting", "deep-nesting", "quotes"],
)
def test_no_quadratic_stall(fn):
    # A stall guard, not a speed test: shlex took 35 s on a 1.5 MB word, FIND's regex 28 s on
    # 16,000 nested `X(`. CPU time of this process, so a busy machine does not fail it.
    t = time.process_time()
    fn()
    assert time.process_time() - t < 3.0
