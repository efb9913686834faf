"""The task factory behind `interp_harness/find`, `interp_harness/neurons` and
`interp_harness/ravel`: the targets `harness run` would select for the same dataset, family, limit
and seed (harness/runs/selection.py), one sample per target, the solver of the protocol, and the
harness's scorer. Generic: the tasks differ only in the datasets they cover
(interp_harness/_registry.py names them)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from typing import Literal, cast

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from pydantic import ValidationError

from interp_harness.function_store.benchmark import benchmark, benchmarks
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.catalogs import CatalogCache
from interp_harness.harness.domain.spec import Budgets, ProtocolOptions, RunSpec
from interp_harness.harness.episode.runner import offered_tools, prompts
from interp_harness.harness.inspect_tasks.lab_tool import FIGURES, Figures, close_sample_lab
from interp_harness.harness.inspect_tasks.resources import resources
from interp_harness.harness.inspect_tasks.scoring import interp_harness_scorer
from interp_harness.harness.inspect_tasks.solvers import harness_react, tools_setup
from interp_harness.harness.inspect_tasks.text import AGENT_LABEL, text_loop
from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.prompt import lab_note
from interp_harness.harness.runs.selection import SelectionError, select_targets

# "code": the tools plus `run_python`, a cell of the sample's lab (harness mode `code-tools`)
Protocol = Literal["tools", "text", "code"]
PROTOCOLS: tuple[str, ...] = ("tools", "text", "code")
TOOL_PROTOCOLS: tuple[str, ...] = ("tools", "code")
TEXT_MODES: tuple[str, ...] = ("find-compat", "default")
MODES = {"tools": "tools", "code": "code-tools"}  # the harness's protocol mode of each


class TaskParameterError(ValueError):
    """A task parameter (`-T name=value`) that cannot work; the message says what is allowed."""


def task_families(datasets: Sequence[str]) -> list[str]:
    """The registry's families that one of `datasets` serves (in registry order)."""
    return [b.family for b in benchmarks() if any(d in b.sources for d in datasets)]


def sample_prompt(target: Target, protocol: Protocol) -> str:
    """The task prompt the harness gives an agent for `target` (tools: with the note mapping the
    commands to tools; code: with `run_python` among them, and the lab's note), as
    `EpisodeRunner` builds it for an interactive episode."""
    text = prompts.task_prompt(target.public.prompt_family)
    commands = benchmark(target.family).commands
    if protocol == "tools":
        return text + prompts.tools_note(commands)
    if protocol == "code":
        limits = LabLimits.from_settings(resources().settings)
        tools = offered_tools(target.family, "code-tools")
        return text + prompts.tools_note(tools) + lab_note(commands, limits, tools=True)
    return text


def _sample(target: Target, protocol: Protocol) -> Sample:
    # public facts only: ground truth stays in the target, which only this process and the
    # target's sandboxed service hold
    return Sample(
        id=target.id,
        input=sample_prompt(target, protocol),
        target="",
        metadata={"dataset": target.dataset, "family": target.family, "variant": target.variant},
    )


