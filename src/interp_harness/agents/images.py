"""Images sent with a message: the figures a lab cell made (protocol modes `code`, `code-tools`).

The orchestrator checked each one is a PNG of bounded size (harness/lab/figures.py) before it
became an `ImagePart`; agents that read images (openai, anthropic) send them as image parts, the
others read the line the cell's reply has for each (`[figure 1: 640x480 PNG]`). In JSON (the
agent host's frames) the bytes travel as base64.

A conversation carries the images of its latest messages only, within MAX_CONVERSATION_IMAGES
and MAX_CONVERSATION_IMAGE_BYTES (`recent_images`): what one request to a provider and one agent
host frame carry stays bounded however many figures an episode makes; an older figure is still
named by its line in the text.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from interp_harness.agents.base import Message

MAX_IMAGE_BYTES = 2 * 1024 * 1024  # one PNG (the ceiling of HARNESS_LAB_MAX_FIGURE_KB)
MAX_IMAGE_SIDE = 4096  # pixels, either side
MAX_MESSAGE_IMAGES = 32
MAX_CONVERSATION_IMAGES = 32
MAX_CONVERSATION_IMAGE_BYTES = 16 * 1024 * 1024


class ImagePart(BaseModel):
    """One PNG image of a message, with the size its header says."""

    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64", val_json_bytes="base64")

    png: bytes = Field(max_length=MAX_IMAGE_BYTES)
    width: int = Field(ge=1, le=MAX_IMAGE_SIDE)
    height: int = Field(ge=1, le=MAX_IMAGE_SIDE)

    def b64(self) -> str:
        return base64.b64encode(self.png).decode("ascii")

    def data_url(self) -> str:
        return "data:image/png;base64," + self.b64()


def image_bytes(messages: Sequence[Message]) -> int:
    return sum(len(i.png) for m in messages for i in m.images)


def recent_images(conversation: Sequence[Message]) -> list[Message]:
    """`conversation` with the images of its latest messages only: from the newest back, a
    message keeps its images while the total stays within MAX_CONVERSATION_IMAGES and
    MAX_CONVERSATION_IMAGE_BYTES; every older message (and one that would not fit) goes without
    them. Messages are not changed: those that lose images are copies."""
    out: list[Message] = []
    count = size = 0
    full = False
    for m in reversed(conversation):
        if m.images:
            n, b = len(m.images), sum(len(i.png) for i in m.images)
            full = full or count + n > MAX_CONVERSATION_IMAGES
            full = full or size + b > MAX_CONVERSATION_IMAGE_BYTES
            if full:
                m = m.model_copy(update={"images": []})
            else:
                count, size = count + n, size + b
        out.append(m)
    out.reverse()
    return out
