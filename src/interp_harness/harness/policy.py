"""What an API caller may choose in a run request, and how an agent gets its endpoint and key.

The operator (environment, config files) decides which agents exist, which modules are imported,
which URLs receive keys and which paths are read; an API caller picks among what the operator
offers (docs/security.md). The CLI is the operator: `admit(..., policy=None)`
(harness/runs/admission.py), which asks this module once what a run's agent may be
(`chosen_agent`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from interp_harness.agents.base import AgentOptions
from interp_harness.agents.options import PROFILE_GOVERNED_KEYS
from interp_harness.harness.domain.agent_class import SelectionError, resolve_agent_class
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.providers.profiles import (
    ProfileError,
    ProviderProfile,
    get_profile,
)
from interp_harness.harness.settings import Settings

PROVIDER_KINDS = ("openai", "anthropic")  # agents whose endpoint and key come from a profile
_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
# Never stored with a run (runs are served by GET /runs): keys come from the environment.
_SECRET_OPTIONS = ("api_key",)
_OPTIONS = ("body", "agent_options")


class RequestInvalid(ValueError):
    """A request field breaks the API policy; `errors` are FastAPI-style {loc, msg, type}."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors))
        self.errors = errors


@dataclass(frozen=True)
class ApiPolicy:
    """The REST API's rules for run requests."""

    allow_dotted_agents: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiPolicy:
        return cls(allow_dotted_agents=settings.api_allow_dotted_agents)

    def check_spec_fields(self, floor_for: str | None) -> None:
        if floor_for is not None:
            raise RequestInvalid(
                [_error(("body", "floor_for"), "set by the server on the floor runs it creates")]
            )

    def check_options(self, agent_cls: type, options: dict[str, Any]) -> None:
        """Validate options against the agent's declared `Options` (extra keys refused)."""
        schema = getattr(agent_cls, "Options", None)
        if (
            schema is None
        ):  # not an interp_harness.agents.base.Agent: nothing declared, nothing accepted
            if options:
                raise RequestInvalid([_error(_OPTIONS, "this agent declares no options")])
            return
        try:
            schema.model_validate(options)
        except ValidationError as e:
            raise RequestInvalid(
                [
                    _error((*_OPTIONS, *x["loc"]), _with_hint(x, schema), x["type"])
                    for x in e.errors()
                ]
            ) from None


def chosen_agent(spec: RunSpec, policy: ApiPolicy | None) -> tuple[type, ProviderProfile | None]:
    """The run's agent class and its provider profile, when the caller may choose them: with
    the REST API's `policy`, its spec fields, the agent's name (no dotted path unless allowed),
    its options (the agent's declared `Options`) and the operator's key for the profile
    (RequestInvalid for a field, SelectionError otherwise); without (the operator's CLI), the
    option names only (SelectionError naming the closest). Neither may put a key in the
    options, and the profile must exist and fit the agent (SelectionError)."""
    if policy is not None:  # before any import of the agent's module
        policy.check_spec_fields(spec.floor_for)
    allow_dotted = policy is None or policy.allow_dotted_agents
    agent_cls = resolve_agent_class(spec.agent, allow_dotted=allow_dotted)
    options = spec.agent_options
    try:
        if policy is None:
            check_operator_options(agent_cls, options)
        else:
            policy.check_options(agent_cls, options)
        check_no_secrets(options)
        profile = profile_for(agent_cls, options)
        if policy is not None and profile is not None:
            profile.api_key()  # the operator's key is there (its value stays unread here)
    except RequestInvalid:
        raise  # the API's 422
    except ValueError as e:  # ProfileError included
        raise SelectionError(str(e)) from None
    return agent_cls, profile


