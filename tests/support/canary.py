"""The canaries: one unique random value per secret the operator can set, and the one check every
sink goes through (`assert_clean`)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from adv_agents import CANARY_PREFIX


def new_canary() -> str:
    return CANARY_PREFIX + secrets.token_hex(10)  # matches adv_agents.CANARY_RE


# The operator's secret settings (docs/security.md): each environment variable gets a canary.
# HARNESS_HOME and the database password are handled by the fixtures (a path and a URL that
# contain their canary); a profile key variable is named by HARNESS_PROVIDER_PROFILES.
SECRET_VARS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ADV_PROFILE_KEY",  # the key variable of the operator's profile `adv-profile`
    "HARNESS_API_TOKENS",
    "HARNESS_ADMIN_TOKENS",  # may cancel any caller's run (issue 38)
    "HARNESS_JUDGE_API_KEY",
    "HARNESS_BACKBONE_API_KEY",
)


@dataclass
class Canaries:
    """name -> canary value. `env` holds what goes into every process's environment."""

    values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def make(cls) -> Canaries:
        names = (*SECRET_VARS, "HARNESS_HOME", "DATABASE_PASSWORD")
        return cls({n: new_canary() for n in names})

    @property
    def token(self) -> str:
        return self.values["HARNESS_API_TOKENS"]

    def env(self) -> dict[str, str]:
        return {n: self.values[n] for n in SECRET_VARS}

    def found_in(self, text: str) -> list[str]:
        """Names of the canaries that occur in `text`."""
        return [n for n, v in self.values.items() if v in text]


def as_text(data: object) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data if isinstance(data, str) else repr(data)


def assert_clean(canaries: Canaries, sink: str, data: object) -> None:
    """The suite's one canary check: fails naming the sink and the secrets found in it."""
    text = as_text(data)
    leaked = canaries.found_in(text)
    if leaked:
        at = min(text.find(canaries.values[n]) for n in leaked)
        excerpt = text[max(0, at - 200) : at + 100]
        raise AssertionError(f"{sink}: canaries of {leaked} leaked; around the first: {excerpt!r}")
