"""Pre-flight: refuse a run that cannot work before it is stored (issue 12).

The last part of a run's admission (harness/runs/admission.py `admit`, for `harness run` and
`POST /runs`), given what admission resolved and the request's own problems it found. Checked,
in order:
- the agent (resolved by admission: its options carry no key, its provider profile exists): the
  operator's key for it is set; when the profile names its own endpoint (a local server,
  vLLM, ...), that endpoint answers `GET {base_url}/models` and lists the model the agent will ask for;
  its class imports in an agent host started as its episodes' are (`check_agent_host`);
- the selection: non-empty, every target available (reference data present), and of a family
  the agent plays when it declares the families it plays (`Agent.families`; every built-in
  does: `scripted-numeric` on string targets is refused, with the agents that fit);
- the model services the selected targets' benchmark records declare (`services`): the LM
  backbone (`HARNESS_BACKBONE_URL`), the intervention service (`HARNESS_INTERVENTION_URL`,
  serving the targets' model); and the judge when one is configured (`HARNESS_JUDGE_URL`; no
  judge at all is allowed: description scores then show as judge errors, never as 0s).

Only URLs the operator configured are contacted (profiles, HARNESS_BACKBONE_URL, HARNESS_JUDGE_URL,
HARNESS_INTERVENTION_URL),
with the key that endpoint receives anyway. `harness run --no-preflight` skips all of it; the REST
API always runs it (an API caller cannot store a run that cannot start).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.spec import TOOL_MODES, RunSpec
from interp_harness.harness.providers.profiles import ProviderProfile
from interp_harness.harness.settings import Settings

PROBE_TIMEOUT_S = 10.0


class PreflightError(ValueError):
    """A run cannot work; `problems` says every reason found, one line each. `request`: the
    problems of the request itself (an unknown agent, dataset or family, a missing profile),
    which refuse the run with or without pre-flight; the others are what only pre-flight's
    checks found (an endpoint down, a family the agent does not play), which `--no-preflight`
    would skip."""

    def __init__(self, problems: Sequence[str], request: Sequence[str] = ()) -> None:
        self.problems = list(problems)
        self.request = [p for p in request if p in self.problems]
        super().__init__("pre-flight check failed: " + "; ".join(self.problems))

    @property
    def checked(self) -> list[str]:
        """The problems only pre-flight's checks found."""
        return [p for p in self.problems if p not in self.request]


def model_ids(
    base_url: str, what: str, api_key: str | None = None, kind: str = "openai"
) -> list[str]:
    """The model ids `GET {base_url}/models` lists (Anthropic: `{base_url}/v1/models`, as its SDK
    adds /v1). Raises PreflightError saying what is wrong."""
    return [str(m["id"]) for m in model_entries(base_url, what, api_key, kind)]


def model_entries(
    base_url: str, what: str, api_key: str | None = None, kind: str = "openai"
) -> list[dict[str, Any]]:
    """The entries of `GET {base_url}/models` (each with an `id`), as `model_ids` reads them."""
    if kind == "anthropic":
        url = base_url.rstrip("/") + "/v1/models"
        headers = {"anthropic-version": "2023-06-01"} | ({"x-api-key": api_key} if api_key else {})
    else:
        url = base_url.rstrip("/") + "/models"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        r = httpx.get(url, headers=headers, timeout=PROBE_TIMEOUT_S)
    except httpx.HTTPError as e:
        raise PreflightError(
            [f"{what} at {base_url} does not answer (GET {url}: {type(e).__name__}: {e})"]
        ) from None
    if r.status_code != 200:
        raise PreflightError([f"{what} at {base_url} answered GET {url} with HTTP {r.status_code}"])
    try:
        data = r.json()["data"]
        return [m | {"id": str(m["id"])} for m in data]
    except (ValueError, KeyError, TypeError):
        raise PreflightError(
            [f"{what} at {base_url}: GET {url} is not an OpenAI-style model list"]
        ) from None


