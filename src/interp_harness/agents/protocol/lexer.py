"""Linear-time replacements for the two parsers the protocol used to lean on.

- `split_words`: POSIX shell word splitting as `shlex` does it (posix=True, whitespace_split,
  no comments), with unquoted commas as separators on request and an optional stop at the first
  unquoted shell control character. `shlex` builds each token by `token += char` on an attribute,
  which copies the token every time: a 1.5 MB argument took 35 s.
- `first_command`: the first match of FIND's recursive command pattern
  `[A-Z]+\\(((?:[^()"']|"[^"]*"|'[^']*'|\\((?1)*\\))*)\\)` (the `regex` module backtracks over
  every start position: `PYTHON(` followed by 16,000 `X(` took 28 s). For a given start the
  pattern can match in one way only (each alternative is chosen by the next character), so a
  recursive descent memoised on the position after each `(` finds the same match in O(n).

Both are checked against the originals on random inputs (tests/agents/protocol/test_lexer.py).
"""

from __future__ import annotations

_WHITESPACE = " \t\r\n"
OPERATOR_CHARS = ";&|<>()"


def split_words(text: str, *, commas: bool = False, stop_at_operators: bool = False) -> list[str]:
    """The words of `text`; raises ValueError on an unclosed quote or a trailing backslash, with
    shlex's messages. With `stop_at_operators`, words end at the first unquoted `;&|<>()`."""
    seps = _WHITESPACE + ("," if commas else "")
    words: list[str] = []
    buf: list[str] = []
    in_word = False  # a quoted empty string is still a word
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in seps:
            if in_word:
                words.append("".join(buf))
                buf, in_word = [], False
            i += 1
        elif stop_at_operators and c in OPERATOR_CHARS:
            break
        elif c == "\\":
            if i + 1 >= n:
                raise ValueError("No escaped character")
            buf.append(text[i + 1])
            in_word = True
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ValueError("No closing quotation")
            buf.append(text[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i = _double_quoted(text, i + 1, buf)
            in_word = True
        else:
            j = i + 1
            while j < n and not _special(text[j], seps, stop_at_operators):
                j += 1
            buf.append(text[i:j])
            in_word = True
            i = j
    if in_word:
        words.append("".join(buf))
    return words


def _special(c: str, seps: str, operators: bool) -> bool:
    return c in seps or c in "\\'\"" or (operators and c in OPERATOR_CHARS)


def _double_quoted(text: str, i: int, buf: list[str]) -> int:
    """Appends the inside of a double-quoted string starting at `i`; returns the index after the
    closing quote. Inside, a backslash escapes only `"` and `\\` (shlex's escapedquotes). The
    closing quote is searched for again only when an escape consumed it: linear time."""
    n = len(text)
    q = text.find('"', i)
    while True:
        b = text.find("\\", i, q if q >= 0 else n)
        if b < 0:
            if q < 0:
                raise ValueError("No closing quotation")
            buf.append(text[i:q])
            return q + 1
        buf.append(text[i:b])
        if b + 1 >= n:
            raise ValueError("No escaped character")
        nxt = text[b + 1]
        buf.append(nxt if nxt in '"\\' else "\\" + nxt)
        i = b + 2
        if q >= 0 and i > q:  # the escape took the quote we had found
            q = text.find('"', i)


def first_command(text: str) -> tuple[str, str] | None:
    """(whole match, argument text) of the first match of FIND's command pattern, or None."""
    n = len(text)
    upper = [c.isascii() and c.isupper() for c in text]
    # index after the run of capitals that starts at or covers i
    run_end = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        run_end[i] = run_end[i + 1] if upper[i] and i + 1 < n and upper[i + 1] else i + 1
    memo: dict[int, int] = {}  # body start -> index after the closing ")" (-1: no match)

    def command_body(i: int) -> int | None:
        """The body start of a command beginning at i, or None when i cannot start one."""
        if not upper[i]:
            return None
        j = run_end[i]
        return j + 1 if j < n and text[j] == "(" else None

    for start in range(n):
        if not upper[start] or (start > 0 and upper[start - 1]):
            continue  # each run of capitals is tried once: its positions share one outcome
        body = command_body(start)
        if body is None:
            continue
        end = _match_body(text, body, memo, command_body)
        if end >= 0:
            return text[start:end], text[body : end - 1]
    return None


def _match_body(text: str, body: int, memo: dict[int, int], command_body) -> int:  # noqa: ANN001
    """Index after the `)` closing the command whose body starts at `body`, or -1. Iterative (an
    explicit stack), since nesting can be as deep as the text is long."""
    n = len(text)
    # frame: [body start, position, nested?]; nested: after a "(" inside the body, matching
    # zero or more whole commands before its ")"
    stack: list[list] = [[body, body, False]]
    result = -1
    returning = False
    while stack:
        frame = stack[-1]
        b, p, nested = frame
        if returning:  # a child command finished with `result`
            returning = False
            if result >= 0:
                frame[1] = result
                continue
            # the command sequence stops here; the nested group must close at p
        elif nested:
            child = command_body(p) if p < n else None
            if child is not None:
                if child in memo:
                    if memo[child] >= 0:
                        frame[1] = memo[child]
                        continue
                else:
                    stack.append([child, child, False])
                    continue
        if nested:
            if p < n and text[p] == ")":
                frame[1], frame[2] = p + 1, False
                continue
            result = memo[b] = -1
            stack.pop()
            returning = True
            continue
        # scanning the body
        if p >= n:
            result = memo[b] = -1
        else:
            c = text[p]
            if c == ")":
                result = memo[b] = p + 1
            elif c in "\"'":
                q = text.find(c, p + 1)
                if q >= 0:
                    frame[1] = q + 1
                    continue
                result = memo[b] = -1
            elif c == "(":
                frame[1], frame[2] = p + 1, True
                continue
            else:
                frame[1] = p + 1
                continue
        stack.pop()
        returning = True
    return result
