"""Assembling `Target` objects for numeric functions (shared by find-v1 and find-gen)."""

from __future__ import annotations

from typing import Any

from interp_harness.function_store.numeric.describe import describe_target
from interp_harness.function_store.numeric.source_text import render_mlp_source, render_source
from interp_harness.function_store.numeric.variants import served_program
from interp_harness.sdk import HiddenTruth, PublicMeta, Target, make_canary

#: the range FIND's numeric prompt tells the interpreter to test ("between [-128 and 128]")
VALUE_RANGE = (-128.0, 128.0)


def corruption_interval(corruption: dict[str, Any]) -> list[float | None]:
    """The corrupted region; None marks an open end (it extends past the tested range)."""
    b = corruption["boundary"]
    if corruption["type"] == "interval_inside":
        return [b[0], b[1]]
    if corruption["type"] == "interval_smaller":
        return [None, b[0]]
    return [b[0], None]


def numeric_target(
    *,
    target_id: str,
    dataset: str,
    variant: str,
    fn: dict[str, Any],
    domain: list[float],
    noise: str | None,
    corruption: dict[str, Any] | None,
    release: bool,
    mlp: dict[str, Any] | None = None,
    extra_spec: dict[str, Any] | None = None,
    unavailable_reason: str | None = None,
) -> Target:
    """One numeric target. `noise`/`corruption` must be set only for those variants."""
    if variant == "mlp":
        runner = "mlp-v1" if release else "mlp-gen"
        code = render_mlp_source()
    else:
        runner = "numeric-v1" if release else "numeric-gen"
        code = render_source(
            served_program(fn, noise=noise, corruption=corruption, release=release)
        )
    spec: dict[str, Any] = {
        "function": fn,
        "domain": list(domain),
        "noise": {"type": noise, "scale": 1} if noise else None,
        "corruption": corruption,
    }
    if mlp is not None:
        spec["mlp"] = mlp
    if extra_spec:
        spec.update(extra_spec)
    hidden = HiddenTruth(
        runner=runner,
        spec=spec,
        description=describe_target(
            fn, variant=variant, noise=noise, corruption=corruption, release=release
        ),
        code=code,
        domain=list(domain),
        corruption=(
            {"type": corruption["type"], "interval": corruption_interval(corruption)}
            if corruption
            else None
        ),
        canary=make_canary(target_id),
    )
    return Target(
        id=target_id,
        dataset=dataset,
        family="numeric",
        variant=variant,
        public=PublicMeta(
            input_kind="number",
            prompt_family="numeric_mlp" if variant == "mlp" else "numeric",
            value_range=VALUE_RANGE,
        ),
        hidden=hidden,
        unavailable_reason=unavailable_reason,
    )


def source_for(target: Target) -> str:
    """The `function_code.py` text of a numeric target, rendered from its spec."""
    if target.variant == "mlp":
        return render_mlp_source()
    spec = target.hidden.spec
    return render_source(
        served_program(
            spec["function"],
            noise=(spec.get("noise") or {}).get("type"),
            corruption=spec.get("corruption"),
            release=target.hidden.runner.endswith("-v1"),
        )
    )
