"""FIND's LM-judge unit tests (`unit_testing.py`): the judge sees a description and three examples
and names the one that the described function would produce.

- Prompts: each family's `UnitTestPrompt` (its scorer holds it): FIND's original template file
  when the data directory has it (`find/prompts/evaluator/<file>.txt`), else our typed copy of the
  text (`PAIRS_TEMPLATE`, `SELECTIVITY_TEMPLATE`); filled with plain `str.replace` in FIND's order
  (DESC, then IN0/OUT0 ... IN2/OUT2), without escaping, exactly as FIND does.
- Answer parsing, both reported: `find-compat` counts a triplet correct iff the 1-based index
  appears *anywhere* in the reply (FIND's substring test); `strict` requires `[ANSWER]: n` with
  n the correct index.
- Score: per function, the mean over its 10 triplets; category scores are means over functions.
- Every verdict keeps the judge's model id, the prompt hash and the raw reply. A judge failure on
  any triplet makes the function's score an error state (category "judge"), never a 0.
- A description the judge cannot be given (none, or longer than `answer_bounds` allows) is never
  sent: it scores 0, the agent's score with the reason; the ceiling is judged as usual.
- Judge modes (`interp_harness.evaluator.judge`): `generate` (FIND's) asks for each triplet separately;
  `forced-choice` (the project's small server only) sends all triplets of all descriptions scored
  together as ONE batch, continues "[ANSWER]: " with one token restricted to "1" / "2" / "3", and
  keeps each index's logprob in the verdict. The reply recorded is then "[ANSWER]: k", the text
  the judge produced, so both parsings agree.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from dataclasses import dataclass

from pydantic import BaseModel

from interp_harness.evaluator.answer_bounds import description_refusal, refused
from interp_harness.evaluator.api import EpisodeStats, ScoreResult
from interp_harness.evaluator.judge import JudgeClient, JudgeError, JudgeNotConfigured
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.scorer import Scorer, ScoringContext, score_parts
from interp_harness.function_store.datasets import DataUnavailable, data_path
from interp_harness.function_store.models import Target, UnitTest

SYSTEM_PROMPT = (
    "You are a helpful assistant. You indicate which of the input-output mapping examples provided "
    "by the user is a possible execution of the function provided by the user. Answer with only the "
    "following format: '[ANSWER]: <index>' where <index> represent the numerical value of the "
    "correct example. Do not include any additional information in the answer."
)

_REPLY_FORMAT = (
    'Reply in the following format: \n"[ANSWER]: <index>", where <index> represents the numerical '
    "value of the correct example.\nOnly include the numerical index of the example.\n"
)
# FIND's template over input-output pairs (its string and relation functions)
PAIRS_TEMPLATE = (
    "Below is a textual description of a function f(x):\nDESC\nWhich one of the following pairs of "
    "input-output strings are correct executions of f(x)?\nExample 1: input = IN0, output = OUT0\n"
    "Example 2: input = IN1, output = OUT1\nExample 3: input = IN2, output = OUT2\n" + _REPLY_FORMAT
)
# FIND's template over the inputs a concept is selective for (its entity functions)
SELECTIVITY_TEMPLATE = (
    "Below is a textual description of a function f(x), which is selective for a specific concept:"
    "\nDESC\nWhich one of the following input examples will the function be most selective for? \n"
    "Example 1: input = IN0\nExample 2: input = IN1\nExample 3: input = IN2\n" + _REPLY_FORMAT
)


@dataclass(frozen=True)
class UnitTestPrompt:
    """A family's judge template: FIND's own file when the data has it, else our typed copy."""

    find_file: str  # the file's stem in find/prompts/evaluator/
    builtin: str


OPTIONS = ["1", "2", "3"]  # the 1-based indices a verdict can name
PREFILL = "[ANSWER]: "  # forced choice continues the answer format the system prompt asks for
_STRICT = re.compile(r"\[ANSWER\]\s*:\s*(\d+)")


def load_template(prompt: UnitTestPrompt) -> tuple[str, str]:
    """(template, source): the original file when present, else the built-in copy."""
    try:
        path = data_path(f"find/prompts/evaluator/{prompt.find_file}.txt")
        return path.read_text(encoding="utf-8"), str(path)
    except DataUnavailable:
        return prompt.builtin, "builtin"


def fill(template: str, description: str, test: UnitTest) -> str:
    text = template.replace("DESC", description)
    for i in range(3):
        text = text.replace(f"IN{i}", test.inputs[i])
        if test.outputs is not None:
            text = text.replace(f"OUT{i}", test.outputs[i])
    return text


def prompt_hash(system: str, template: str) -> str:
    return hashlib.sha256((system + "\x00" + template).encode()).hexdigest()[:16]


def correct_find_compat(reply: str, correct: int) -> bool:
    return str(correct) in reply


def strict_answer(reply: str) -> int | None:
    m = _STRICT.search(reply)
    return int(m.group(1)) if m else None


class Verdict(BaseModel):
    triplet: int
    correct_index: int
    reply: str | None = None
    model: str | None = None
    find_compat: bool | None = None
    strict_answer: int | None = None
    strict: bool | None = None
    logprobs: dict[str, float] | None = None  # forced choice: each index's logprob
    error: str | None = None


@dataclass
class Job:
    """One description to test against one function's unit tests, scored as `metric`."""

    description: str
    unit_tests: list[UnitTest]
    metric: str = "unit_test"


