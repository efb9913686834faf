"""Protocol mode `code`: Python cells, as the agent writes them and as the harness answers them.

In the text rendering a cell is a fenced block opened by a line "```python" (or "```py") and
closed by a line "```"; every such block of an assistant message runs, in order, in the episode's
lab (a sandboxed Python process that keeps its variables from cell to cell). In protocol mode
`code-tools` the same cell is the `run_python` tool's `code` argument (`RUN_PYTHON`).

A cell's reply says what it printed and returned, each part with its length so that a reader
cuts it exactly whatever it holds, and ends with a line of its own (`format_cell` /
`parse_cells`):

    Response: cell 3 ran (2 target calls).
    stdout (12 characters):
    hello world

    value (2 characters):
    42
    [end of cell 3]

Writer and reader sit side by side, like the rest of the protocol; the scripted agents read
their cells' output with `cell_stdouts`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from interp_harness.agents.base import Message
from interp_harness.agents.protocol.reply import PREFIX
from interp_harness.agents.toolspec import ToolSpec

RUN_PYTHON = "run_python"
# what a fenced [CODE] answer may hold instead of code: a function defined in the lab
LAB_REF = re.compile(r"^\s*lab:([A-Za-z_][A-Za-z0-9_]{0,99})\s*$")

RUN_PYTHON_SPEC = ToolSpec(
    name=RUN_PYTHON,
    description=(
        "Run Python code as one cell of your lab: a Python process that keeps its variables "
        "between cells, with numpy, scipy and matplotlib, and the module `target`, whose "
        "functions call the system you study (each call counts like a command)."
    ),
    parameters={
        "type": "object",
        "properties": {"code": {"type": "string", "minLength": 1, "description": "Python code"}},
        "required": ["code"],
        "additionalProperties": False,
    },
    result="what the cell printed (stdout, stderr), its last expression's value, and its error "
    "with the traceback, each with its length",
)

_FENCE = re.compile(r"^```[ \t]*(?:python|py)[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


# ---- cells in a message -----------------------------------------------------------------------


def split_cells(text: str) -> tuple[str, list[str]]:
    """(the message without its cells, the cells' code in order). A block that is never closed
    is no cell (it stays in the text)."""
    cells = [m.group(1) for m in _FENCE.finditer(text)]
    return _FENCE.sub("", text), cells


def cell_block(code: str) -> str:
    """A cell as the text rendering writes it."""
    return f"```python\n{code.rstrip()}\n```"


# ---- a cell's reply ---------------------------------------------------------------------------

SECTIONS = ("stdout", "stderr", "value", "error", "traceback")


@dataclass
class CellReply:
    """What one cell's reply says. `cut`: characters left out per section."""

    number: int
    header: str = ""
    parts: dict[str, str] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)

    @property
    def stdout(self) -> str:
        return self.parts.get("stdout", "")


def _section(name: str, text: str, cut: int) -> str:
    more = f", {cut} more cut" if cut else ""
    return f"{name} ({len(text)} characters{more}):\n{text}\n"


def format_cell(
    number: int,
    status: str,
    parts: dict[str, str],
    cut: dict[str, int] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The reply to one cell: a header line (`status` says how it ended), then each non-empty
    part of SECTIONS with its length, then `notes` (one line each: the cell's figures)."""
    cut = cut or {}
    out = [f"{PREFIX}cell {number} {status}\n"]
    for name in SECTIONS:
        text = parts.get(name) or ""
        if text or cut.get(name):
            out.append(_section(name, text, cut.get(name, 0)))
    out += [f"{line}\n" for line in notes]
    out.append(f"[end of cell {number}]\n")
    return "".join(out)


_HEAD = re.compile(r"^" + re.escape(PREFIX) + r"cell (\d+) (.*)\n", re.MULTILINE)
_PART = re.compile(r"(" + "|".join(SECTIONS) + r") \((\d+) characters(?:, (\d+) more cut)?\):\n")


def parse_cells(text: str) -> list[CellReply]:
    """Every cell reply in `text` (a user or tool message), in order."""
    out = []
    pos = 0
    while m := _HEAD.search(text, pos):
        reply = CellReply(number=int(m.group(1)), header=m.group(2))
        pos = m.end()
        while p := _PART.match(text, pos):
            n = int(p.group(2))
            reply.parts[p.group(1)] = text[p.end() : p.end() + n]
            if p.group(3):
                reply.cut[p.group(1)] = int(p.group(3))
            pos = p.end() + n
            pos += text.startswith("\n", pos)
        out.append(reply)
    return out


def cell_stdouts(conversation: Sequence[Message]) -> list[str]:
    """The stdout of every cell answered so far in a conversation, in order."""
    out = []
    for m in conversation:
        if m.role in ("user", "tool"):
            out += [c.stdout for c in parse_cells(m.content)]
    return out


def cells_sent(conversation: Sequence[Message]) -> int:
    """How many cells the assistant's messages hold (text cells and run_python calls)."""
    n = 0
    for m in conversation:
        if m.role == "assistant":
            n += len(split_cells(m.content)[1])
            n += sum(c.name == RUN_PYTHON for c in m.tool_calls)
    return n
