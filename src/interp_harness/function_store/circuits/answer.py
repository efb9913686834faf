"""The circuits family's final answer: its format as the task prompt states it (`ANSWER_FORMAT`),
and its reader (`parse_circuit`), in one place so the prompt and the scorer cannot drift apart.

`prompt.py` puts `ANSWER_FORMAT` at the end of the task prompt; the scorer
(`interp_harness.evaluator.circuits.scorer`) reads the answer with `parse_circuit` and the
description and code with the SDK's `parse_answer`. The answer command of protocol mode `tools`
(`commands.py`'s `submit_answer`) writes the same tags: `circuit` (an array of `NAME: role`
strings, written comma-separated on one line), `description` and `code` (fenced), which this
reader takes as well. It lives here, not in the evaluator, because the prompt (this layer) may not
import the evaluator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# the function the answer's code defines, called once per held-out input
CODE_FUNCTION = "f"

ANSWER_FORMAT = """\
When you are done, answer with the circuit, a description and code, in this format:

[CIRCUIT]
L0H1: one line on what this component does
L1MLP: one line on what this component does
[DESCRIPTION]: what the model computes from its input, in a sentence or two.
[CODE]:
```python
def f(tokens):
    # tokens: the input as a list of vocabulary items (no BOS)
    # returns the model's output at each position: a list as long as tokens
    ...
```

Under the circuit tag, list every component the model needs to compute its output, and only
those, one per line: `L{layer}H{head}` for an attention head, `L{layer}MLP` for an MLP (layers
and heads count from 0). Write `none` after the tag to claim that no component is needed. The circuit is scored
against the components the compiled program uses and by how well the model does with every other
component ablated; the code is scored by exact match with the model's outputs on inputs you have
not seen."""

_TAG = r"\[\s*{name}\s*\]\s*:?"
_CIRCUIT_TAG = re.compile(_TAG.format(name="CIRCUIT"), re.IGNORECASE)
_ANY_TAG = re.compile(r"\[\s*(?:DESCRIPTION|CODE|DOMAIN|CIRCUIT)\s*\]", re.IGNORECASE)
# a component's name at the start of an item: a line (after an optional bullet or number) or
# after a comma or semicolon (the answer command writes its array on one line)
_ITEM = re.compile(
    r"(?:^|[,;])[ \t]*(?:[-*\u2022]|\d+[.)])?[ \t]*"
    r"L[ \t]*(\d+)[ \t]*[._]?[ \t]*(?:H[ \t]*(\d+)|(MLP))(?![A-Za-z0-9])",
    re.IGNORECASE | re.MULTILINE,
)
_NONE = re.compile(r"^\W*(none|nothing|empty|no components?)\W*$", re.IGNORECASE)


def component_name(layer: int, head: int | None) -> str:
    """`L{layer}H{head}` for a head, `L{layer}MLP` for an MLP (head None)."""
    return f"L{layer}MLP" if head is None else f"L{layer}H{head}"


@dataclass(frozen=True)
class ParsedCircuit:
    """What the [CIRCUIT] section claims: component name -> its one-line role, in the order
    written (a name written twice keeps its first role)."""

    found: bool  # the answer has a [CIRCUIT] section
    roles: dict[str, str] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)  # non-empty lines naming no component

    @property
    def components(self) -> list[str]:
        return list(self.roles)


def circuit_section(message: str) -> str | None:
    """The text after the last [CIRCUIT] tag up to the next tag, or None without the tag."""
    last = None
    for m in _CIRCUIT_TAG.finditer(message):
        last = m
    if last is None:
        return None
    rest = message[last.end() :]
    nxt = _ANY_TAG.search(rest)
    return rest[: nxt.start()] if nxt else rest


def parse_circuit(message: str) -> ParsedCircuit:
    """The components and roles the answer's [CIRCUIT] section names (names are read in any
    case, `L0H1`, `L0.H1`, `l0 mlp`, and written canonically)."""
    section = circuit_section(message)
    if section is None:
        return ParsedCircuit(found=False)
    items = list(_ITEM.finditer(section))
    roles: dict[str, str] = {}
    for k, m in enumerate(items):
        layer, head, _ = m.groups()
        name = component_name(int(layer), None if head is None else int(head))
        end = items[k + 1].start() if k + 1 < len(items) else len(section)
        role = section[m.end() : end].strip().lstrip(":-\u2013\u2014 \t").strip().rstrip(",;")
        roles.setdefault(name, " ".join(role.split()))
    covered = [(m.start(), m.end()) for m in items]
    unread = [
        line.strip()
        for line, start in _lines(section)
        if line.strip()
        and not _NONE.match(line)
        and not any(s <= start + len(line) and start <= e for s, e in covered)
    ]
    return ParsedCircuit(found=True, roles=roles, unread=unread)


def _lines(text: str) -> list[tuple[str, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((line, pos))
        pos += len(line) + 1
    return out


def description_of(description: str) -> str:
    """The description cut before a [CIRCUIT] section written after it."""
    m = _CIRCUIT_TAG.search(description)
    return (description[: m.start()] if m else description).strip()
