"""How much of an agent's answer each metric reads, and what an answer a metric cannot read
scores (docs/evaluator.md, "Answers a metric cannot read").

The rule: a failure the agent's own answer causes (no [DESCRIPTION], a description or code longer
than the metric reads, a localisation that does not parse) is the agent's score: status "ok", the
metric's worst value (`WORST`), the reason in `details["failure"]` (shown by the episode page
and `harness runs show EPISODE`) and its kind in `details["agent_failure"]`. It is never an error
state, which reports leave out of means: an agent could otherwise escape a low score by breaking
the scorer. Only failures of the infrastructure (a judge, a simulator, a service, a sandbox) are
error states. Lengths are checked before any remote call, so a refused text never reaches a
model server; the reference's ceiling is then computed as for any other answer.

Descriptions are bounded in UTF-8 bytes, not characters: every tokenizer of the models that read
them (byte-level BPE, SentencePiece with byte fallback) spends at most one token per byte, so a
bound in bytes bounds the tokens whatever the script; for English text bytes and characters are
the same number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from interp_harness.evaluator.api import ScoreResult

NO_DESCRIPTION = "no [DESCRIPTION] in the final answer"

AgentFailure = Literal["too_long", "no_description", "unparsable"]


@dataclass(frozen=True)
class Bound:
    limit: int
    unit: Literal["bytes", "characters"]
    why: str


# Why 4,000 bytes (at most 4,000 tokens): the judge and the simulator read the description inside
# prompts of their own of at most about 1,500 bytes (measured: FIND's unit-test prompts 1,011,
# the simulator's 1,285 for the released neurons' texts), and the project's backbone (SmolLM2,
# the default judge and simulator) takes 8,192 tokens, so no text within the bound overflows it.
# FIND's judge (vicuna-13b, 2,048 tokens) takes 4,000 bytes of English (about 1,000 tokens).
# Honest descriptions are far shorter: the 255 released GPT-4 neuron explanations are at most 122
# characters, FIND's true descriptions one or two sentences.
_DESCRIPTION_WHY = (
    "the judge's and the simulator's prompts hold the description beside about 1,500 bytes of "
    "their own; 4,000 bytes are at most 4,000 tokens, which fit the backbone's 8,192"
)
DESCRIPTION_BYTES = 4_000
CODE_CHARS = 100_000
RAVEL_ANSWER_CHARS = 4 * 1024 * 1024

BOUNDS: dict[str, Bound] = {
    "unit_test": Bound(DESCRIPTION_BYTES, "bytes", "FIND's judge prompt: " + _DESCRIPTION_WHY),
    "simulation": Bound(
        DESCRIPTION_BYTES, "bytes", "the simulator's prompt, once per text: " + _DESCRIPTION_WHY
    ),
    "detection": Bound(DESCRIPTION_BYTES, "bytes", "delphi's judge prompt: " + _DESCRIPTION_WHY),
    "fuzzing": Bound(DESCRIPTION_BYTES, "bytes", "delphi's judge prompt: " + _DESCRIPTION_WHY),
    # read lexically here, but by the same description that the model-read metrics bound: one
    # bound per description, so an answer is never half refused
    "observational": Bound(
        DESCRIPTION_BYTES, "bytes", "the same description as the simulation score's"
    ),
    # a FIND function is a few lines; the largest honest answers embed a table of the samples the
    # agent took (1,024 points, about 20,000 characters); the code travels to the scoring sandbox
    # with up to 99 other answers of its chunk, so 100 of them stay about 10 MB of its input
    "code": Bound(
        CODE_CHARS, "characters", "five times a table of 1,024 samples; a chunk stays ~10 MB"
    ),
    # a [FEATURIZER] upload is registered with the intervention service, whose request body is
    # 16 MiB by default: 4 MiB of answer leave room for its JSON (a full-rank 576x576 rotation of
    # SmolLM2 is 1.8 MB); an episode's answer is bounded by the message cap (262,144) before this
    "localisation": Bound(
        RAVEL_ANSWER_CHARS, "characters", "under the intervention service's 16 MiB request body"
    ),
}

# The worst value of each metric: the lowest it can take. A correlation's is -1; NMSE has no
# finite worst and a failed code answer already scores it None (code_success 0), as here.
WORST: dict[str, float | None] = {
    "unit_test": 0.0,
    "unit_test_strict": 0.0,
    "simulation_top_random": -1.0,
    "simulation_all": -1.0,
    "observational_precision": 0.0,
    "observational_recall": 0.0,
    "observational_f1": 0.0,
    "observational_mcc": -1.0,  # a correlation, as the simulation's
    **{f"{t}_{m}": 0.0 for t in ("detection", "fuzzing")
       for m in ("accuracy", "balanced_accuracy", "auc")},
    "iia": 0.0,
    "code_success": 0.0,
    "nmse": None,
    "string_exact": 0.0,
    "string_exact_find": 0.0,
    "domain_iou": 0.0,
    "disentangle": 0.0,
    "cause": 0.0,
    "isolate": 0.0,
}  # fmt: skip


def size(text: str, unit: Literal["bytes", "characters"]) -> int:
    # surrogatepass: a lone surrogate (possible in JSON-decoded text) counts, never raises
    return len(text.encode("utf-8", "surrogatepass")) if unit == "bytes" else len(text)


@dataclass(frozen=True)
class Refusal:
    """Why a metric cannot read the agent's answer."""

    reason: str
    kind: AgentFailure


def too_long(text: str, bound: str, what: str = "description") -> Refusal | None:
    """Why `text` is more than the metric family `bound` reads, or None when it is not."""
    b = BOUNDS[bound]
    n = size(text, b.unit)
    if n <= b.limit:
        return None
    measured = f"{len(text):,} characters"
    if b.unit == "bytes":
        measured += f" ({n:,} bytes of UTF-8)"
    return Refusal(
        f"the {what} is {measured}; {bound} reads at most {b.limit:,} {b.unit}", "too_long"
    )


def description_refusal(description: str, bound: str) -> Refusal | None:
    """Why the metric family `bound` cannot read `description` (none given, or too long)."""
    if not description.strip():
        return Refusal(NO_DESCRIPTION, "no_description")
    return too_long(description, bound)


def refused(metrics: Sequence[str], why: Refusal, **details: Any) -> list[ScoreResult]:
    """Each metric at its worst value, an ok score with the reason: the agent's score. A metric
    missing from WORST raises KeyError (a family adding one must say what its worst is)."""
    return [
        ScoreResult(
            metric=m,
            value=WORST[m],
            details={**details, "failure": why.reason, "agent_failure": why.kind},
        )
        for m in metrics
    ]