def _listing(url: str, what: str) -> list[dict[str, Any]]:
    """The `data` list of a service's `GET url` listing. Raises PreflightError saying what is wrong."""
    try:
        r = httpx.get(url, timeout=PROBE_TIMEOUT_S)
        r.raise_for_status()
        data = r.json()["data"]
        if not isinstance(data, list):
            raise TypeError("data is not a list")
        return [d for d in data if isinstance(d, dict)]
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as e:
        raise PreflightError([f"{what}: GET {url} failed ({type(e).__name__}: {e})"]) from None


def check_model(
    base_url: str, what: str, model: str | None, api_key: str | None, kind: str = "openai"
) -> dict[str, Any] | None:
    """The model's entry in the endpoint's list (None when no model is named); PreflightError
    when the endpoint does not answer or does not serve it."""
    entries = model_entries(base_url, what, api_key, kind)
    ids = [m["id"] for m in entries]
    if model is not None and model not in ids:
        served = ", ".join(ids[:10]) or "none"
        raise PreflightError([f"{what} at {base_url} has no model {model!r} (it serves: {served})"])
    return next((m for m in entries if m["id"] == model), None)


def unserved_tools(entry: dict[str, Any] | None) -> str | None:
    """What a model's entry says against tool calls, or None when it serves them or says
    nothing. Two listings say it: `supported_parameters` (OpenRouter's field, and the harness's
    backbone's) without `tools`, and `capabilities` (LM Studio's, Ollama's) without `tools` or
    `tool_use`. An endpoint whose list says neither (OpenAI, vLLM) is not refused."""
    if entry is None:
        return None
    params = entry.get("supported_parameters")
    if isinstance(params, list) and "tools" not in params:
        return f"its model list's supported_parameters has no 'tools' ({', '.join(map(str, params[:20]))})"
    caps = entry.get("capabilities")
    if isinstance(caps, list) and not {"tools", "tool_use"} & set(map(str, caps)):
        return f"its model list's capabilities have no 'tools' ({', '.join(map(str, caps[:20]))})"
    return None


def _agent_model(agent_cls: type, options: dict[str, Any]) -> str | None:
    # an agent host gets no OPENAI_MODEL: options name the model, else the agent's default
    model = options.get("model") or getattr(agent_cls, "default_model", None)
    return str(model) if model else None


def check_agent(spec: RunSpec, agent_cls: type, profile: ProviderProfile | None) -> None:
    """The resolved agent's profile has its key, and a profile's own endpoint answers and
    serves the model."""
    try:
        key = profile.api_key() if profile is not None else None
    except ValueError as e:  # the operator's key is unset: only pre-flight looks before the run
        raise PreflightError([str(e)]) from None
    if profile is not None and profile.base_url is not None:
        model = _agent_model(agent_cls, spec.agent_options)
        what = _endpoint_name(profile)
        entry = check_model(profile.base_url, what, model, key, profile.kind)
        mode = spec.protocol.mode
        if mode in TOOL_MODES and (why := unserved_tools(entry)):
            raise PreflightError(
                [
                    f"protocol mode {mode!r} sends the benchmark's commands as tools, and {what} "
                    f"at {profile.base_url} serves no tool calls for model {model!r}: {why}. Use "
                    f"a mode without tools ({'code' if mode == 'code-tools' else 'default'}), or "
                    "a server that serves tool calls"
                ]
            )


