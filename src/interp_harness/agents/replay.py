"""`replay`: returns a stored transcript's assistant messages, in order.

Sources (option `path`, or `messages` directly):
- a JSON list of strings, or of {"role", "content"} objects (only assistant turns are replayed);
- JSONL, one string or one {"role", "content"} object per line;
- a run or episode export: an object with "messages" (one episode), or with "episodes" (a list of
  such objects; pick one with option `episode`, an index or an episode/target id, default 0).

The message returned is the (k+1)-th, where k is the number of assistant turns already in the
conversation, so a resumed episode continues where it stopped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, model_validator

from interp_harness.agents.base import (
    ANY_FAMILY,
    Agent,
    AgentError,
    AgentOptions,
    AgentReply,
    Message,
)


def _assistant_texts(items: list[Any]) -> list[str]:
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and "content" in item:
            if item.get("role", "assistant") == "assistant":
                out.append(str(item["content"]))
        else:
            raise ValueError(f"replay: cannot read transcript item {item!r:.80}")
    return out


def _pick_episode(episodes: list[Any], which: Any) -> dict:
    if isinstance(which, int) or (isinstance(which, str) and which.isdigit()):
        return episodes[int(which)]
    for ep in episodes:
        if which in (ep.get("id"), ep.get("episode_id"), ep.get("target_id")):
            return ep
    raise ValueError(f"replay: no episode {which!r} in the export")


def load_transcript(path: str | Path, episode: Any = 0) -> list[str]:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"replay: transcript file {str(p)!r} not found")
    text = p.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(data, dict):
        if "episodes" in data:
            data = _pick_episode(list(data["episodes"]), episode)
        if "messages" not in data:
            raise ValueError(f"replay: {str(p)!r} has neither 'messages' nor 'episodes'")
        data = data["messages"]
    if not isinstance(data, list):
        raise ValueError(f"replay: {str(p)!r} is not a list of messages")
    return _assistant_texts(data)


class _Turn(BaseModel):
    role: Literal["system", "user", "assistant"] = "assistant"
    content: str = Field(max_length=1_000_000)


class ReplayOptions(AgentOptions):
    """Over the API the transcript travels inline: `path` would read a file on the server."""

    operator_only: ClassVar[frozenset[str]] = frozenset({"path", "episode"})
    messages: list[str | _Turn] = Field(..., max_length=10_000)

    @model_validator(mode="before")
    @classmethod
    def _no_path(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("path" in data or "episode" in data):
            raise ValueError(
                "path/episode are not accepted over the API (they read a file on the server); "
                "send the transcript inline as messages=[...]"
            )
        return data


class ReplayAgent(Agent):
    """Replays stored assistant messages in order (options: path, episode, or messages)."""

    name = "replay"
    families = ANY_FAMILY  # replays any transcript
    provider = "local"
    file_options = ("path",)
    description = "replays the assistant messages of a stored transcript (JSON/JSONL or an export)"
    Options = ReplayOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if options.get("messages") is not None:
            self.messages = _assistant_texts(list(options["messages"]))
        elif options.get("path"):
            self.messages = load_transcript(options["path"], options.get("episode", 0))
        else:
            raise ValueError("replay agent needs path=<transcript.json|.jsonl> or messages=[...]")

    async def step(self, conversation: list[Message]) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        if k >= len(self.messages):
            raise AgentError(
                f"replay: the transcript has {len(self.messages)} assistant messages and all were used",
                category="agent",
            )
        return AgentReply(content=self.messages[k])
