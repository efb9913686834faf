"""What a run spec names: its agent class and its targets, checked."""

from __future__ import annotations

import random

from interp_harness.function_store.benchmark import benchmarks
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.agent_class import SelectionError, resolve_agent_class
from interp_harness.harness.domain.spec import CODE_MODES, TOOL_MODES, RunSpec
from interp_harness.harness.policy import ApiPolicy, check_operator_options


def resolve_checked_agent(spec: RunSpec, policy: ApiPolicy | None) -> type:
    """The run's agent class; with the REST API's `policy`, only after its spec fields, the
    agent name and the options passed the policy (RequestInvalid otherwise); without (the
    operator's CLI), only after its option names did (SelectionError naming the closest)."""
    if policy is None:
        agent_cls = resolve_agent_class(spec.agent)
        try:
            check_operator_options(agent_cls, spec.agent_options)
        except ValueError as e:
            raise SelectionError(str(e)) from None
    else:
        policy.check_spec_fields(spec.floor_for)
        agent_cls = resolve_agent_class(spec.agent, allow_dotted=policy.allow_dotted_agents)
        policy.check_options(agent_cls, spec.agent_options)
    check_protocol_mode(spec, agent_cls)
    return agent_cls


def check_protocol_mode(spec: RunSpec, agent_cls: type) -> None:
    """SelectionError when the run's protocol mode asks what the agent cannot do: modes `tools`
    and `code-tools` need an agent whose `step` takes tools (`Agent.supports_tools`); an agent
    that writes lab cells (`Agent.needs_lab`) needs mode `code` or `code-tools`."""
    from interp_harness.agents.host_protocol import no_tools

    name = getattr(agent_cls, "name", "") or agent_cls.__qualname__
    mode = str(spec.protocol.mode)
    if mode in TOOL_MODES and not getattr(agent_cls, "supports_tools", False):
        raise SelectionError(no_tools(name))
    if getattr(agent_cls, "needs_lab", False) and mode not in CODE_MODES:
        raise SelectionError(
            f"agent {name!r} writes Python cells: use protocol mode 'code' or 'code-tools' "
            f"(--mode code), not {mode!r}"
        )


def _exemplar_families() -> str:
    names = [b.family for b in benchmarks() if b.exemplars]
    if not names:
        return "no registered family"
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def select_targets(spec: RunSpec, catalog: Catalog) -> list[Target]:
    """The targets a run spec names, in run order. Raises SelectionError with what is wrong."""
    from interp_harness.function_store.catalog import UnknownDataset, UnknownTarget, check_dataset
    from interp_harness.function_store.datasets import DataUnavailable

    try:
        if spec.ids:
            targets = [catalog.get(i) for i in spec.ids]
            bad = [t.id for t in targets if t.dataset != spec.dataset]
            if bad:
                raise SelectionError(f"ids not in dataset {spec.dataset!r}: {', '.join(bad[:5])}")
            unavailable = [f"{t.id} ({t.unavailable_reason})" for t in targets if not t.available]
            if unavailable:
                raise SelectionError(f"targets unavailable: {'; '.join(unavailable[:5])}")
        else:
            check_dataset(spec.dataset)
            targets = catalog.list(dataset=spec.dataset, family=spec.family, variant=spec.variant)
            targets = [t for t in targets if t.available]
    except (UnknownTarget, UnknownDataset, DataUnavailable) as e:
        raise SelectionError(str(e)) from e
    except ValueError as e:  # e.g. unknown family
        if isinstance(e, SelectionError):
            raise
        raise SelectionError(str(e)) from e
    if spec.limit is not None and spec.limit < len(targets):
        if spec.seed is None:
            targets = targets[: spec.limit]
        else:
            targets = random.Random(spec.seed).sample(targets, spec.limit)
    if not targets:
        what = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("dataset", spec.dataset),
                ("family", spec.family),
                ("variant", spec.variant),
            )
            if v
        )
        raise SelectionError(f"empty selection: no available target matches {what}")
    if spec.protocol.method != "interactive":
        missing = [t.id for t in targets if not t.exemplars]
        if missing:
            raise SelectionError(
                f"method {spec.protocol.method!r} needs exemplars, but {len(missing)} selected "
                f"targets have none (e.g. {missing[0]}); exemplars exist for "
                f"{_exemplar_families()}"
            )
    return targets
