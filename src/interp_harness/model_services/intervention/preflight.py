"""What pre-flight needs to know about the intervention service (interp_harness.harness.runs.preflight probes it for
every target whose benchmark record declares the `intervention` service): which model a target
reads, the model ids the service reports for it, and what to say when it is missing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# catalog model key -> the model ids `harness intervention serve` reports for it
SERVED_AS: dict[str, tuple[str, ...]] = {
    "smollm2": ("smollm2",),
    "gpt2-xl": ("openai-community/gpt2-xl", "gpt2-xl"),
}

MISSING = (
    "these targets read a model through the intervention service: set HARNESS_INTERVENTION_URL "
    "(e.g. `harness intervention serve --model smollm2`, then "
    "HARNESS_INTERVENTION_URL=http://127.0.0.1:8010)"
)


def model_of(target: Any) -> str:
    """The catalog model key a target (a `interp_harness.function_store.models.Target`: this layer imports nothing
    above it) reads through the service; its hidden spec names it."""
    return str(target.hidden.spec["model"])


def serves(model: str, served: Iterable[str]) -> bool:
    """Whether a service reporting `served` model ids serves catalog model `model`."""
    return bool(set(SERVED_AS.get(model, (model,))) & set(served))


def not_served(model: str, served: list[str]) -> str:
    return (
        f"targets of model {model!r} need an intervention service serving it; "
        f"HARNESS_INTERVENTION_URL serves {', '.join(served) or 'nothing'}"
    )


def sae_of(target: Any) -> str | None:
    """The SAE (by the name the service serves it under) a target's latents come from, if any."""
    sae = target.hidden.spec.get("sae")
    return str(sae) if sae else None


def missing_saes(targets: Iterable[Any], served: Iterable[str]) -> list[str]:
    """What to say for each SAE the targets need that a service listing `served` lacks."""
    have = set(served)
    wanted = sorted({s for t in targets if (s := sae_of(t)) is not None} - have)
    return [
        f"targets of SAE {name!r} need an intervention service serving it (`harness sae build` "
        f"writes it where `harness intervention serve` finds it, or `--sae {name}=PATH`); "
        f"the service serves {', '.join(sorted(have)) or 'no SAE'}"
        for name in wanted
    ]
