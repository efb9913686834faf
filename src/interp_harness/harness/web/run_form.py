"""The web run form: its choices, read from the registries, and the posted fields as a RunSpec body.

Datasets and families come from the benchmark records, agents from the agent registry, each
agent's option fields from its `Options` schema (what an API caller may set), and the protocol
modes, methods, epoch reducers and the epoch bound from `RunSpec` itself, so a new family, agent,
option or mode shows up without touching the form. A custom agent (`pkg.mod:Class`) is offered
only when the operator allows dotted agents over the API. The body `form_body` builds is posted
to `POST /runs` of the same app (interp_harness.harness.web.routes), so the form is checked by the API's own
validation and nothing here decides what is valid: fields are only typed as JSON.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from interp_harness.evaluator.report import EpochReducer
from interp_harness.function_store.benchmark import benchmarks
from interp_harness.harness.domain.spec import MAX_EPOCHS, Method, ProtocolMode

OptionKind = Literal["text", "int", "number", "bool", "choice", "json"]
BUDGETS = ("max_rounds", "max_target_calls", "max_inputs", "max_tokens", "max_wall_s")
OPTION_PREFIX = "opt."  # an option field's name: opt.<agent>.<option>


@dataclass(frozen=True)
class OptionField:
    """One declared option of an agent, as a form field."""

    name: str
    key: str  # the form field's name
    kind: OptionKind
    default: str  # shown as the placeholder; an empty field keeps the agent's default
    required: bool
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class AgentChoice:
    name: str
    provider: str
    description: str
    tools: bool
    options: tuple[OptionField, ...] | None  # None: the agent does not load in this process


@dataclass(frozen=True)
class FamilyChoice:
    family: str
    title: str
    datasets: tuple[str, ...]  # the datasets that serve it


@dataclass(frozen=True)
class FormChoices:
    agents: list[AgentChoice]
    datasets: list[str]
    families: list[FamilyChoice]
    modes: tuple[str, ...]
    methods: tuple[str, ...]
    reducers: tuple[str, ...]
    max_epochs: int
    allow_dotted: bool


def option_key(agent: str, option: str) -> str:
    return f"{OPTION_PREFIX}{agent}.{option}"


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return defs.get(ref.removeprefix("#/$defs/"), {})
    return schema


def _kind(prop: dict[str, Any], defs: dict[str, Any]) -> tuple[OptionKind, dict[str, Any]]:
    """The widget an option's JSON schema calls for (an optional value: its non-null part);
    anything but one scalar is typed as JSON."""
    alts = [_resolve(a, defs) for a in prop.get("anyOf", [prop])]
    alts = [a for a in alts if a.get("type") != "null"]
    if len(alts) != 1:
        return "json", {}
    one = alts[0]
    if "enum" in one or "const" in one:
        return "choice", one
    kinds: dict[str, OptionKind] = {
        "string": "text",
        "integer": "int",
        "number": "number",
        "boolean": "bool",
    }
    return kinds.get(str(one.get("type")), "json"), one


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


@functools.lru_cache(maxsize=256)  # a schema costs milliseconds, and every runs page shows them all
def option_fields(agent: str, cls: type) -> tuple[OptionField, ...]:
    """The form fields of an agent's declared options (its `Options` schema)."""
    options = getattr(cls, "Options", None)
    if options is None:
        return ()
    schema = options.model_json_schema()
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    out = []
    for name, prop in schema.get("properties", {}).items():
        kind, scalar = _kind(prop, defs)
        choices = tuple(str(v) for v in scalar.get("enum", [scalar.get("const")]) if v is not None)
        out.append(
            OptionField(
                name=name,
                key=option_key(agent, name),
                kind=kind,
                default=_shown(prop.get("default")),
                required=name in required,
                description=str(prop.get("description", "")),
                choices=choices if kind == "choice" else (),
                minimum=scalar.get("minimum"),
                maximum=scalar.get("maximum"),
                max_length=scalar.get("maxLength"),
            )
        )
    return tuple(out)


def _agent_class(name: str) -> type | None:
    """A registered agent's class, never by dotted path (that would import a module the API
    policy may refuse); None when it does not load."""
    from interp_harness.agents.registry import resolve_agent

    try:
        return resolve_agent(name, allow_dotted=False)[0]
    except Exception:  # listed with why by list_agents; the API says so when it is chosen
        return None


