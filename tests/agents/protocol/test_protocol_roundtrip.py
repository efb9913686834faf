"""What the protocol's writers produce, its readers read back (interp_harness.agents.protocol), in both modes.

Four directions, each a writer and its reader in the one shared module:
- the agent's command (`command` + `quote_input`) -> the harness's `parse_message`;
- the harness's reply (`format_reply`, with every registered benchmark's reply decimals) -> the
  agent's `parse_pairs`;
- a target's value (`format_value`, FIND's `str()`) -> `parse_number` / `parse_value`, which the
  evaluator and the agents both use;
- the agent's final answer (`answer`) -> the evaluator's `parse_answer` (both readers).

Values cover what the benchmarks print: numbers (negative, nan, inf, exponent forms, complex,
numpy scalars and 0-d arrays), text with quotes, commas, parentheses, newlines and non-ASCII
letters (string functions), words with a leading space (relations), scores (entities).
"""

from __future__ import annotations

import math
import string

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from interp_harness.agents.protocol import (
    DEFAULT_PATH,
    MODES,
    PREFIX,
    answer,
    command,
    format_reply,
    format_value,
    parse_answer,
    parse_message,
    parse_number,
    parse_pairs,
    parse_value,
    quote_input,
    would_crash_in_find,
)
from interp_harness.function_store.benchmark import benchmarks
from interp_harness.function_store.models import CallOutput

SETTINGS = settings(max_examples=150, deadline=None)

# ---- strategies ------------------------------------------------------------------------------

# text as agents type it and string functions print it: no NUL (no shell can carry it) and no
# lone surrogates (not valid UTF-8, refused before the protocol sees them)
text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=20,
)
tricky = st.text(alphabet=st.sampled_from(list("ab ,()'\"\\\n\t$;#é中")), max_size=12)
words = st.sampled_from(["Paris", " Copenhagen", "twenty-one", "New York", "", "don't"])
floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [1e-05, -2.5e20, 1e16, -0.0, 0.1, 123456789.0, -4.908549848419406]
)
complexes = st.complex_numbers(allow_nan=False, allow_infinity=False, max_magnitude=1e12)
scores = st.floats(min_value=0.0, max_value=1.0)
numeric_values = st.one_of(
    floats,
    complexes,
    st.integers(-(10**6), 10**6),
    floats.map(np.float64),
    floats.map(np.array),  # a 0-d array, as np.where on a scalar returns
)
output_texts = st.one_of(
    numeric_values.map(format_value), text, tricky, words, scores.map(format_value)
)
input_texts = st.one_of(text, tricky, words, floats.map(repr))


@st.composite
def call_outputs(draw: st.DrawFn) -> list[CallOutput]:
    n = draw(st.integers(0, 5))
    outs = []
    for _ in range(n):
        x = draw(input_texts)
        kind = draw(st.sampled_from(["output", "output", "error", "none"]))
        if kind == "output":
            outs.append(CallOutput(input=x, output=draw(output_texts)))
        elif kind == "error":
            outs.append(CallOutput(input=x, error=draw(text)))
        else:  # a runner's None without a reason prints `None`, as FIND's try/except does
            outs.append(CallOutput(input=x))
    return outs


def _same_number(a: complex | None, b: complex | None) -> bool:
    if a is None or b is None:
        return a is b
    return all(
        (math.isnan(p) and math.isnan(q)) or p == q for p, q in ((a.real, b.real), (a.imag, b.imag))
    )


# ---- commands: agent writes, harness reads ---------------------------------------------------


@SETTINGS
@given(inputs=st.lists(input_texts, max_size=6))
@example(inputs=["a,b", ",", "1,2"])  # shell-safe, yet a separator in the default mode
@example(inputs=["", "it's", 'say "hi"', "(1)", "a\nb", "$(x)", "é"])
def test_command_roundtrip_default_mode(inputs: list[str]) -> None:
    msg = "COMMAND: " + command(DEFAULT_PATH, [quote_input(x) for x in inputs])
    parsed = parse_message(msg, "default")
    assert not parsed.errors
    assert [c.inputs for c in parsed.commands] == [inputs]
    assert parsed.commands[0].path == DEFAULT_PATH


@SETTINGS
@given(inputs=st.lists(input_texts, max_size=6))
def test_command_roundtrip_find_compat_mode(inputs: list[str]) -> None:
    """FIND cut the arguments at commas and used the first piece only, and refused `'''` and
    `\"\"\"` with fixed error texts: inputs holding those cannot be sent in FIND's protocol at all
    (`find_compat.py`). Every other input arrives as written."""
    assume(all("," not in x and "'''" not in x and '"""' not in x for x in inputs))
    msg = "COMMAND: " + command(DEFAULT_PATH, [quote_input(x) for x in inputs])
    parsed = parse_message(msg, "find-compat")
    assert not parsed.errors
    assert [c.inputs for c in parsed.commands] == [inputs]


