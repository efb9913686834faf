"""Commands: `PYTHON(...)` as the agent writes it (`command`, `quote_input`) and as the harness
reads it out of agent text, without a shell (`parse_message`, in either protocol mode).

Rules of the default mode (lenient, for any model):
* every `PYTHON(` that is not the tail of a longer identifier starts a command; all of a message's
  commands are returned, in order;
* the command ends at its balancing `)`; parentheses inside quotes do not count, unquoted nested
  ones must balance (`PYTHON(f.py (1) 2)` has the inputs `(1)` and `2`);
* the text inside is split like a POSIX shell would split words (shlex's rules, in linear time:
  `lexer.split_words`; single and double
  quotes, backslash escapes) and, in addition, unquoted commas separate inputs, since models often
  write `PYTHON(./temp/function.py, 1, 2)`; nothing is expanded or executed (`$(...)`, backticks,
  `;`, `*` are literal text);
* a newline inside the parentheses is whitespace: every input of every line is kept
  (`PYTHON(f.py 1⏎2)` has the inputs `1` and `2`), where FIND's shell stopped at the newline
  (find-compat mode reproduces that: `find_compat.py`); a quoted newline stays inside its input;
* a first word ending in `.py` is the script path (`function.py`, `./temp/function.py`,
  `"./temp/function.py"`); otherwise every word is an input;
* an unclosed parenthesis or quote gives an error message instead of a command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from interp_harness.agents.protocol.find_compat import parse_find_compat
from interp_harness.agents.protocol.lexer import split_words
from interp_harness.agents.protocol.models import (
    DESCRIPTION_TAG,
    MODES,
    Command,
    Mode,
    ParsedMessage,
)

DEFAULT_PATH = "./temp/function.py"  # the script path FIND's prompt names

# Commands are not read out of longer messages; the agent is told why (in find-compat mode too,
# where FIND would have tried). Parsing is linear; the bound keeps one parse short wherever it
# runs, including a stored message re-read when an episode resumes.
MAX_MESSAGE_CHARS = 200_000


# ---- writer ----------------------------------------------------------------------------------


def quote_input(value: str) -> str:
    """One input as a shell word both modes read back as `value`: `shlex.quote`, and quoted too
    when it holds a comma, which the default mode would otherwise take for a separator."""
    quoted = shlex.quote(value)
    return f"'{value}'" if quoted == value and "," in value else quoted


def command(path: str, inputs: Sequence[str]) -> str:
    """`PYTHON(path i1 i2 ...)`; `inputs` are shell words already (see `quote_input`)."""
    return f"PYTHON({path} {' '.join(inputs)})"


# ---- reader ----------------------------------------------------------------------------------


def parse_message(text: str, mode: Mode = "default") -> ParsedMessage:
    """All commands of one agent message (default) or FIND's first-match-only reading."""
    if mode not in MODES:
        raise ValueError(f"unknown protocol mode {mode!r}; use 'default' or 'find-compat'")
    if len(text) > MAX_MESSAGE_CHARS:
        return ParsedMessage(
            has_description=DESCRIPTION_TAG in text,
            errors=[
                f"Error: message too long ({len(text)} characters; commands are read from "
                f"messages of at most {MAX_MESSAGE_CHARS}). Send fewer or shorter inputs."
            ],
        )
    if mode == "default":
        return parse_default(text)
    return parse_find_compat(text)


def command_inputs(message: str, mode: Mode = "default") -> list[str] | None:
    """The inputs of the first command of a message as the harness reads them, or None when it
    has none (an agent re-reading what it sent)."""
    commands = parse_message(message, mode).commands
    return list(commands[0].inputs) if commands else None


_START = re.compile(r"(?<![A-Za-z0-9_])PYTHON\(")


def _scan_close(text: str, start: int) -> int | None:
    """Index of the `)` that closes the `(` just before `start`, or None."""
    depth, i, quote = 1, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = None
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def parse_default(text: str) -> ParsedMessage:
    msg = ParsedMessage(has_description=DESCRIPTION_TAG in text)
    pos = 0
    seen = False
    while m := _START.search(text, pos):
        seen = True
        end = _scan_close(text, m.end())
        if end is None:
            snippet = text[m.start() : m.start() + 60]
            msg.errors.append(
                f"Error: malformed command {snippet!r}: no closing parenthesis (or an unclosed "
                "quote). Write PYTHON(function.py input1 input2 ...) on one line."
            )
            break
        raw = text[m.start() : end + 1]
        pos = end + 1
        try:
            words = split_words(text[m.end() : end], commas=True)
        except ValueError as e:
            msg.errors.append(
                f"Error: could not parse the arguments of {raw[:80]!r} ({e}). Quote inputs that "
                'contain spaces with double quotes, e.g. PYTHON(function.py "hello world").'
            )
            continue
        path = None
        if words and words[0].endswith(".py"):
            path, words = words[0], words[1:]
        msg.commands.append(Command(raw=raw, path=path, inputs=words))
    msg.no_command = not seen and not msg.has_description
    return msg
