"""Errors grouped for people: one line per distinct (where, category, message) with how many
episodes share it, so that "20 episodes: openai agent: no API key; ..." is what a summary says
instead of "error: agent 20".

Used by every place that summarises episodes: the evaluator's report, the REST run detail and
the CLI (`harness run`, `harness runs show`, `harness report`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from evaluator.api import EpisodeSummary

MAX_MESSAGE_CHARS = 2000  # a message is kept whole up to here (provider errors can be long)


class ErrorGroup(BaseModel):
    where: Literal["episode", "score"] = Field(
        description="episode: the episode ended in error; score: a scorer failed on a finished one"
    )
    category: str = Field(description="agent | target | judge | sandbox | infrastructure | ...")
    metric: str | None = Field(None, description="the scorer's metric (where=score)")
    agent: str | None = Field(None, description="set when grouped per agent (reports)")
    message: str
    episodes: int = Field(description="how many episodes share this error")
    example_episode: str = Field(description="one of them, to look at")

    def line(self, width: int = 300) -> str:
        """`20 episodes: agent: openai agent: no API key; ...` (message cut at `width`)."""
        n = f"{self.episodes} episode{'s' if self.episodes != 1 else ''}"
        what = self.category + (f", {self.metric}" if self.metric else "")
        if self.agent:
            what = f"{self.agent}: {what}"
        msg = self.message if len(self.message) <= width else self.message[: width - 1] + "…"
        return f"{n}: [{what}] {msg}"


def group_errors(
    summaries: Iterable[EpisodeSummary], *, by_agent: bool = False
) -> list[ErrorGroup]:
    """Episode errors first, then scorer errors; most frequent first within each."""
    groups: dict[tuple, ErrorGroup] = {}

    def add(s: EpisodeSummary, where: str, category: str | None, metric: str | None, msg: str):
        msg = (msg or "(no message recorded)").strip()[:MAX_MESSAGE_CHARS]
        agent = s.agent if by_agent else None
        key = (agent, where, category or "unknown", metric, msg)
        g = groups.get(key)
        if g is None:
            groups[key] = ErrorGroup(
                where=where,  # type: ignore[arg-type]
                category=key[2],
                metric=metric,
                agent=agent,
                message=msg,
                episodes=1,
                example_episode=s.episode_id,
            )
        else:
            g.episodes += 1

    for s in summaries:
        if s.status == "error":
            add(s, "episode", s.error_category, None, s.error or "")
        seen: set[tuple[str | None, str | None]] = set()
        for sc in s.scores:
            # one episode counts once per distinct scorer failure (several metrics of one
            # scorer usually share the message)
            if sc.status == "error" and (sc.error_category, sc.error) not in seen:
                seen.add((sc.error_category, sc.error))
                add(s, "score", sc.error_category, sc.metric, sc.error or "")
    return sorted(
        groups.values(),
        key=lambda g: (g.agent or "", g.where != "episode", -g.episodes, g.message),
    )