# ---- replies: harness writes, agent reads -----------------------------------------------------


def _shown(o: CallOutput, decimals: int | None) -> str:
    if o.error is not None and o.output is None:
        return f"Error: {o.error}"
    if decimals is not None and o.output is not None:
        try:
            return f"{float(o.output):.{decimals}f}"
        except ValueError:
            pass
    return str(o.output)


def _unambiguous(outs: list[CallOutput], decimals: int | None) -> bool:
    """FIND's line is ambiguous when an output holds `) (<next input>, `: the reader takes the
    first cut, as FIND-format readers must. A reply line that holds the start of another reply
    is ambiguous the same way."""
    shown = [_shown(o, decimals) for o in outs]
    nxt = [f") ({o.input}, " for o in outs[1:]]
    return all(sep not in s for s, sep in zip(shown, nxt, strict=False)) and not any(
        "\n" + PREFIX in s for s in shown
    )


@SETTINGS
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("decimals", sorted({b.reply_decimals for b in benchmarks()}, key=str))
@given(outs=call_outputs())
@example(outs=[CallOutput(input="a b", output="x) (y"), CallOutput(input="c", output="l1\nl2) ")])
@example(outs=[CallOutput(input="0", output="0.98765"), CallOutput(input="1", error="boom")])
def test_reply_roundtrip(mode: str, decimals: int | None, outs: list[CallOutput]) -> None:
    assume(_unambiguous(outs, decimals))
    reply = format_reply(outs, mode, decimals=decimals)  # type: ignore[arg-type]
    inputs = [o.input for o in outs]
    if mode == "find-compat" and would_crash_in_find(outs):
        assert reply == PREFIX  # FIND's CLI printed nothing
        assert parse_pairs(reply, inputs) == []
        return
    expected = [(o.input, _shown(o, decimals)) for o in outs]
    assert parse_pairs(reply, inputs) == expected
    # a second reply on the next line (several commands in one message) does not leak in
    other = format_reply([CallOutput(input="z", output="w")], mode)
    assert parse_pairs(reply.rstrip("\n") + "\n" + other, inputs) == expected


@SETTINGS
@pytest.mark.parametrize("mode", MODES)
@given(pairs=st.lists(st.tuples(floats.map(repr), numeric_values.map(format_value)), max_size=6))
def test_numeric_reply_roundtrip_without_inputs(mode: str, pairs: list[tuple[str, str]]) -> None:
    """Numbers need no list of what was sent: the pairs are read by balanced parentheses."""
    reply = format_reply([CallOutput(input=x, output=y) for x, y in pairs], mode)  # type: ignore[arg-type]
    assert parse_pairs(reply) == pairs


# ---- values: target prints, evaluator and agents read -----------------------------------------


@SETTINGS
@given(value=numeric_values)
def test_value_roundtrip(value: object) -> None:
    printed = format_value(value)
    expected = complex(np.asarray(value).item())
    assert _same_number(parse_number(printed), expected)
    read = parse_value(printed)
    assert read is not None
    assert _same_number(complex(read), expected)
    assert isinstance(read, float) == (expected.imag == 0)


@pytest.mark.parametrize("printed", ["None", "Error: ZeroDivisionError", "hello", "[1, 2]"])
def test_values_that_are_not_numbers(printed: str) -> None:
    assert parse_value(printed) is None


# ---- the final answer: agent writes, evaluator reads -------------------------------------------

prose = st.text(alphabet=string.ascii_letters + string.digits + " .,:;()'\"\n-+*/=<>é", max_size=60)
code_bodies = st.sampled_from(["return x", "return 2 * x + 1", "return x[::-1]", "return ''"])


@SETTINGS
@pytest.mark.parametrize("parser", ["tolerant", "find-compat"])
@given(description=prose, domain=prose, body=code_bodies, name=st.sampled_from(["f", "g_1"]))
def test_answer_roundtrip(parser: str, description: str, domain: str, body: str, name: str) -> None:
    assume(description.strip() and domain.strip())
    code = f"def {name}(x):\n    {body}"
    parsed = parse_answer(answer(description, code, domain), parser)  # type: ignore[arg-type]
    assert parsed.description.strip() == description.strip()
    assert parsed.domain.strip() == domain.strip()
    assert parsed.code.strip() == code
    assert parsed.func_name == name


@SETTINGS
@pytest.mark.parametrize("parser", ["tolerant", "find-compat"])
@given(description=prose)
def test_answer_without_domain_roundtrip(parser: str, description: str) -> None:
    assume(description.strip())
    parsed = parse_answer(answer(description, "def f(x):\n    return x"), parser)  # type: ignore[arg-type]
    assert parsed.description.strip() == description.strip()
    assert parsed.code.strip() == "def f(x):\n    return x"
