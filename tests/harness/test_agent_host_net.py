"""The provider forwarder (issue 38 items 1, 2, 3, 11): the profile's key is used only on the routes
the profile offers; the endpoint gets the body as checked (re-serialised; a key given twice is
refused); the profile's `max_tokens` bounds every offered route's own length field, filled in when
absent; and the key never comes back to the agent in a reply, whole or split across pieces.

A real forwarder on a Unix socket (`open_route`), a real HTTP client on it, and a loopback HTTP
endpoint standing in for the paid API, which records what reaches it and can quote back the
credential it was sent."""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import LoopbackHTTP, QuietHandler, chat_completion

from interp_harness.harness.agent_host.net import (
    KEY_MARK,
    SOCKET_NAME,
    KeyScrubber,
    ProviderForwarder,
    UsageMeter,
    key_forms,
    open_route,
)
from interp_harness.harness.providers.profiles import ProviderProfile

KEY = "sk-unit/profile-key-0123456789abcdef"  # "/" : some JSON encoders write it as "\/"
KEY_ENV = "UNIT_FORWARDER_KEY"
MSGS = [{"role": "user", "content": "hi"}]


class Endpoint(LoopbackHTTP):
    """Answers every request per `mode`, recording (method, path, headers, raw body): `ok` a chat
    completion; `quote` a 401 whose body and a header quote the credential it got; `stream` an
    event stream quoting it, written a few bytes at a time; `quote-escaped` the credential as a
    JSON encoder that escapes "/" writes it; `gzip` the quoting error gzip-compressed whatever was
    asked; `br` a body in an encoding the forwarder cannot read."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.got: list[dict[str, Any]] = []
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def handle_one(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.got.append(
                    {"method": self.command, "path": self.path, "headers": headers, "body": raw}
                )
                cred = headers.get("authorization", "") or headers.get("x-api-key", "")
                quoted = f"Incorrect API key provided: {cred}. Masked: {cred[:6]}...{cred[-4:]}"
                if outer.mode == "ok":
                    return self.send_json(200, chat_completion("fine", "cheap-model"))
                if outer.mode == "stream":
                    data = b"".join(
                        b"data: " + json.dumps({"said": f"{i}: {quoted}"}).encode() + b"\n\n"
                        for i in range(3)
                    )
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("x-seen-credential", cred)
                    self.end_headers()
                    for i in range(0, len(data), 5):  # the key split across many pieces
                        self.wfile.write(data[i : i + 5])
                        self.wfile.flush()
                    self.close_connection = True
                    return None
                text = json.dumps({"error": {"message": quoted}})
                if outer.mode == "quote-escaped":
                    text = text.replace("/", "\\/")
                body = text.encode()
                self.send_response(401)
                self.send_header("content-type", "application/json")
                self.send_header("x-seen-credential", cred)
                if outer.mode in ("gzip", "br"):
                    body = gzip.compress(body)
                    self.send_header("content-encoding", outer.mode)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one  # noqa: N815

        self.serve(Handler)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    e = Endpoint()
    yield e
    e.close()


@pytest.fixture
def route(endpoint: Endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`route(**profile)`: an httpx client on a forwarder for an openai profile on `endpoint`
    (overridden by `profile`) with key KEY."""
    monkeypatch.setenv(KEY_ENV, KEY)
    endpoint.mode, endpoint.got = "ok", []
    opened: list[tuple[httpx.Client, ProviderForwarder]] = []

    def make(**fields: Any) -> httpx.Client:
        base = {"kind": "openai", "base_url": endpoint.url + "/v1", "api_key_env": KEY_ENV}
        profile = ProviderProfile(name="unit", **{**base, **fields})
        sock = tmp_path / str(len(opened))
        sock.mkdir()
        _, relay = open_route(profile, str(sock), "/run/agent", UsageMeter())
        transport = httpx.HTTPTransport(uds=str(sock / SOCKET_NAME))
        client = httpx.Client(transport=transport, base_url="http://agent", timeout=30)
        opened.append((client, relay))
        return client

    yield make
    for client, relay in opened:
        client.close()
        relay.stop()


