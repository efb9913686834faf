"""NUL characters in stored text (issue 27): PostgreSQL's text columns cannot hold U+0000, so an
agent message, answer or error containing one failed its insert (an infrastructure error, the
episode unscored), and a NUL in a GET parameter failed the query (a 500).

Every statement's string parameters are rewritten on the way to the driver: U+0000 becomes
U+2400 (SYMBOL FOR NUL, shown as a visible mark). The same on SQLite, so a store's content does not
depend on its backend (and SQLite's substr()/length(), which stop at a NUL, see the whole text).
JSON columns are unaffected: their parameters are serialised JSON, where a NUL is `\\u0000`.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

NUL = "\x00"
SHOWN_AS = "\u2400"


def visible_nul(text: str) -> str:
    return text.replace(NUL, SHOWN_AS) if NUL in text else text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return visible_nul(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_clean(v) for v in value)
    return value


def _before_execute(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
    return statement, _clean(parameters)


def install(engine: Engine) -> None:
    """Rewrite NUL in every string parameter of every statement `engine` runs."""
    event.listen(engine, "before_cursor_execute", _before_execute, retval=True)
