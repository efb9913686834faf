"""Provider profiles' routes (issue 38 item 1): what a profile's key may be used for is the
operator's to say, per kind, and a run whose agent calls a route its profile does not offer is
refused before it starts (every request would be)."""

from __future__ import annotations

import json

import pytest

from interp_harness.agents.anthropic_agent import AnthropicAgent
from interp_harness.agents.openai_agent import OpenAIAgent
from interp_harness.harness.policy import profile_for
from interp_harness.harness.providers.profiles import ProfileError, load_profiles


def test_a_profiles_routes_default_to_what_its_kind_of_agent_calls() -> None:
    profiles = load_profiles("")
    assert [r.name for r in profiles["openai"].offered_routes()] == ["chat.completions"]
    assert [r.name for r in profiles["anthropic"].offered_routes()] == ["messages"]
    spec = {"wide": {"kind": "openai", "routes": ["responses", "chat.completions", "models"]}}
    wide = load_profiles(json.dumps(spec))["wide"]
    assert [(r.method, r.path) for r in wide.offered_routes()] == [
        ("POST", "/responses"),
        ("POST", "/chat/completions"),
        ("GET", "/models"),
    ]


@pytest.mark.parametrize(
    ("profile", "says"),
    [
        ({"kind": "openai", "routes": ["messages"]}, "route 'messages' is not one of the openai"),
        ({"kind": "anthropic", "routes": ["chat.completions"]}, "not one of the anthropic"),
        ({"kind": "openai", "routes": ["files"]}, "'chat.completions'"),
    ],
)
def test_a_route_its_kind_lacks_is_refused(profile: dict, says: str) -> None:
    with pytest.raises(ProfileError, match="provider profile 'p'") as e:
        load_profiles(json.dumps({"p": profile}))
    assert says in str(e.value)


def test_preflight_refuses_a_profile_without_the_agents_route() -> None:
    profiles = load_profiles(
        json.dumps(
            {
                "responses-only": {"kind": "openai", "routes": ["responses"]},
                "claude-models": {"kind": "anthropic", "routes": ["models"]},
            }
        )
    )
    with pytest.raises(ProfileError, match="does not offer the chat.completions route"):
        profile_for(OpenAIAgent, {"profile": "responses-only"}, profiles)
    with pytest.raises(ProfileError, match="does not offer the messages route"):
        profile_for(AnthropicAgent, {"profile": "claude-models"}, profiles)
    assert profile_for(OpenAIAgent, {}, profiles) is profiles["openai"]


def test_preflight_refuses_an_agents_default_length_over_the_profiles_limit() -> None:
    """The anthropic agent asks for 4096 tokens unless told otherwise: under a 512-token profile
    every request would be refused, so the run is, saying what to set."""
    spec = {"small": {"kind": "anthropic", "max_tokens": 512}}
    profiles = load_profiles(json.dumps(spec))
    with pytest.raises(ProfileError, match="max_tokens=4096 is over .* set max_tokens"):
        profile_for(AnthropicAgent, {"profile": "small"}, profiles)
    assert profile_for(AnthropicAgent, {"profile": "small", "max_tokens": 500}, profiles)
