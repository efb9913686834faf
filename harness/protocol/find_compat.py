"""FIND's own command parser, reproduced for score comparability (spec FIND.md §6.3-6.4).

What FIND does, step by step, and what we do instead of running a shell:
1. `regex.findall` with a recursive pattern; only the FIRST match counts. Nested parentheses must be
   `UPPER(...)` themselves, so `PYTHON(./temp/function.py (1) 2)` does not match at all.
2. The stem (text before `(`) must be a substring of `PYTHON(function.py)`; else
   `Unrecognized command`. `'''` / `\"\"\"` in the arguments and any comma-item starting with `'`
   give FIND's fixed error texts.
3. The arguments are cut into comma-separated items and only the first one is used:
   `python <item>` went to bash. We split that item into words as bash would (shlex, POSIX rules)
   and never run a shell. The first word is the script; the rest are the inputs.

Deviations (documented; FIND's behaviour there depends on the shell and the file system):
* bash would expand `$VAR`, `$(...)`, backticks and globs, and honour `;`, `&&`, `|`, redirections.
  We expand nothing; words from the first unquoted control operator on are dropped, so
  `PYTHON(./temp/function.py 1; cat ./temp/function.py)` calls the target on `1` only.
* A script path other than the function file made FIND's `python` fail with an empty stdout: we
  return the error message "" (reply `Response: `). Accepted paths: the one the prompt names
  (`./temp/function.py`) and `temp/function.py` (FIND's `\\b` anchor drops the leading `./`).
* `PYTHON()` (no argument item) crashed FIND's loop (IndexError) and restarted the episode; we
  return an error reply instead.
"""

from __future__ import annotations

import re
import shlex

import regex

from harness.protocol.models import Command, ParsedMessage
from harness.protocol.parser import DESCRIPTION_TAG

_COMMAND = regex.compile(r"([A-Z]+\(((?:[^()\"']|(?:\"[^\"]*\")|(?:'[^']*')|\((?1)*\))*)\))")
_ITEMS = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\b[^,]+)""")
_KNOWN = "PYTHON(function.py)"
FIND_PATHS = ("./temp/function.py", "temp/function.py")

UNRECOGNIZED = "Unrecognized command"
MULTILINE = (
    'Error parsing multi-line string ({q}) Use a single line with escaped newlines instead (")'
)
SINGLE_QUOTES = (
    "Error parsing argument in single quotes. Use double quotes around the argument instead"
)
_OPERATORS = {";", "&", "&&", "|", "||", ";;", "(", ")", "<", ">", ">>", "<<", ">&", "<&", "|&"}


def bash_words(item: str) -> list[str]:
    """The words bash would hand `python` for `python <item>`, without expansions (see above)."""
    lex = shlex.shlex(item, posix=True, punctuation_chars=";&|<>()")
    lex.whitespace_split = True
    words: list[str] = []
    for tok in lex:
        if tok in _OPERATORS or (tok and set(tok) <= set(";&|<>()")):
            break
        words.append(tok)
    return words


def parse_find_compat(text: str, function_paths: tuple[str, ...] = FIND_PATHS) -> ParsedMessage:
    has_desc = DESCRIPTION_TAG in text
    matches = _COMMAND.findall(text)
    if not matches:
        return ParsedMessage(no_command=not has_desc, has_description=has_desc)
    msg = ParsedMessage(has_description=has_desc)
    full, raw_args = matches[0]
    stem = full.split("(", 1)[0]
    if stem not in _KNOWN:
        msg.errors.append(UNRECOGNIZED)
        return msg
    if "'''" in raw_args:
        msg.errors.append(MULTILINE.format(q="'''"))
        return msg
    if '"""' in raw_args:
        msg.errors.append(MULTILINE.format(q='"""'))
        return msg
    items = _ITEMS.findall(raw_args)
    if any(it.startswith("'") for it in items):
        msg.errors.append(SINGLE_QUOTES)
        return msg
    if not items:  # FIND: IndexError in str.format -> the episode restarts (deviation, see above)
        msg.errors.append("Error: empty command. Use PYTHON(./temp/function.py value1 value2 ...)")
        return msg
    try:
        words = bash_words(items[0])
    except ValueError:
        # bash: "unexpected EOF while looking for matching quote" on stderr; stdout empty
        msg.errors.append("")
        return msg
    if not words or words[0] not in function_paths:
        msg.errors.append("")  # python: can't open file (stderr only) -> "Response: "
        return msg
    msg.commands.append(Command(raw=full, path=words[0], inputs=words[1:]))
    return msg