async def judge_description(
    judge: JudgeClient,
    prompt: UnitTestPrompt,
    description: str,
    unit_tests: list[UnitTest],
    *,
    metric: str = "unit_test",
    semaphore: asyncio.Semaphore | None = None,
) -> list[ScoreResult]:
    """Run the unit tests of one function; returns `<metric>` and `<metric>_strict`."""
    (res,) = await judge_jobs(
        judge, prompt, [Job(description, unit_tests, metric)], semaphore=semaphore
    )
    return res


def _verdict(k: int, test: UnitTest, reply: str, model: str, **extra: object) -> Verdict:
    ans = strict_answer(reply)
    return Verdict(
        triplet=k,
        correct_index=test.correct,
        reply=reply,
        model=model,
        find_compat=correct_find_compat(reply, test.correct),
        strict_answer=ans,
        strict=ans == test.correct,
        **extra,
    )


async def _generate(
    judge: JudgeClient, prompts: list[str], tests: list[UnitTest], sem: asyncio.Semaphore
) -> list[Verdict]:
    async def one(k: int, prompt: str, test: UnitTest) -> Verdict:
        async with sem:
            try:
                reply = await judge.complete(SYSTEM_PROMPT, prompt)
            except JudgeError as e:
                return Verdict(triplet=k, correct_index=test.correct, error=str(e))
        return _verdict(k, test, reply.text, reply.model)

    return list(
        await asyncio.gather(
            *(one(k, p, t) for k, (p, t) in enumerate(zip(prompts, tests, strict=True)))
        )
    )


async def _forced_choice(
    judge: JudgeClient, prompts: list[str], tests: list[UnitTest]
) -> list[Verdict]:
    try:
        replies = await judge.choose(SYSTEM_PROMPT, prompts, OPTIONS, PREFILL)
    except JudgeError as e:
        return [
            Verdict(triplet=k, correct_index=t.correct, error=str(e)) for k, t in enumerate(tests)
        ]
    return [
        _verdict(
            k,
            t,
            PREFILL + OPTIONS[r.choice],
            r.model,
            logprobs=dict(zip(OPTIONS, r.logprobs, strict=True)),
        )
        for k, (t, r) in enumerate(zip(tests, replies, strict=True))
    ]


async def judge_jobs(
    judge: JudgeClient,
    prompt: UnitTestPrompt,
    jobs: list[Job],
    *,
    semaphore: asyncio.Semaphore | None = None,
) -> list[list[ScoreResult]]:
    """Unit tests of several descriptions at once (e.g. an agent's and the ground truth's); in
    forced-choice mode all their triplets go to the judge as one batch. One result list per job."""
    template, source = load_template(prompt)
    sem = semaphore or asyncio.Semaphore(8)
    phash = prompt_hash(SYSTEM_PROMPT, template)
    mode = await judge.mode()
    prompts = [fill(template, j.description, t) for j in jobs for t in j.unit_tests]
    tests = [t for j in jobs for t in j.unit_tests]
    if mode == "forced-choice":
        flat = await _forced_choice(judge, prompts, tests) if tests else []
    else:
        flat = await _generate(judge, prompts, tests, sem)
    out = []
    i = 0
    for j in jobs:
        verdicts = flat[i : i + len(j.unit_tests)]
        for k, v in enumerate(verdicts):
            v.triplet = k
        i += len(j.unit_tests)
        out.append(_results(judge, j, verdicts, mode, phash, source))
    return out


