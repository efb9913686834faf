"""Output values: how a target's value is printed in a reply, and how a printed value is read back.

Writer: FIND's CLIs print `f'({arg}, {out}) '`, i.e. Python `str()` of what the function
returned (FIND paper's repository, `function_code.py`): `2.5`, `-inf`, `nan`, `1e-05`, complex
roots as `(7.599999999999999-20.8j)`, `None` when the function raised, `True`/`False` for a
comparison, and a numpy 0-d array as its bare value (`str(np.array(3.0))` is `3.0`).

Reader: `parse_number` reads a printed value as the number FIND's numeric scoring computes with.
That scoring calls the ground truth in-process and uses the returned object itself in
`abs(g)` and `|g - t|^2` (mse_indicator.py), so a bool counts as 0/1 (Python's `bool` is an `int`)
and an array as the value it holds. The same reader serves the evaluator (ground-truth outputs) and
the agents (their observations), so both sides read every value alike.
"""

from __future__ import annotations

import re

_ARRAY = re.compile(r"^array\((.*?)(?:,\s*dtype=\w+)?\)$", re.DOTALL)  # numpy's repr


class UnparseableValue(ValueError):
    pass


def format_value(value: object) -> str:
    """Render a value as FIND's f-string `{out}` does: Python `str()`, which numpy scalars and 0-d
    arrays follow too (`array(0)` prints `0`, complex roots print `(7.6-20.8j)`)."""
    return str(value)


def format_decimals(text: str | None, decimals: int) -> str | None:
    """A printed number again with a fixed number of decimals (FIND's entity CLI prints scores
    with `:.4f`); text that is not a real number is left as it is."""
    if text is None:
        return None
    try:
        return f"{float(text):.{decimals}f}"
    except ValueError:
        return text


def parse_number(text: str | None) -> complex | None:
    """A printed value as a number. None (or the text `None`) means the function raised. Also
    read: `True`/`False` (1/0, as FIND's arithmetic on a bool) and numpy's `array(x)` / `[x]`
    forms of one value. Raises UnparseableValue on anything else."""
    if text is None:
        return None
    s = text.strip()
    if s == "None":
        return None
    if m := _ARRAY.match(s):
        s = m.group(1).strip()
    if s.startswith("[") and s.endswith("]"):  # a 1-element array printed by numpy
        s = s[1:-1].strip()
    try:
        return complex(float(s))
    except ValueError:
        pass
    try:
        return complex(s.replace(" ", ""))
    except ValueError:
        pass
    if s in ("True", "False"):
        return complex(s == "True")
    raise UnparseableValue(f"cannot read output {text!r} as a number")


def parse_value(text: str) -> float | complex | None:
    """`parse_number` for readers that skip what is not a number: a real value as a float, a
    complex one as complex; `None`, errors and anything else give None."""
    try:
        c = parse_number(text)
    except UnparseableValue:
        return None
    if c is None:
        return None
    return c.real if c.imag == 0 else c


def fmt_number(v: float) -> str:
    """A short literal for an input (`3`, `-2.5`)."""
    if float(v).is_integer():
        return str(int(v))
    return repr(round(float(v), 6))
