"""Provider profiles: the operator's named LLM endpoints and the credentials that go with them.

Only the operator defines profiles (environment or a config file); an API caller picks one by
name and can never supply a URL that receives a server-held key. The agent host of an episode
gets exactly one profile: its URL and a placeholder key in the variables the agent's SDK reads,
and a network route to that profile's endpoint only, where the orchestrator's forwarder adds the
key.

`HARNESS_PROVIDER_PROFILES`: a JSON object {name: profile}, or `@/path/to/profiles.json`.
Profiles named there replace the built-in ones of the same name:

    {"vllm-local": {"kind": "openai", "base_url": "http://127.0.0.1:8001/v1"},
     "openai": {"kind": "openai", "api_key_env": "OPENAI_API_KEY", "models": ["gpt-4o"],
                "max_tokens": 4096, "max_n": 1, "routes": ["chat.completions", "responses"]}}

A profile governs what the key may be used for. `routes`: the endpoint's routes an agent may call
(`chat.completions`, `completions`, `responses` and `models` for the openai kind; `messages` and
`models` for anthropic; default: `chat.completions` / `messages`, what the built-in agents call);
every other path and method is refused. Only the operator sets them. On those routes, what one request may ask for: `models`
(the model ids; the request must name one when the profile lists them), `max_tokens` (the limit
of each route's own length fields, filled in when a request sets none), `max_n` (n / best_of;
default 1). Pre-flight holds a run's options to it (interp_harness.harness.policy), and the orchestrator's
forwarder holds every request an agent sends (interp_harness.harness.agent_host.net, interp_harness.harness.providers.requests).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

Kind = Literal["openai", "anthropic"]
RouteName = Literal["chat.completions", "completions", "responses", "messages", "models"]


@dataclass(frozen=True)
class Route:
    """One thing a profile's key may be used for: a method and a path under the profile's URL,
    and the body fields of an inference route that bound its output (`length`; `fill` is set to
    the profile's `max_tokens` when a request sets none of them)."""

    name: RouteName
    method: str
    path: str  # under the profile's URL (the SDK's base URL)
    length: tuple[str, ...] = ()
    fill: str | None = None

    @property
    def inference(self) -> bool:
        return self.method == "POST"


_ROUTES: dict[tuple[str, str], Route] = {
    ("openai", "chat.completions"): Route(
        "chat.completions", "POST", "/chat/completions", ("max_tokens", "max_completion_tokens"),
        "max_tokens",
    ),
    ("openai", "completions"): Route(
        "completions", "POST", "/completions", ("max_tokens",), "max_tokens"
    ),
    ("openai", "responses"): Route(
        "responses", "POST", "/responses", ("max_output_tokens",), "max_output_tokens"
    ),
    ("openai", "models"): Route("models", "GET", "/models"),
    # the anthropic SDK's base URL has no /v1 (it appends /v1/messages)
    ("anthropic", "messages"): Route("messages", "POST", "/v1/messages", ("max_tokens",), "max_tokens"),
    ("anthropic", "models"): Route("models", "GET", "/v1/models"),
}  # fmt: skip
# What a profile offers when it names no routes: what the built-in agent of its kind calls.
DEFAULT_ROUTES: dict[str, tuple[RouteName, ...]] = {
    "openai": ("chat.completions",),
    "anthropic": ("messages",),
}
# every body field some route bounds output with: checked on whichever route a request names it
LENGTH_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens", "max_new_tokens")

# What each SDK reads from its environment (the agent host's environment is built from these).
PROVIDER_ENV = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}
# What a sandboxed agent sees as its key; the forwarder swaps in the operator's key.
HELD_KEY = "held-by-the-harness"
_DEFAULT_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


class ProfileError(ValueError):
    """A profile is unknown, malformed, or its key is missing; the message says which."""


