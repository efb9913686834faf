"""Pydantic models for targets: what crosses process boundaries (catalog -> target service).

A `Target` carries a public part (what a prompt may say) and a hidden part (ground truth). Only the
target service and the evaluator read `hidden`; `Target.public_view()` is what anything an agent
can reach gets.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

# A registered benchmark family (interp_harness.function_store.benchmark). A plain str, not checked here: a
# Target crosses into sandboxed services that may not load a plugin's record; the catalog checks
# families against the registry where a selection names one.
Family = str
InputKind = Literal["number", "string", "word", "text"]

# The task prompt a target gets: for FIND's families the name of FIND's prompt file
# (`prompts/<name>.txt`, e.g. `numeric_mlp`); a plugin family names its own.
PromptFamily = str


class PublicMeta(BaseModel):
    """What an interpreter may be told about a target."""

    input_kind: InputKind
    prompt_family: PromptFamily
    value_range: tuple[float, float] | None = None  # numeric: the range FIND's prompt names


class HiddenTruth(BaseModel):
    """Ground truth. Never sent to an agent; carries a canary so leaks are detectable."""

    runner: str  # key into interp_harness.function_store.runtime's runner registry
    spec: dict[str, Any] = Field(default_factory=dict)  # everything the runner needs to compute
    description: str = ""  # ground-truth description in words
    code: str | None = None  # ground-truth source (as FIND would have written it), if any
    domain: list[float] | None = None  # numeric: the function's domain
    corruption: dict[str, Any] | None = None  # numeric: {"type": ..., "interval": [a, b]}
    canary: str = ""


class UnitTest(BaseModel):
    """One FIND unit-test triplet (`unit_test_data.json`). `correct` is 1-based as in FIND."""

    inputs: list[str]
    outputs: list[str] | None = None  # None for entities (inputs only)
    correct: int


class Target(BaseModel):
    id: str  # e.g. find-v1/numeric/f00473, find-gen/strings/s0/f00012
    dataset: str  # find-v1 | find-gen | find-import
    family: Family
    variant: str  # numeric: clean|noised|corrupted|mlp; strings: atomic|composed; ...
    public: PublicMeta
    hidden: HiddenTruth
    unit_tests: list[UnitTest] = Field(default_factory=list)
    exemplars: list[str] = Field(default_factory=list)
    # set when the target cannot be served (e.g. missing weights)
    unavailable_reason: str | None = None

    @property
    def available(self) -> bool:
        return self.unavailable_reason is None

    def public_view(self) -> PublicTarget:
        fields = set(PublicTarget.model_fields) - {"available"}
        return PublicTarget(**self.model_dump(include=fields), available=self.available)


class PublicTarget(BaseModel):
    """A target without its ground truth: safe to show to agents and over the API."""

    id: str
    dataset: str
    family: Family
    variant: str
    public: PublicMeta
    exemplars: list[str] = Field(default_factory=list)
    available: bool = True
    unavailable_reason: str | None = None


class CallOutput(BaseModel):
    """The result of one input of one call. `output` is the text FIND would print for it."""

    input: str
    output: str | None = None
    error: str | None = None
    # Set with `error` when the failure is not the input's fault (e.g. "infrastructure": the LM
    # backbone is down), so the episode records an error state instead of a target output.
    error_category: str | None = None


def model_target(
    tid: str,
    dataset: str,
    family: Family,
    model: str,
    runner: str,
    spec: dict[str, Any],
    description: str,
) -> Target:
    """A target inside a language model (one neuron, one entity attribute): text inputs, its
    family's own prompt, one variant per model, hidden truth carrying the canary of its id."""
    hidden = HiddenTruth(runner=runner, spec=spec, description=description, canary=make_canary(tid))
    public = PublicMeta(input_kind="text", prompt_family=family)
    return Target(
        id=tid, dataset=dataset, family=family, variant=model, public=public, hidden=hidden
    )


def make_canary(target_id: str) -> str:
    """A per-target marker string placed in hidden ground truth; it must never reach an agent."""
    import hashlib

    return "CANARY-" + hashlib.sha256(f"interp-harness:{target_id}".encode()).hexdigest()[:16]