def _results(
    judge: JudgeClient, job: Job, verdicts: list[Verdict], mode: str, phash: str, source: str
) -> list[ScoreResult]:
    metric = job.metric
    models = sorted({v.model for v in verdicts if v.model})
    details = {
        "judge_model": models[0] if len(models) == 1 else models,
        "requested_model": judge.model,
        "judge_mode": mode,
        "prompt_hash": phash,
        "prompt_source": source,
        "verdicts": [v.model_dump() for v in verdicts],
    }
    errors = [v for v in verdicts if v.error]
    if not job.unit_tests:
        return [
            ScoreResult(
                metric=m,
                status="error",
                error_category="target",
                error="target has no unit tests",
                details=details,
            )
            for m in (metric, f"{metric}_strict")
        ]
    if errors:
        msg = f"judge failed on {len(errors)}/{len(verdicts)} triplets: {errors[0].error}"
        return [
            ScoreResult(
                metric=m, status="error", error_category="judge", error=msg, details=details
            )
            for m in (metric, f"{metric}_strict")
        ]
    n = len(verdicts)
    return [
        ScoreResult(
            metric=metric, value=sum(bool(v.find_compat) for v in verdicts) / n, details=details
        ),
        ScoreResult(
            metric=f"{metric}_strict",
            value=sum(bool(v.strict) for v in verdicts) / n,
            details=details,
        ),
    ]


_CEILING_CACHE: dict[tuple[str, str, str, str, int], list[ScoreResult]] = {}


async def judge_scores(
    target: Target, description: str, parser: str, ctx: ScoringContext, prompt: UnitTestPrompt
) -> list[ScoreResult]:
    """The judge's unit-test scores of a description (and the ground truth's, the ceiling, once
    per target and judge when HARNESS_JUDGE_CEILING is on)."""
    js = ctx.judge_settings
    try:
        judge = ctx.judge()
    except JudgeError as e:
        configured = not isinstance(e, JudgeNotConfigured)
        return [
            ScoreResult(
                metric=m,
                status="error",
                error_category="judge",
                error=str(e),
                details={"judge_configured": configured},
            )
            for m in ("unit_test", "unit_test_strict")
        ]
    # checked before any request: a description the judge cannot be given (none, too long) is
    # never sent, and scores the worst value (only the ceiling is judged)
    refusal = description_refusal(description, "unit_test")
    try:
        mode = await judge.mode()
        template, _ = load_template(prompt)
        ceiling_tests = target.unit_tests[: js.ceiling_tests]
        key = (
            target.id,
            judge.model,
            prompt_hash(SYSTEM_PROMPT, template),
            mode,
            len(ceiling_tests),
        )
        jobs = [] if refusal else [Job(description, target.unit_tests)]
        if js.ceiling and key not in _CEILING_CACHE:
            # the ceiling's triplets go with the agent's (forced choice: in the same batch)
            jobs.append(Job(target.hidden.description, ceiling_tests, "unit_test_ceiling"))
        sem = asyncio.Semaphore(js.concurrency)
        t0 = time.perf_counter()
        results = await judge_jobs(judge, prompt, jobs, semaphore=sem) if jobs else []
        wall = round(time.perf_counter() - t0, 3)
        if refusal:
            details = {"judge_model": judge.model, "judge_mode": mode}
            results.insert(0, refused(("unit_test", "unit_test_strict"), refusal, **details))
        scores = results[0]
        for r in scores:
            r.details["parser"] = parser
            r.details["judge_wall_s"] = wall  # all of this episode's judge calls, ceiling included
        if len(results) > 1:
            ceiling = results[1]
            # never cache an error: the next episode retries it
            if all(r.status == "ok" for r in ceiling):
                _CEILING_CACHE[key] = ceiling
            scores += ceiling
        elif js.ceiling:
            scores += [r.model_copy(deep=True) for r in _CEILING_CACHE[key]]
        return scores
    finally:
        await judge.aclose()


class JudgeScorer(Scorer):
    """A description scored by the judge's unit tests only, with the family's prompt."""

    metrics = ("unit_test", "unit_test_strict")

    def __init__(self, prompt: UnitTestPrompt) -> None:
        self.prompt = prompt

    async def score(
        self, target: Target, final_answer: str, stats: EpisodeStats, ctx: ScoringContext
    ) -> list[ScoreResult]:
        parsed = parse_answer(final_answer or "", ctx.settings.parser)
        return await score_parts(
            [lambda: judge_scores(target, parsed.description, parsed.parser, ctx, self.prompt)],
            stats,
        )