class ProviderProfile(BaseModel):
    """One endpoint an agent may talk to. `kind` must match the agent's `provider`."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    kind: Kind
    base_url: str | None = Field(None, description="None: the SDK's public endpoint")
    api_key_env: str | None = Field(
        None, description="orchestrator environment variable holding the key; None: no key"
    )
    models: list[str] | None = Field(None, description="model ids a run may ask for; None: any")
    max_tokens: int | None = Field(
        None, ge=1, description="the most a request may ask for (max_tokens, max_completion_tokens)"
    )
    max_n: int = Field(1, ge=1, le=128, description="completions per request (n, best_of)")
    routes: list[RouteName] | None = Field(
        None,
        description="what the key may be used for (chat.completions, completions, responses, "
        "messages, models); None: chat.completions (openai) / messages (anthropic)",
    )

    @model_validator(mode="after")
    def _check_routes(self) -> ProviderProfile:
        for name in self.routes or ():
            if (self.kind, name) not in _ROUTES:
                offered = sorted(n for k, n in _ROUTES if k == self.kind)
                raise ValueError(
                    f"route {name!r} is not one of the {self.kind} kind's: {', '.join(offered)}"
                )
        return self

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url {v!r} must be an http(s) URL with a host")
        return v.rstrip("/")

    @property
    def url(self) -> str:
        return self.base_url or _DEFAULT_URL[self.kind]

    def endpoint(self) -> tuple[str, str, int]:
        """(scheme, host, port) of the one place this profile's agent host may connect to."""
        parts = urlsplit(self.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return parts.scheme, parts.hostname or "", port

    def api_key(self, environ: dict[str, str] | None = None) -> str | None:
        """The key from the operator's environment; ProfileError when it names a missing one."""
        if self.api_key_env is None:
            return None
        key = (os.environ if environ is None else environ).get(self.api_key_env)
        if not key:
            raise ProfileError(
                f"provider profile {self.name!r}: the operator's environment has no "
                f"{self.api_key_env} (set it where the harness runs, or use another profile)"
            )
        return key

    def agent_env(self, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The environment variables a sandboxed agent host for this profile gets: the URL and a
        placeholder key. The real key never enters the sandbox: the provider forwarder puts it on
        each request (`auth_headers`). The profile's key is still checked here, so that a
        missing one fails before the host starts."""
        key_var, url_var = PROVIDER_ENV[self.kind]
        self.api_key(environ)
        return {url_var: self.url, key_var: HELD_KEY}

    def auth_headers(self, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The credential headers the forwarder sends to the endpoint, in place of whatever the
        agent sent. Local servers (vLLM, `harness backbone serve`) accept any key: "EMPTY"."""
        key = self.api_key(environ) or "EMPTY"
        if self.kind == "anthropic":
            return {"x-api-key": key}
        return {"authorization": f"Bearer {key}"}

    def offered_routes(self) -> tuple[Route, ...]:
        """The routes an agent may call with this profile's key (in the profile's order)."""
        names = DEFAULT_ROUTES[self.kind] if self.routes is None else self.routes
        return tuple(_ROUTES[(self.kind, n)] for n in dict.fromkeys(names))

    def check_model(self, model: str | None) -> None:
        if model is not None and self.models is not None and model not in self.models:
            raise ProfileError(
                f"provider profile {self.name!r} offers models {', '.join(self.models)}; "
                f"not {model!r}"
            )

    def check_max_tokens(self, value: object, key: str = "max_tokens") -> None:
        if self.max_tokens is not None and value is not None and _int_over(value, self.max_tokens):
            raise ProfileError(
                f"{key}={value!r:.100} is over provider profile {self.name!r}'s limit of "
                f"{self.max_tokens}"
            )

    def check_request(self, body: dict[str, Any], route: Route) -> dict[str, Any]:
        """The body to send on `route` (an inference route this profile offers): `body` with the
        profile's `max_tokens` filled into the route's length field when it sets none.
        ProfileError naming the key when `body` breaks this profile: no model or one it does not
        offer, more completions or tokens than it allows. The forwarder applies it to every
        request (defence in depth behind pre-flight)."""
        model = body.get("model")
        if model is not None and not isinstance(model, str):
            raise ProfileError(f"model {model!r:.100} is not a model id")
        if model is None and self.models is not None:
            raise ProfileError(
                f"the request names no model; provider profile {self.name!r} offers models "
                f"{', '.join(self.models)}"
            )
        self.check_model(model)
        for key in ("n", "best_of"):
            if body.get(key) is not None and _int_over(body[key], self.max_n):
                raise ProfileError(
                    f"{key}={body[key]!r:.100} is over provider profile {self.name!r}'s limit of "
                    f"{self.max_n} (max_n)"
                )
        for key in LENGTH_FIELDS:
            self.check_max_tokens(body.get(key), key)
        unbounded = all(body.get(k) is None for k in route.length)
        if self.max_tokens is not None and route.fill is not None and unbounded:
            body = {**body, route.fill: self.max_tokens}
        return body


def _int_over(value: object, limit: int) -> bool:
    """True unless `value` is an integer <= limit (a non-integer is over any limit)."""
    return isinstance(value, bool) or not isinstance(value, int) or value > limit


def default_profiles() -> dict[str, ProviderProfile]:
    """Available without configuration: the public APIs, keyed from the usual variables."""
    return {
        "openai": ProviderProfile(name="openai", kind="openai", api_key_env="OPENAI_API_KEY"),
        "anthropic": ProviderProfile(
            name="anthropic", kind="anthropic", api_key_env="ANTHROPIC_API_KEY"
        ),
    }


def load_profiles(spec: str | None = None) -> dict[str, ProviderProfile]:
    """The built-in profiles overlaid with the operator's (`HARNESS_PROVIDER_PROFILES`)."""
    spec = os.environ.get("HARNESS_PROVIDER_PROFILES", "") if spec is None else spec
    profiles = default_profiles()
    text = spec.strip()
    if not text:
        return profiles
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as e:
            raise ProfileError(f"HARNESS_PROVIDER_PROFILES: cannot read {text[1:]!r}: {e}") from e
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProfileError(f"HARNESS_PROVIDER_PROFILES is not valid JSON: {e}") from e
    if not isinstance(data, dict):
        raise ProfileError("HARNESS_PROVIDER_PROFILES must be a JSON object {name: profile}")
    for name, body in data.items():
        try:
            profiles[name] = ProviderProfile.model_validate({**body, "name": name})
        except (ValidationError, TypeError) as e:
            raise ProfileError(f"provider profile {name!r}: {e}") from e
    return profiles


def get_profile(name: str, profiles: dict[str, ProviderProfile] | None = None) -> ProviderProfile:
    profiles = load_profiles() if profiles is None else profiles
    if name not in profiles:
        raise ProfileError(
            f"unknown provider profile {name!r}; the operator offers: {', '.join(sorted(profiles))}"
        )
    return profiles[name]
