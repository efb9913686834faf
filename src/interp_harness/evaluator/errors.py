"""Errors grouped for people: one line per distinct (where, category, message) with how many
episodes share it, so that "20 episodes: openai agent: no API key; ..." is what a summary says
instead of "error: agent 20".

Used by every place that summarises episodes: the evaluator's report, the REST run detail and
the CLI (`harness run`, `harness runs show`, `harness report`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from interp_harness.evaluator.api import EpisodeSummary
from interp_harness.evaluator.error_text import bounded, cause

MAX_MESSAGE_CHARS = 4000  # a message is kept whole up to here (provider errors can be long)


class ErrorGroup(BaseModel):
    where: Literal["episode", "score"] = Field(
        description="episode: the episode ended in error; score: a scorer failed on a finished one"
    )
    category: str = Field(description="agent | target | judge | sandbox | infrastructure | ...")
    metric: str | None = Field(None, description="the scorer's metric (where=score)")
    agent: str | None = Field(None, description="set when grouped per agent (reports)")
    cause: str = Field(
        "",
        description="what the error says first: the exception and its message, the provider's "
        "own error text (interp_harness.evaluator.error_text); the group's key with where, category and metric",
    )
    message: str = Field(
        description="the full text of one of them (past 4,000 characters its middle is cut)"
    )
    episodes: int = Field(description="how many episodes share this error")
    example_episode: str = Field(description="one of them, to look at")

    @model_validator(mode="after")
    def _with_cause(self) -> ErrorGroup:
        if not self.cause:  # a group stored before causes were kept
            self.cause = cause(self.message) or self.message
        return self

    def line(self, width: int = 300) -> str:
        """`20 episodes: [agent] openai agent: no API key` (the cause, cut at `width`)."""
        n = f"{self.episodes} episode{'s' if self.episodes != 1 else ''}"
        what = self.category + (f", {self.metric}" if self.metric else "")
        if self.agent:
            what = f"{self.agent}: {what}"
        msg = self.cause or self.message
        msg = msg if len(msg) <= width else msg[: width - 1] + "…"
        return f"{n}: [{what}] {msg}"


def group_errors(
    summaries: Iterable[EpisodeSummary], *, by_agent: bool = False
) -> list[ErrorGroup]:
    """Episode errors first, then scorer errors; most frequent first within each. Errors with
    the same cause are one group (Inspect's messages differ in the request dumped before it)."""
    groups: dict[tuple, ErrorGroup] = {}

    def add(s: EpisodeSummary, where: str, category: str | None, metric: str | None, msg: str):
        msg = (msg or "(no message recorded)").strip()
        said = cause(msg) or msg
        msg = bounded(msg, MAX_MESSAGE_CHARS)
        agent = s.agent if by_agent else None
        key = (agent, where, category or "unknown", metric, said)
        g = groups.get(key)
        if g is None:
            groups[key] = ErrorGroup(
                where=where,  # type: ignore[arg-type]
                category=key[2],
                metric=metric,
                agent=agent,
                cause=said,
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
        key=lambda g: (g.agent or "", g.where != "episode", -g.episodes, g.cause),
    )
