"""What delphi's detection and fuzzing scorers share (Paulo et al. 2024, §3 "Scoring"; EleutherAI
delphi, `scorers/classifier`): a scorer model is shown an explanation and one text at a time and
says whether the text fits it; its predictions on labelled texts give accuracy, balanced accuracy
and AUC (from the scorer's probability of "yes").

Facts carried over from delphi:
- one example per prompt (its Classifier's default `n_examples_shown=1`; more per prompt leaks
  information between examples, its config warns);
- the probability of "yes" is P(1) / (P(0) + P(1)) from the answer token's logprobs;
- a verdict that cannot be read is left out of the metrics and counted as failed;
- AUC is the ROC AUC of the labels against that probability (its `roc_auc_score`), balanced
  accuracy the mean of the true positive and true negative rates.

Two deciders behind `Decider`: the judge (forced choice on the project's own server: one token
"1" / "0", its logprobs give the probability; other endpoints: the reply's first 0/1, so the
probability is 0 or 1) and a lexical offline decider (the task's rule over the explanation's
strings, interp_harness.evaluator.token_activations.membership). A judge failure raises `JudgeError`: the caller makes it
an error state, never a 0.
"""

from __future__ import annotations

import asyncio
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from interp_harness.evaluator.judge import JudgeClient, JudgeError
from interp_harness.evaluator.token_activations.membership import LexicalMembership

METRICS = ("accuracy", "balanced_accuracy", "auc")
OPTIONS = ["1", "0"]  # forced choice: "1" = yes (fits the explanation), "0" = no
PREFILL = "Answer: "  # the answer format the tasks' system prompts ask for
_GENERATED = re.compile(r"(?<![0-9])([01])(?![0-9])")


@dataclass(frozen=True)
class Sample:
    """One text shown to the decider, with its true label."""

    text: str  # what the decider reads (fuzzing: with << >> marks)
    label: bool  # detection: the latent fires; fuzzing: the marks are on its activating tokens
    tokens: tuple[str, ...] = ()
    marked: tuple[int, ...] = ()  # fuzzing: the marked token positions
    quantile: int | None = None  # detection: the activation quantile an activating text came from


@dataclass(frozen=True)
class Decision:
    prediction: bool
    score: float  # the decider's probability that the sample fits (0/1 for a hard decider)


@dataclass(frozen=True)
class Task:
    """One scorer's prompt and lexical rule."""

    name: str  # detection | fuzzing
    system: str
    render: Callable[[str, Sample], str]  # (explanation, sample) -> the user message
    lexical: Callable[[LexicalMembership, Sample], bool]


@dataclass
class Job:
    """One explanation's samples (the agent's, or the reference's for the ceiling)."""

    explanation: str
    samples: list[Sample] = field(default_factory=list)


class Decider(ABC):
    name: str = ""

    @abstractmethod
    async def decide(self, task: Task, jobs: Sequence[Job]) -> list[list[Decision | None]]:
        """One decision per sample of each job (None: the verdict could not be read)."""


class LexicalDecider(Decider):
    name = "lexical"

    async def decide(self, task: Task, jobs: Sequence[Job]) -> list[list[Decision | None]]:
        out = []
        for j in jobs:
            member = LexicalMembership(j.explanation)
            hits = [task.lexical(member, s) for s in j.samples]
            out.append([Decision(h, float(h)) for h in hits])
        return out


class JudgeDecider(Decider):
    """The judge, one prompt per sample. Forced choice sends all prompts of all jobs as one batch."""

    name = "judge"

    def __init__(self, judge: JudgeClient, concurrency: int = 8) -> None:
        self.judge = judge
        self.concurrency = concurrency

    async def decide(self, task: Task, jobs: Sequence[Job]) -> list[list[Decision | None]]:
        prompts = [task.render(j.explanation, s) for j in jobs for s in j.samples]
        if not prompts:
            return [[] for _ in jobs]
        if await self.judge.mode() == "forced-choice":
            replies = await self.judge.choose(task.system, prompts, OPTIONS, PREFILL)
            flat: list[Decision | None] = [_forced(r.logprobs) for r in replies]
        else:
            sem = asyncio.Semaphore(self.concurrency)

            async def one(p: str) -> Decision | None:
                async with sem:
                    return generated((await self.judge.complete(task.system, p)).text)

            flat = list(await asyncio.gather(*(one(p) for p in prompts)))
        out, i = [], 0
        for j in jobs:
            out.append(flat[i : i + len(j.samples)])
            i += len(j.samples)
        return out


def _forced(logprobs: list[float]) -> Decision:
    lp1, lp0 = logprobs  # in OPTIONS order
    p = 1.0 / (1.0 + math.exp(lp0 - lp1))  # P(1) / (P(0) + P(1))
    return Decision(lp1 >= lp0, p)


def generated(reply: str) -> Decision | None:
    """A written verdict: the first standalone 0 or 1 after the answer prefix if there is one,
    else in the whole reply; none is an unreadable verdict."""
    at = reply.find(PREFILL.strip())
    m = _GENERATED.search(reply, at if at >= 0 else 0)
    if m is None:
        return None
    yes = m.group(1) == "1"
    return Decision(yes, float(yes))


def auc(labels: Sequence[bool], scores: Sequence[float]) -> float | None:
    """ROC AUC by the Mann-Whitney formula: the probability that a positive scores above a
    negative, ties counting one half (average ranks). None without both classes."""
    on = [s for s, y in zip(scores, labels, strict=True) if y]
    off = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not on or not off:
        return None
    from scipy.stats import mannwhitneyu  # U of the positives, average ranks for ties

    return float(mannwhitneyu(on, off).statistic) / (len(on) * len(off))


def metrics(samples: Sequence[Sample], decisions: Sequence[Decision | None]) -> dict:
    """accuracy, balanced accuracy and AUC over the readable decisions, and the counts."""
    pairs = [(s.label, d) for s, d in zip(samples, decisions, strict=True) if d is not None]
    labels = [y for y, _ in pairs]
    pos = sum(labels)
    neg = len(labels) - pos
    tp = sum(1 for y, d in pairs if y and d.prediction)
    tn = sum(1 for y, d in pairs if not y and not d.prediction)
    return {
        "accuracy": (tp + tn) / len(pairs) if pairs else None,
        "balanced_accuracy": (tp / pos + tn / neg) / 2 if pos and neg else None,
        "auc": auc(labels, [d.score for _, d in pairs]),
        "counts": {
            "samples": len(samples),
            "failed": len(samples) - len(pairs),
            "positives": pos,
            "negatives": neg,
            "true_positives": tp,
            "true_negatives": tn,
        },
    }


async def run(task: Task, decider: Decider, jobs: Sequence[Job]) -> list[dict]:
    """Each job's metrics (see `metrics`) with its decisions; raises JudgeError when the judge
    fails or every verdict of a job is unreadable."""
    decided = await decider.decide(task, jobs)
    out = []
    for j, ds in zip(jobs, decided, strict=True):
        if j.samples and all(d is None for d in ds):
            raise JudgeError(f"{task.name}: none of the {len(ds)} verdicts could be read")
        m = metrics(j.samples, ds)
        m["decisions"] = [
            {"label": s.label, "prediction": d.prediction if d else None,
             "score": round(d.score, 4) if d else None}
            for s, d in zip(j.samples, ds, strict=True)
        ]  # fmt: skip
        out.append(m)
    return out
