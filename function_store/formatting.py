"""FIND's output formatting: `Function input - output pairs: (x, y) (x, y) `."""

from __future__ import annotations

from collections.abc import Iterable

from function_store.models import CallOutput

HEADER = "Function input - output pairs: "


def format_value(value: object) -> str:
    """Render a value as FIND's f-string `{out}` does: Python `str()`, which numpy scalars and 0-d
    arrays follow too (`array(0)` prints `0`, complex roots print `(7.6-20.8j)`)."""
    return str(value)


def format_pair(out: CallOutput) -> str:
    if out.error is not None and out.output is None:
        return f"({out.input}, Error: {out.error}) "
    return f"({out.input}, {out.output}) "


def find_line(outputs: Iterable[CallOutput]) -> str:
    """The exact line FIND's CLI prints (without the trailing newline)."""
    return HEADER + "".join(format_pair(o) for o in outputs)