def _with_hint(error: Any, schema: type[AgentOptions]) -> str:
    """An unknown option's error, with the closest declared name (`temprature`: temperature)."""
    msg = str(error["msg"])
    if error["type"] == "extra_forbidden" and error["loc"]:
        msg += did_you_mean(str(error["loc"][-1]), list(schema.model_fields))
    return msg


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """ "; did you mean 'x'?" for the closest of `known` to `name`, or the known names."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; known: {', '.join(sorted(known))}" if known else ""


def check_operator_options(agent_cls: type, options: dict[str, Any]) -> None:
    """The CLI's options (the operator's): names the agent's `Options` declares, and the ones it
    leaves to the operator (`operator_only`: an endpoint, a file); ValueError naming the closest
    for any other. Values are the agent's to check. An agent that declares no options at all
    gets whatever the CLI passes (nothing tells what it reads)."""
    schema = getattr(agent_cls, "Options", None)
    if schema is None:
        return
    known = [*schema.model_fields, *sorted(getattr(schema, "operator_only", ()))]
    if not known:
        return
    name = getattr(agent_cls, "name", "") or agent_cls.__qualname__
    problems = [
        f"unknown option {key!r} for agent {name!r}{did_you_mean(key, known)}"
        for key in options
        if key not in known and key not in _SECRET_OPTIONS and key != "profile"
    ]
    if problems:
        raise ValueError(
            "; ".join(problems) + f" (its options: {', '.join(known)}; docs/agents.md)"
        )


def _error(loc: tuple[Any, ...], msg: str, kind: str = "value_error") -> dict[str, Any]:
    # the offending input is not echoed back: it may be a key the caller should not have sent
    return {"type": kind, "loc": list(loc), "msg": msg}


def check_no_secrets(options: dict[str, Any]) -> None:
    """Raises ValueError when options would store a key with the run (CLI and API alike)."""
    for key in _SECRET_OPTIONS:
        if key in options:
            raise ValueError(
                f"agent option {key!r} is refused: a run's options are stored and shown by the "
                "API. Set the provider's key in the environment (OPENAI_API_KEY, "
                "ANTHROPIC_API_KEY) or define a provider profile (HARNESS_PROVIDER_PROFILES)"
            )


def profile_for(
    agent_cls: type, options: dict[str, Any], profiles: dict[str, ProviderProfile] | None = None
) -> ProviderProfile | None:
    """The provider profile a run's agent uses: `options["profile"]`, else the profile named like
    the agent's provider; None for agents that call no provider. A `base_url` option (the CLI
    only: the API refuses it) is an ad-hoc operator profile for that endpoint, with no key (local
    servers accept any; define a profile to send one). Raises ProfileError (unknown, wrong kind,
    model not offered)."""
    provider = getattr(agent_cls, "provider", "")
    name = options.get("profile")
    if provider in PROVIDER_KINDS:
        check_extra_body(options.get("extra_body"))
    if "base_url" in options:
        if name is not None:
            raise ProfileError("give either a provider profile or base_url, not both")
        if provider not in PROVIDER_KINDS:
            return None
        key_env = _KEY_ENV[provider] if os.environ.get(_KEY_ENV[provider]) else None
        return ProviderProfile(
            name="cli", kind=provider, base_url=str(options["base_url"]), api_key_env=key_env
        )
    if name is None:
        if provider not in PROVIDER_KINDS:
            return None
        name = provider
    profile = get_profile(str(name), profiles)
    if profile.kind != provider:
        raise ProfileError(
            f"provider profile {profile.name!r} is for {profile.kind} agents; this agent's "
            f"provider is {provider!r}"
        )
    profile.check_model(options.get("model"))
    if "max_tokens" in options:
        profile.check_max_tokens(options["max_tokens"])
    elif (default := getattr(agent_cls, "default_max_tokens", None)) is not None:
        try:  # what the agent sends unasked (the forwarder would refuse every request)
            profile.check_max_tokens(default)
        except ProfileError as e:
            raise ProfileError(
                f"{e}: this agent asks for that by default; set max_tokens"
            ) from None
    check_routes(agent_cls, profile)
    return profile


def check_routes(agent_cls: type, profile: ProviderProfile) -> None:
    """ProfileError when the agent calls a route (`provider_routes`, declared by the built-in
    agents) that the profile does not offer: every request of the run would be refused."""
    offered = {r.name for r in profile.offered_routes()}
    for route in getattr(agent_cls, "provider_routes", ()):
        if route not in offered:
            raise ProfileError(
                f"provider profile {profile.name!r} does not offer the {route} route, which this "
                f"agent calls (it offers: {', '.join(sorted(offered))}; the operator sets a "
                "profile's routes)"
            )


def check_extra_body(extra: object) -> None:
    """ProfileError naming the first key of `extra_body` that the provider profile governs
    (the model, n, token limits, streaming, tools: interp_harness.agents.options.PROFILE_GOVERNED_KEYS)."""
    if not isinstance(extra, dict):
        return
    for key in extra:
        if key in PROFILE_GOVERNED_KEYS:
            raise ProfileError(
                f"agent_options.extra_body.{key} is refused: the provider profile governs it "
                "(name the model with agent_options.model and the length with "
                "agent_options.max_tokens, within the profile's limits)"
            )


def agent_kwargs(options: dict[str, Any], profile: ProviderProfile | None) -> dict[str, Any]:
    """The agent's constructor options, with the profile's endpoint and key filled in. In memory
    only: the key is read from the operator's environment here and never stored."""
    kwargs = {k: v for k, v in options.items() if k != "profile"}
    if profile is None:
        return kwargs
    key = profile.api_key()
    # None keeps the SDK's default endpoint (or the operator's OPENAI_BASE_URL / ANTHROPIC_...)
    kwargs["base_url"] = profile.base_url
    kwargs["api_key"] = key if key is not None else "EMPTY"  # local servers accept any key
    return kwargs
