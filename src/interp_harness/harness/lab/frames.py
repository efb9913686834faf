"""The lab's channel as the orchestrator reads and writes it: one JSON object per line.

The kernel (harness/lab/kernel.py, stdlib only) writes these shapes with plain dicts; here each
frame the lab may send is a pydantic model with bounds, so that whatever a cell writes on the
channel (it can: it runs in the kernel's process) is either one of these, valid, or a broken
channel, which ends the lab. Nothing a frame says is believed beyond its shape: a `call` is a
request the orchestrator checks and meters like an agent's command, a `done` is the cell's own
(untrusted) text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from interp_harness.agents.images import MAX_IMAGE_BYTES

# Figures in a `done` frame: at most MAX_FIGURES PNGs of at most MAX_FIGURE_BYTES each and
# FIGURES_MAX_BYTES in all, base64 (the ceilings of HARNESS_LAB_MAX_FIGURES and
# HARNESS_LAB_MAX_FIGURE_KB, and what the kernel sends of a cell's figures at most; the
# operator's own values are checked after the frame is read, harness/lab/figures.py).
MAX_FIGURES = 16
MAX_FIGURE_BYTES = MAX_IMAGE_BYTES
_FIGURE_B64 = 4 * -(-MAX_FIGURE_BYTES // 3)
_FIGURES_B64 = 8 * 1024 * 1024
FIGURES_MAX_BYTES = _FIGURES_B64 // 4 * 3

# The longest line either way. A `done` frame holds at most four streams of the operator's
# output cap (HARNESS_LAB_MAX_OUTPUT_CHARS, at most 1,000,000) as JSON, and its figures; a `call`
# the arguments of one target call, which the target service bounds again.
MAX_FRAME = 32 * 1024 * 1024 + _FIGURES_B64
_TEXT = 8 * 1024 * 1024  # one text field of a frame (its characters; cut later to the cap)


def max_items() -> int:
    """The most commas outside strings a frame may hold (the kernel escapes those inside
    strings): the largest legal call's inputs (the target service's HARNESS_SERVICE_MAX_INPUTS),
    plus room for a frame's own fields and figures. Counted before a frame is parsed, since
    parsing costs per item (~60 ns, holding the interpreter)."""
    from interp_harness.harness.domain.tool_checks import call_bounds

    return call_bounds()[0] + 256


_CALL_HEAD = re.compile(rb'\{"op":"call","cell":(-?\d{1,18}),"id":(\d{1,18}),')


@dataclass(frozen=True)
class Oversized:
    """A `call` frame with more items than any legal call, left unparsed: refused by its
    header (cell, id), the lab goes on."""

    cell: int
    id: int
    items: int

    op = "call"


def oversized(line: bytes) -> Oversized | None:
    """The header of a call `line` with too many items; None for a line within the bound. A
    line over it that is no call in the kernel's form is an invalid frame (ValueError)."""
    items = line.count(b",") + 1
    if items <= max_items():
        return None
    if (m := _CALL_HEAD.match(line)) is None:
        raise ValueError(f"a message of {items:,} items (at most {max_items():,})")
    return Oversized(cell=int(m[1]), id=int(m[2]), items=items)


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Ready(_Frame):
    op: Literal["ready"]


class Call(_Frame):
    """A target call a cell made (`target.<command>(...)`)."""

    op: Literal["call"]
    cell: int
    id: int = Field(ge=1)
    command: str = Field(max_length=64)
    arguments: dict[str, Any]


class Done(_Frame):
    """A cell's outcome as the kernel reports it."""

    op: Literal["done"]
    id: int
    stdout: str = Field("", max_length=_TEXT)
    stdout_cut: int = Field(0, ge=0)
    stderr: str = Field("", max_length=_TEXT)
    stderr_cut: int = Field(0, ge=0)
    value: str | None = Field(None, max_length=_TEXT)
    error: str | None = Field(None, max_length=_TEXT)
    traceback: str | None = Field(None, max_length=_TEXT)
    limit: str | None = Field(None, max_length=_TEXT)
    # the figures the cell left open: base64 of what the kernel says is a PNG (untrusted)
    figures: list[Annotated[str, Field(max_length=_FIGURE_B64)]] = Field(
        default_factory=list, max_length=MAX_FIGURES
    )

    @field_validator("figures")
    @classmethod
    def _bounded_figures(cls, v: list[str]) -> list[str]:
        if (n := sum(len(f) for f in v)) > _FIGURES_B64:
            raise ValueError(f"figures of {n:,} characters in all (at most {_FIGURES_B64:,})")
        return v


class Exported(_Frame):
    op: Literal["exported"]
    id: int
    source: str | None = Field(None, max_length=_TEXT)
    error: str | None = Field(None, max_length=_TEXT)


FROM_LAB: TypeAdapter[Ready | Call | Done | Exported] = TypeAdapter(
    Annotated[Ready | Call | Done | Exported, Field(discriminator="op")]
)


class CallResult(_Frame):
    """The orchestrator's answer to a `call`: the value (JSON; complex numbers as
    {"__complex__": [re, im]}), per-input errors, or why the call was refused (`kind`: "budget"
    when the episode's target calls are spent, "refused" otherwise)."""

    op: Literal["result"] = "result"
    id: int
    ok: bool
    value: Any = None
    errors: list[dict[str, str]] = Field(default_factory=list)
    error: str | None = None
    kind: str | None = None


def encode(frame: dict[str, Any] | BaseModel) -> bytes:
    """One line to the lab. NaN and infinities go as JSON's common extension (the kernel's
    json.loads reads them), so a target's `nan` reaches the cell as a float nan."""
    data = frame.model_dump() if isinstance(frame, BaseModel) else frame
    return json.dumps(data, separators=(",", ":")).encode() + b"\n"