def check_agent_host(
    spec: RunSpec, settings: Settings, agent_cls: type, profile: ProviderProfile | None
) -> list[str]:
    """The agent's class imports in an agent host started as its episodes' are (same binds,
    bubblewrap): a module the orchestrator can import but the host cannot (a helper beside the
    agent's file, or a plugin that imports `harness`) fails here, not in every episode. Nothing
    to check when agents run in this process (agent_isolation "none", or an agent class that
    `runs_in_orchestrator`), nor for the built-ins."""
    if settings.agent_isolation == "none" or getattr(agent_cls, "runs_in_orchestrator", 0):
        return []
    if agent_cls.__module__.startswith("interp_harness.agents."):
        # the built-ins: the host has the whole `agents` package, which imports nothing of ours
        # (tests/architecture), and the same Python prefix; resolving them here imported them
        return []
    from interp_harness.agents.base import AgentError
    from interp_harness.harness.agent_host.host import AgentHosts, importable_note, plan_host

    try:
        host_plan = plan_host(agent_cls, spec.agent_options, profile)
    except AgentError as e:  # e.g. a class defined in __main__, a namespace package
        return [str(e)]
    hosts = AgentHosts(
        memory_mb=settings.agent_memory_mb, max_message_chars=settings.agent_max_message_chars
    )
    try:
        failure = hosts.check(host_plan)
    finally:
        hosts.close()
    if failure is None:
        return []
    problem = f"agent {spec.agent!r} cannot be loaded in an agent host, where its episodes run: "
    problem += failure.message
    if failure.import_error:
        problem += f". Note: {importable_note(host_plan)}"
    return [problem]


def check_lab(spec: RunSpec, settings: Settings) -> list[str]:
    """Protocol modes `code` and `code-tools` give every episode a lab (bubblewrap, the
    operator's HARNESS_LAB_* limits and packages): one is started here and closed, so that a
    machine that cannot start one is told once, before the run, not by every episode."""
    from interp_harness.harness.domain.spec import CODE_MODES

    if spec.protocol.mode not in CODE_MODES:
        return []
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from interp_harness.harness.lab.api import module_source
    from interp_harness.harness.lab.limits import LabLimits
    from interp_harness.harness.lab.process import LabProcess, LabStartError

    async def start_one() -> None:
        lab = await LabProcess.start(module_source([]), LabLimits.from_settings(settings))
        await lab.close()

    try:  # its own loop: the API calls this from inside one
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, start_one()).result()
    except LabStartError as e:
        return [f"protocol mode {spec.protocol.mode!r} needs a lab, and none starts here: {e}"]
    return []


def check_families(agent: str, agent_cls: type, targets: Sequence[Target]) -> list[str]:
    """An agent that declares the families it plays (`Agent.families`; every built-in does)
    is refused on targets of another family, with the agents that play all the selected ones.
    An agent that declares nothing (a custom one) is never refused here."""
    from interp_harness.agents.base import plays
    from interp_harness.agents.registry import list_agents

    selected = sorted({t.family for t in targets})
    wrong = [f for f in selected if not plays(agent_cls, f)]
    if not wrong:
        return []
    own = sorted(getattr(agent_cls, "families", None) or ())
    n = sum(1 for t in targets if t.family in wrong)
    fit = [
        a
        for a in list_agents()
        if a.families is not None and ("*" in a.families or set(selected) <= set(a.families))
    ]
    named = [a.name for a in fit if "*" not in (a.families or ())]
    anything = [a.name for a in fit if "*" in (a.families or ())]
    which = " and ".join(selected)
    suggest = ", ".join(named) if named else f"none plays {which} in particular"
    if anything:
        suggest += f"; any family: {', '.join(anything)}"
    return [
        f"agent {agent!r} plays {', '.join(own)} targets only, and {n} of the {len(targets)} "
        f"selected targets are {' and '.join(wrong)}. Agents that play {which}: {suggest}"
    ]


def _endpoint_name(profile: ProviderProfile) -> str:
    if (
        profile.name == "cli"
    ):  # interp_harness.harness.policy's ad-hoc profile for `-o base_url=...`
        return f"the {profile.kind} endpoint given by base_url"
    return f"the {profile.kind} endpoint of provider profile {profile.name!r}"


def _v1_base(url: str | None, missing: str) -> str:
    """`url` as an OpenAI-style base ending in /v1; PreflightError(`missing`) when it is unset."""
    if not url:
        raise PreflightError([missing])
    base = url.rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


