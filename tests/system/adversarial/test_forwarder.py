"""Issue 38 items 1, 2, 3, 11: a provider agent in its real agent host (`ForwarderAbuseAgent`,
profile `adv-forwarder`: the suite's stub endpoint, the canary key, max_tokens 512, routes chat
completions and responses) uses its route for what the profile does not offer. The orchestrator's
forwarder refuses it, with an error the agent reads, before anything reaches the endpoint; what it
does send on is what it checked; and the key the endpoint quotes back never reaches the agent."""

from __future__ import annotations

import json
from typing import Any

from adv_agents import PROBE, QUOTE
from support.battery import FORWARDER_MAX_TOKENS, PROVIDER_MODEL, Battery
from support.canary import Canaries, assert_clean
from support.openai_stub import OpenAIStub

KEY_MARK = "[the provider profile's key]"
NOT_OFFERED = ("files", "file-content", "delete-model", "models", "fine-tune", "batches", "images")


def _found(battery: Battery) -> tuple[dict[str, Any], dict[str, Any]]:
    detail = battery.episode("agent:forwarder")
    [msg] = [m["content"] for m in detail["messages"] if m["role"] == "assistant"]
    return detail, json.loads(json.loads(msg.split(": ", 1)[1])["found"])


def _probes(stub: OpenAIStub) -> list[dict[str, Any]]:
    return [r for r in stub.requests if PROBE in json.dumps(r["body"])]


def test_the_key_reaches_only_the_routes_the_profile_offers(
    battery: Battery, adv_provider: OpenAIStub
) -> None:
    """Item 1: files, a file's content, deleting a model, fine-tuning, batches, images, even the
    model list: a 403 the agent reads, naming what is offered; none reached the endpoint."""
    _, found = _found(battery)
    for name in NOT_OFFERED:
        got = found[name]
        assert got["status"] == 403, (name, got)
        err = json.loads(got["body"])["error"]
        assert err["type"] == "permission_error", (name, err)
        assert "offers POST /v1/chat/completions, POST /v1/responses" in err["message"], err
    reached = {(r["method"], r["path"].split("?")[0]) for r in adv_provider.requests}
    for path in ("/v1/files", "/v1/files/file-abc/content", "/v1/models/x", "/v1/fine_tuning/jobs",
                 "/v1/batches", "/v1/images/generations"):  # fmt: skip
        assert not {m for m, p in reached if p == path}, (path, reached)
    assert {r["path"] for r in _probes(adv_provider)} == {"/v1/chat/completions"}


def test_only_what_was_checked_is_sent(battery: Battery, adv_provider: OpenAIStub) -> None:
    """Items 2 and 3: a body whose model, n and max_tokens appear twice is a 400 (never sent, the
    endpoint would read the last); a request with no length gets the profile's; a Responses
    request asking for 10**6 output tokens is a 400 naming max_output_tokens."""
    _, found = _found(battery)
    dup = found["duplicate-keys"]
    assert dup["status"] == 400 and "appears twice" in dup["body"], dup
    huge = found["huge-output"]
    assert huge["status"] == 400 and "max_output_tokens=1000000 is over" in huge["body"], huge
    assert found["no-max-tokens"]["status"] == 200, found["no-max-tokens"]
    sent = [r["body"] for r in _probes(adv_provider)]
    tags = [b["messages"][0]["content"].split(" ", 1)[1] for b in sent]
    assert sorted(tags) == sorted(["no-max-tokens", QUOTE, QUOTE]), tags
    for body in sent:  # one model, one completion, the profile's length
        assert body["model"] == PROVIDER_MODEL and "n" not in body, body
        assert body["max_tokens"] == FORWARDER_MAX_TOKENS, body


def test_the_key_the_endpoint_quotes_never_reaches_the_agent(
    battery: Battery, canaries: Canaries, adv_provider: OpenAIStub
) -> None:
    """Item 11: the endpoint got the key and quoted it in an error body, a header and a stream
    cut into 5-byte pieces; the agent read the marker in its place."""
    key = canaries.values["ADV_PROFILE_KEY"]
    quoted = [r for r in _probes(adv_provider) if QUOTE in json.dumps(r["body"])]
    assert {r["authorization"] for r in quoted} == {f"Bearer {key}"}, quoted
    detail, found = _found(battery)
    for name, status in (("quote", 401), ("quote-stream", 200)):
        got = found[name]
        assert got["status"] == status, (name, got)
        assert f"Incorrect API key provided: Bearer {KEY_MARK}" in got["body"], (name, got)
        seen = {k.lower(): v for k, v in got["headers"].items()}
        assert seen["x-seen-credential"] == f"Bearer {KEY_MARK}", (name, seen)
    assert_clean(canaries, "the forwarder agent's episode", json.dumps(detail))