def benchmark_task(
    datasets: Sequence[str],
    *,
    dataset: str,
    family: str | None = None,
    variant: str | None = None,
    limit: int | None = None,
    seed: int | None = 0,
    gen_seed: int = 0,
    protocol: str = "tools",
    text_mode: str = "find-compat",
    max_rounds: int = 20,
    max_target_calls: int | None = None,
    max_tokens: int | None = None,
    max_wall_s: float | None = None,
    figures: str = "image",
) -> Task:
    """One Inspect task over the targets of `dataset` (one of `datasets`), narrowed to `family`.
    Budgets: `max_rounds` and `max_target_calls` are counted as the harness counts them;
    `max_tokens` and `max_wall_s` are Inspect's own token and time limits of each sample."""
    if dataset not in datasets:
        raise TaskParameterError(
            f"unknown dataset {dataset!r}; this task has: {', '.join(datasets)}"
        )
    families = task_families([dataset])
    if family is not None and family not in families:
        raise TaskParameterError(
            f"unknown family {family!r} for dataset {dataset!r}; known: {', '.join(families)}"
        )
    if protocol not in PROTOCOLS:
        raise TaskParameterError(f"unknown protocol {protocol!r}; one of: {', '.join(PROTOCOLS)}")
    if figures not in FIGURES:
        raise TaskParameterError(f"unknown figures {figures!r}; one of: {', '.join(FIGURES)}")
    if text_mode not in TEXT_MODES:
        raise TaskParameterError(
            f"unknown text_mode {text_mode!r}; one of: {', '.join(TEXT_MODES)}"
        )
    if protocol in TOOL_PROTOCOLS:
        no_tools = [f for f in ([family] if family else families) if not benchmark(f).commands]
        if no_tools:
            raise TaskParameterError(
                f"protocol {protocol!r} needs declared commands; {', '.join(no_tools)} has none "
                "(use protocol 'text')"
            )
    try:
        spec = RunSpec(
            agent=AGENT_LABEL,
            dataset=dataset,
            family=family,
            variant=variant,
            limit=limit,
            seed=seed,
            gen_seed=gen_seed,
            protocol=ProtocolOptions(mode=MODES.get(protocol, text_mode)),  # type: ignore[arg-type]
            budgets=Budgets(max_rounds=max_rounds, max_target_calls=max_target_calls),
        )
        targets = select_targets(spec, CatalogCache(max_seeds=1).get(gen_seed))
    except ValidationError as e:
        raise TaskParameterError(_problems(e)) from None
    except SelectionError as e:
        raise TaskParameterError(str(e)) from None
    resources().add_targets(targets)
    samples = [_sample(t, protocol) for t in targets]  # type: ignore[arg-type]
    code = protocol == "code"
    if protocol in TOOL_PROTOCOLS:
        shown = cast(Figures, figures)  # checked against FIGURES above
        setup = tools_setup(max_target_calls, code=code, figures=shown)
        solver = harness_react(max_rounds, max_target_calls, code=code, figures=shown)
    else:
        setup = None
        solver = text_loop(text_mode, max_rounds, max_target_calls)  # type: ignore[arg-type]
    return Task(
        dataset=MemoryDataset(samples, name=f"{dataset}{'/' + family if family else ''}"),
        setup=setup,
        solver=solver,
        cleanup=close_sample_lab if code else None,  # the sample's lab ends with it
        scorer=interp_harness_scorer([family] if family else families),
        token_limit=max_tokens,
        time_limit=math.ceil(max_wall_s) if max_wall_s is not None else None,
    )


def _problems(e: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors(include_url=False)
    )


def task_function(
    name: str, datasets: Sequence[str], default_dataset: str, doc: str, module: str
) -> Callable[..., Task]:
    """An Inspect task function over `datasets` (to decorate with `@task` in `module`): its
    parameters are `benchmark_task`'s, written once here, so `-T` and the log's task_args name
    them all; `family` only where the datasets serve several families."""

    def fn(**params: object) -> Task:
        bound = signature.bind(**params)  # unknown names refused, defaults filled in
        bound.apply_defaults()
        return benchmark_task(datasets, **bound.arguments)  # type: ignore[arg-type]

    params = [
        p.replace(default=default_dataset) if p.name == "dataset" else p
        for p in inspect.signature(benchmark_task).parameters.values()
        if p.name != "datasets" and (p.name != "family" or len(task_families(datasets)) > 1)
    ]
    signature = inspect.Signature(params, return_annotation=Task)
    fn.__signature__ = signature  # type: ignore[attr-defined]
    fn.__name__ = fn.__qualname__ = name
    # Inspect names a task after the top-level package of its module: interp_harness/<name>
    fn.__module__, fn.__doc__ = module, doc
    return fn