def agent_choices() -> list[AgentChoice]:
    try:
        from interp_harness.agents.registry import list_agents
    except ImportError:
        return []
    out = []
    for info in list_agents():
        cls = _agent_class(info.name)
        out.append(
            AgentChoice(
                name=info.name,
                provider=info.provider,
                description=info.description,
                tools=info.tools,
                options=option_fields(info.name, cls) if cls is not None else None,
            )
        )
    return out


def family_choices(datasets: list[str]) -> list[FamilyChoice]:
    """Every registered family, with the datasets that serve it: its record's own, and the
    datasets plugins register, which serve every family without fixed datasets
    (interp_harness.function_store.catalog)."""
    records = benchmarks()
    named = {d for b in records for d in b.sources}
    plugin = tuple(d for d in datasets if d not in named)
    return [
        FamilyChoice(b.family, b.title, (*b.sources, *(() if b.fixed_datasets else plugin)))
        for b in records
    ]


def choices(allow_dotted: bool) -> FormChoices:
    from interp_harness.function_store.catalog import dataset_names

    datasets = dataset_names()
    return FormChoices(
        agents=agent_choices(),
        datasets=datasets,
        families=family_choices(datasets),
        modes=get_args(ProtocolMode),
        methods=get_args(Method),
        reducers=get_args(EpochReducer),
        max_epochs=MAX_EPOCHS,
        allow_dotted=allow_dotted,
    )


def defaults(agents: list[AgentChoice]) -> dict[str, str]:
    """What the run form starts with: a run that works on this machine as it is, with no key and
    no model server: the first family whose targets need no service, and its offline agent
    (`scripted-<family>`, else the first local agent that needs no option)."""
    family = next((b.family for b in benchmarks() if not b.services and not b.fixed_datasets), "")
    local = [a for a in agents if a.provider == "local" and a.options is not None]
    if any(a.name == f"scripted-{family}" for a in local):
        return {"family": family, "agent": f"scripted-{family}"}
    for a in local:
        if not any(o.required for o in a.options or ()):
            return {"family": family, "agent": a.name}
    return {"family": family}


def _json_or_text(raw: str) -> Any:
    """A field's value as JSON (numbers, booleans, lists, objects), else the text as typed: the
    API then says what the option needs, as it does for a JSON body."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _agent_options(fields: Mapping[str, str], agent: str, custom: bool) -> Any:
    """The options: the JSON box, with the chosen agent's option fields over it. Fields of other
    agents (posted when the page ran no script) are not read."""
    raw = fields.get("agent_options_json", "")
    options: Any = _json_or_text(raw) if raw else {}
    if not isinstance(options, dict):
        return options  # the API refuses it: "agent_options: Input should be a valid dictionary"
    cls = None if custom else _agent_class(agent)
    for f in option_fields(agent, cls) if cls is not None else ():
        value = fields.get(f.key, "")
        if value:
            options[f.name] = value if f.kind in ("text", "choice") else _json_or_text(value)
    return options


def form_body(fields: Mapping[str, str]) -> dict[str, Any]:
    """The posted run form as a RunSpec JSON body. Empty fields are left out (the API's defaults
    apply); values are passed as typed, for the API to validate and convert (a 422 names the
    field)."""
    body: dict[str, Any] = {}
    custom = bool(fields.get("agent_path"))
    agent = fields.get("agent_path") or fields.get("agent", "")
    if agent:
        body["agent"] = agent
    options = _agent_options(fields, agent, custom)
    if options != {}:
        body["agent_options"] = options
    for key in ("dataset", "family", "variant", "limit", "seed", "gen_seed", "epochs"):
        if fields.get(key):
            body[key] = fields[key]
    if fields.get("epoch_reducer"):
        body["epoch_reducer"] = fields["epoch_reducer"]
    if ids := [i for i in re.split(r"[\s,]+", fields.get("ids", "")) if i]:
        body["ids"] = ids
    protocol = {k: fields[k] for k in ("mode", "method") if fields.get(k)}
    if protocol:
        body["protocol"] = protocol
    if fields.get("floor"):
        body["floor"] = {"1": True, "0": False}.get(fields["floor"], fields["floor"])
    budgets = {k: fields[k] for k in BUDGETS if fields.get(k)}
    if budgets:
        body["budgets"] = budgets
    return body