def check_backbone(settings: Settings, targets: Sequence[Target]) -> None:
    from interp_harness.model_services.backbone.preflight import MISSING

    base = _v1_base(settings.backbone_url, MISSING)
    model = os.environ.get("HARNESS_BACKBONE_MODEL") or None
    check_model(base, "the LM backbone (HARNESS_BACKBONE_URL)", model, None)


def check_intervention(settings: Settings, targets: Sequence[Target]) -> None:
    """Targets that read a model through the intervention service: it must answer and serve
    each target's model."""
    from interp_harness.model_services.intervention import preflight as service

    base = _v1_base(settings.intervention_url, service.MISSING)
    served = model_ids(base, "the intervention service (HARNESS_INTERVENTION_URL)")
    for m in sorted({service.model_of(t) for t in targets}):
        if not service.serves(m, served):
            raise PreflightError([service.not_served(m, served)])
    if any(service.sae_of(t) for t in targets):
        saes = _listing(base + "/saes", "the intervention service (HARNESS_INTERVENTION_URL)")
        problems = service.missing_saes(targets, [str(s.get("name")) for s in saes])
        if problems:
            raise PreflightError(problems)


# How pre-flight checks each model service a benchmark record may declare (`services`), in the
# order their problems are listed; each is given the selected targets that need it.
SERVICE_CHECKS: dict[str, Callable[[Settings, Sequence[Target]], None]] = {
    "intervention": check_intervention,
    "backbone": check_backbone,
}


def check_services(settings: Settings, targets: Sequence[Target]) -> list[str]:
    """The problems with the model services the targets' benchmark records declare (`services`),
    each service checked once for the targets that need it."""
    problems: list[str] = []
    for service, check in SERVICE_CHECKS.items():
        needing = [t for t in targets if service in benchmark(t.family).services]
        if not needing:
            continue
        try:
            check(settings, needing)
        except PreflightError as e:
            problems += e.problems
    return problems


def check_judge(settings: Settings) -> None:
    """A configured judge must answer; none configured is allowed (its rows say so)."""
    if settings.score_hook in ("none", ""):
        return
    try:
        from interp_harness.evaluator.judge import JudgeSettings
    except ImportError:
        return
    judge = JudgeSettings()
    if judge.provider != "openai-compatible" or not judge.url:
        return  # none, or a public API (its key is checked when the judge is built)
    check_model(judge.url, "the judge (HARNESS_JUDGE_URL)", judge.model, judge.api_key)


def preflight(
    spec: RunSpec,
    settings: Settings,
    agent: tuple[type, ProviderProfile | None] | None,
    targets: Sequence[Target] | None,
    *,
    refused: tuple[str | None, str | None] = (None, None),
) -> None:
    """Raises PreflightError naming every problem found when the run cannot work. `agent` (its
    class and profile) and `targets`: what admission resolved, None where it could not;
    `refused`: the request's own problems admission found (the agent's, the selection's), listed
    where the check of that piece would be and marked as the request's."""
    agent_problem, selection_problem = refused
    problems: list[str] = []
    request: list[str] = []  # what refuses the run with or without pre-flight
    if agent_problem is not None:
        problems.append(agent_problem)
        request.append(agent_problem)
    elif agent is not None:
        try:
            check_agent(spec, *agent)
        except PreflightError as e:
            problems += e.problems
        problems += check_agent_host(spec, settings, *agent)
        if targets is not None:
            problems += check_families(spec.agent, agent[0], targets)
    problems += check_lab(spec, settings)
    if selection_problem is not None:
        problems.append(selection_problem)
        request.append(selection_problem)
    problems += check_services(settings, targets or [])
    try:
        check_judge(settings)
    except PreflightError as e:
        problems += e.problems
    if problems:
        raise PreflightError(problems, request=request)