def _chat(**fields: Any) -> dict[str, Any]:
    return {"model": "cheap-model", "messages": MSGS, **fields}


def test_only_the_routes_the_profile_offers_reach_the_endpoint(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    """The attacker's list: with the default profile every route but chat completions is a 403
    the agent reads (naming what is offered), and none reaches the endpoint."""
    c = route()
    attempts = [
        ("GET", "/v1/files", None),
        ("GET", "/v1/files/file-1/content", None),
        ("DELETE", "/v1/models/x", None),
        ("POST", "/v1/fine_tuning/jobs", {"model": "cheap-model", "training_file": "file-1"}),
        ("POST", "/v1/batches", {"input_file_id": "file-1", "endpoint": "/v1/chat/completions"}),
        ("POST", "/v1/images/generations", {"prompt": "a cat", "n": 1}),
        ("GET", "/v1/models", None),  # harmless, but not offered unless the operator says so
        ("POST", "/v1/completions", {"model": "cheap-model", "prompt": "x"}),
        ("POST", "/v1/responses", {"model": "cheap-model", "input": "x"}),
        ("GET", "/v1/chat/completions", None),  # an offered path, with another method
        ("DELETE", "/v1/chat/completions", None),
        ("POST", "/v1/chat/completions?api-version=x", _chat()),  # no query string either
        ("POST", "/v1/chat/completions/", _chat()),
    ]
    for method, path, body in attempts:
        r = c.request(method, path, json=body)
        assert r.status_code == 403, (method, path, r.text)
        err = r.json()["error"]
        assert err["type"] == "permission_error" and "refused by the harness" in err["message"]
        if "?" not in path:
            assert "offers POST /v1/chat/completions" in err["message"], err
    assert endpoint.got == []
    r = c.post("/v1/chat/completions", json=_chat(max_tokens=5))
    assert r.status_code == 200 and r.json()["object"] == "chat.completion", r.text
    assert [(g["method"], g["path"]) for g in endpoint.got] == [("POST", "/v1/chat/completions")]


def test_a_profile_offers_the_routes_it_names(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    c = route(routes=["responses", "models"])
    assert c.get("/v1/models").status_code == 200
    assert c.post("/v1/responses", json={"model": "m", "input": "x"}).status_code == 200
    r = c.post("/v1/chat/completions", json=_chat())
    assert r.status_code == 403 and "offers POST /v1/responses, GET /v1/models" in r.text, r.text
    assert c.post("/v1/models", json={}).status_code == 403  # the list is read, not written
    assert [(g["method"], g["path"]) for g in endpoint.got] == [
        ("GET", "/v1/models"),
        ("POST", "/v1/responses"),
    ]
    # an anthropic profile offers the Messages API by default, under its SDK's paths
    a = route(kind="anthropic", base_url=endpoint.url)
    assert a.post("/v1/messages", json=_chat(max_tokens=5)).status_code == 200
    r = a.post("/v1/complete", json={"model": "m", "prompt": "x", "max_tokens_to_sample": 5})
    assert r.status_code == 403 and "offers POST /v1/messages" in r.text, r.text
    assert endpoint.got[-1]["headers"]["x-api-key"] == KEY


def test_a_body_two_parsers_could_read_differently_is_refused(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    """The attacker's body: the checked value first, the one the endpoint would read last."""
    c = route(models=["cheap-model"], max_tokens=512)
    bodies = [
        b'{"model": "gpt-4-expensive", "messages": [], "model": "cheap-model"}',
        b'{"model": "cheap-model", "n": 64, "messages": [], "n": 1}',
        b'{"model": "cheap-model", "max_tokens": 999999, "messages": [], "max_tokens": 5}',
        # at any depth
        b'{"model": "cheap-model", "messages": [{"role": "user", "content": "a", "role": "x"}]}',
        b'{"model": "cheap-model", "messages": [], "stream_options": {"a": 1, "a": 2}}',
    ]
    for raw in bodies:
        r = c.post("/v1/chat/completions", content=raw)
        assert r.status_code == 400 and "appears twice" in r.text, (raw, r.text)
    for raw, says in [
        (b'{"model": "cheap-model", "messages": [], "temperature": NaN}', "NaN"),
        (b'{"model": "cheap-model", "messages": [], "temperature": 1e999}', "out of range"),
        (b'[{"model": "cheap-model"}]', "not a JSON object"),
        (b'"cheap-model"', "not a JSON object"),
        (b"model=cheap-model", "not JSON"),
        (b"", "not JSON"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"model": "cheap-model", "messages": "\xff"}', "not JSON"),
    ]:
        r = c.post("/v1/chat/completions", content=raw)
        assert r.status_code == 400 and says in r.json()["error"]["message"], (raw[:40], r.text)
    assert endpoint.got == []


def test_the_endpoint_gets_what_was_checked(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    """Re-serialised from the checked object; of the agent's headers only the SDKs' pass (no
    organisation or project switch, no beta flag, no credential of the agent's)."""
    c = route(models=["cheap-model"])
    raw = b'{ "model" : "cheap-model",\n "messages": [{"role": "user", "content": "h\\u00e9"}] }'
    headers = {
        "content-type": "text/plain",
        "authorization": "Bearer agent-chosen",
        "x-api-key": "agent-chosen",
        "openai-organization": "org-someone-else",
        "openai-project": "proj-other",
        "anthropic-beta": "files-api-2025-04-14",
        "x-stainless-retry-count": "0",
        "user-agent": "OpenAI/Python 1.0",
    }
    assert c.post("/v1/chat/completions", content=raw, headers=headers).status_code == 200
    [got] = endpoint.got
    assert got["body"] == json.dumps(json.loads(raw), separators=(",", ":")).encode()
    h = got["headers"]
    assert h["authorization"] == f"Bearer {KEY}" and h["content-type"] == "application/json"
    assert (h["x-stainless-retry-count"], h["user-agent"]) == ("0", "OpenAI/Python 1.0")
    for name in ("openai-organization", "openai-project", "anthropic-beta", "x-api-key"):
        assert name not in h, name


def test_the_profiles_max_tokens_bounds_every_route(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    """max_tokens 512: filled in where a request sets no length (the built-in openai agent sends
    none), refused above it in each route's own field; n / best_of and the model checked on each
    route."""
    routes = ["chat.completions", "completions", "responses"]
    c = route(models=["cheap-model"], max_tokens=512, routes=routes)
    m = {"model": "cheap-model"}
    sent = [
        ("/v1/chat/completions", _chat(), {"max_tokens": 512}),
        ("/v1/chat/completions", _chat(max_completion_tokens=100), {"max_completion_tokens": 100}),
        ("/v1/chat/completions", _chat(max_tokens=7), {"max_tokens": 7}),
        ("/v1/completions", {**m, "prompt": "x"}, {"max_tokens": 512}),
        ("/v1/responses", {**m, "input": "x"}, {"max_output_tokens": 512}),
        ("/v1/responses", {**m, "input": "x", "max_output_tokens": 9}, {"max_output_tokens": 9}),
    ]
    for path, body, bound in sent:
        assert c.post(path, json=body).status_code == 200, (path, body)
        got = json.loads(endpoint.got[-1]["body"])
        assert got == {**body, **bound}, (path, got)
    refused = [
        ("/v1/responses", {**m, "input": "x", "max_output_tokens": 1_000_000}, "max_output_tokens"),
        ("/v1/responses", {**m, "input": "x", "max_output_tokens": 1e6}, "max_output_tokens"),
        ("/v1/chat/completions", _chat(max_completion_tokens=513), "max_completion_tokens=513"),
        ("/v1/chat/completions", _chat(max_tokens=513), "max_tokens=513"),
        ("/v1/completions", {**m, "prompt": "x", "max_tokens": 4096}, "max_tokens=4096"),
        ("/v1/completions", {**m, "prompt": "x", "n": 2}, "n=2"),
        ("/v1/completions", {**m, "prompt": "x", "best_of": 3}, "best_of=3"),
        ("/v1/responses", {**m, "input": "x", "n": 4}, "n=4"),
        ("/v1/responses", {"model": "gpt-4-expensive", "input": "x"}, "not 'gpt-4-expensive'"),
        ("/v1/responses", {"input": "x"}, "names no model"),
        ("/v1/completions", {"prompt": "x"}, "names no model"),
    ]
    before = len(endpoint.got)
    for path, body, says in refused:
        r = c.post(path, json=body)
        assert r.status_code == 400 and says in r.text, (path, body, r.text)
    assert len(endpoint.got) == before
    # the Messages API's max_tokens too
    a = route(kind="anthropic", base_url=endpoint.url, max_tokens=512)
    r = a.post("/v1/messages", json=_chat(max_tokens=4096))
    assert r.status_code == 400 and "max_tokens=4096" in r.text, r.text
    assert a.post("/v1/messages", json=_chat()).status_code == 200
    assert json.loads(endpoint.got[-1]["body"])["max_tokens"] == 512


@pytest.mark.parametrize("mode", ["quote", "quote-escaped", "stream", "gzip"])
def test_the_key_never_comes_back_to_the_agent(route, endpoint: Endpoint, mode: str) -> None:  # type: ignore[no-untyped-def]
    """The endpoint quotes the credential it got (body and header; streamed in 5-byte pieces;
    JSON-escaped; compressed): the agent reads the marker instead, and a masked prefix as sent."""
    c = route()
    endpoint.mode = mode
    r = c.post("/v1/chat/completions", json=_chat())
    assert endpoint.got[-1]["headers"]["authorization"] == f"Bearer {KEY}"  # it was sent
    seen = r.content.decode() + json.dumps(dict(r.headers))
    for form in (KEY, KEY.replace("/", "\\/"), "profile-key-0123456789abcdef"):
        assert form not in seen, (form, seen)
    assert f"Incorrect API key provided: Bearer {KEY_MARK}" in r.content.decode(), r.text
    assert r.headers["x-seen-credential"] == f"Bearer {KEY_MARK}"
    assert "Masked: Bearer...cdef" in r.text  # partial echoes are left as the provider sent them
    if mode == "stream":
        events = [json.loads(x[6:]) for x in r.text.split("\n\n") if x]
        assert [e["said"][:2] for e in events] == ["0:", "1:", "2:"]


def test_a_reply_the_forwarder_cannot_read_is_not_passed_on(route, endpoint: Endpoint) -> None:  # type: ignore[no-untyped-def]
    c = route()
    endpoint.mode = "br"  # not decodable here: the key in it could not be found
    r = c.post("/v1/chat/completions", json=_chat())
    assert r.status_code == 502 and "'br'" in r.json()["error"]["message"], r.text
    assert KEY not in r.text


def test_the_scrubber_finds_the_key_however_a_stream_is_cut() -> None:
    rng = random.Random(38)
    forms = key_forms(KEY)
    text = b"".join(
        rng.choice([KEY.encode(), b"\n", b"data: x", KEY.encode()[:9], b"\\/", b"sk-"])
        for _ in range(400)
    )
    whole = text.replace(KEY.encode(), KEY_MARK.encode())
    for _ in range(50):
        s, out, i = KeyScrubber(forms), [], 0
        while i < len(text):
            n = rng.randint(1, 60)
            out.append(s.feed(text[i : i + n]))
            i += n
        out.append(s.end())
        assert b"".join(out) == whole
    # a piece that ends a line comes out whole (a stream's events are not held back)
    s = KeyScrubber(forms)
    assert s.feed(b"data: {}\n") == b"data: {}\n"
    assert key_forms("EMPTY") == []  # local servers' placeholder is no secret
