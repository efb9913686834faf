"""FIND's own command parser, reproduced for score comparability (its
`collect_interpretations.py`).

What FIND does, step by step, and what we do instead of running a shell:
1. `regex.findall` with a recursive pattern; only the FIRST match counts (`lexer.first_command`
   finds the same match without the regex engine's quadratic backtracking). Nested parentheses must be
   `UPPER(...)` themselves, so `PYTHON(./temp/function.py (1) 2)` does not match at all.
2. The stem (text before `(`) must be a substring of `PYTHON(function.py)`; else
   `Unrecognized command`. `'''` / `\"\"\"` in the arguments and any comma-item starting with `'`
   give FIND's fixed error texts.
3. The arguments are cut into comma-separated items and only the first one is used:
   `python <item>` went to /bin/sh (`subprocess.Popen(..., shell=True)`). We split that item into
   words as the shell would (`shell_words`) and never run a shell. The first word is the script;
   the rest are the inputs. An unquoted newline ends the shell command, so only the inputs before
   it reached the function (FIND's attempt to escape newlines first discards its result); the
   next line ran as a command of its own, whose errors went to the dropped stderr. `#` at the
   start of a word begins a comment; backslash-newline joins lines; quotes keep newlines.

Deviations (documented; FIND's behaviour there depends on the shell and the file system):
* the shell would expand `$VAR`, `$(...)`, backticks and globs, and honour `;`, `&&`, `|`,
  redirections and the lines after a newline. We expand nothing and run only the function: words
  from the first unquoted control operator or newline on are dropped, so
  `PYTHON(./temp/function.py 1; cat ./temp/function.py)` calls the target on `1` only.
* A script path other than the function file made FIND's `python` fail with an empty stdout: we
  return the error message "" (reply `Response: `). Accepted paths: the one the prompt names
  (`./temp/function.py`) and `temp/function.py` (FIND's `\\b` anchor drops the leading `./`).
* `PYTHON()` (nothing inside) left FIND's command as the literal `python {}`: python found no
  such file, so the reply was `Response: `, as here. `PYTHON( )` (only blanks) gave no argument
  item, so FIND's `str.format` raised IndexError, which crashed the loop and restarted the whole
  function from its first prompt; we return an error reply instead.
"""

from __future__ import annotations

import re

from interp_harness.agents.protocol.lexer import first_command
from interp_harness.agents.protocol.models import DESCRIPTION_TAG, Command, ParsedMessage

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
_OPERATORS = frozenset(";&|<>()\n")  # unquoted, each ends the shell command we reproduce
_DQ_ESCAPES = frozenset('$`"\\')  # what a backslash escapes inside double quotes


def shell_words(item: str) -> list[str]:
    """The words /bin/sh would hand `python` for `python <item>`, without expansions (see above).

    Raises ValueError on an unterminated quote (the shell failed with nothing on stdout)."""
    words: list[str] = []
    word: list[str] = []
    in_word = False  # true once the current word has any part, even an empty '' or ""
    i, n = 0, len(item)
    while i < n:
        c = item[i]
        if c == "\\" and i + 1 < n:
            if item[i + 1] != "\n":  # backslash-newline is a line continuation: both vanish
                word.append(item[i + 1])
                in_word = True
            i += 2
            continue
        if c in "'\"":
            close = c
            i += 1
            while True:
                if i >= n:
                    raise ValueError("unterminated quote")
                if item[i] == close:
                    break
                if close == '"' and item[i] == "\\" and i + 1 < n:
                    if item[i + 1] == "\n":
                        i += 2
                        continue
                    if item[i + 1] in _DQ_ESCAPES:
                        word.append(item[i + 1])
                        i += 2
                        continue
                word.append(item[i])
                i += 1
            in_word = True
            i += 1
            continue
        if c in " \t" or c in _OPERATORS or (c == "#" and not in_word):
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            if c in _OPERATORS or c == "#":  # '#' comments out the rest of the line
                return words
            i += 1
            continue
        word.append(c)
        in_word = True
        i += 1
    if in_word:
        words.append("".join(word))
    return words


def parse_find_compat(text: str, function_paths: tuple[str, ...] = FIND_PATHS) -> ParsedMessage:
    has_desc = DESCRIPTION_TAG in text
    match = first_command(text)  # FIND's recursive pattern, first match, in linear time
    if match is None:
        return ParsedMessage(no_command=not has_desc, has_description=has_desc)
    msg = ParsedMessage(has_description=has_desc)
    full, raw_args = match
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
    if raw_args == "":  # FIND ran `python {}`: no such file, empty stdout (see above)
        msg.errors.append("")
        return msg
    items = _ITEMS.findall(raw_args)
    if any(it.startswith("'") for it in items):
        msg.errors.append(SINGLE_QUOTES)
        return msg
    if not items:  # FIND: IndexError in str.format, the function restarts (deviation, see above)
        msg.errors.append("Error: empty command. Use PYTHON(./temp/function.py value1 value2 ...)")
        return msg
    try:
        words = shell_words(items[0])
    except ValueError:
        # bash: "unexpected EOF while looking for matching quote" on stderr; stdout empty
        msg.errors.append("")
        return msg
    if not words or words[0] not in function_paths:
        msg.errors.append("")  # python: can't open file (stderr only) -> "Response: "
        return msg
    msg.commands.append(Command(raw=full, path=words[0], inputs=words[1:]))
    return msg
