"""Backbone down, slow, or returning garbage: clear per-input errors, category infrastructure,
bounded time. The misbehaving backbones are real HTTP servers on loopback."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.entities_relations.client import (
    BackboneClient,
    BackboneError,
    BackboneSettings,
)
from interp_harness.function_store.runtime import RuntimeContext, call_target

MODELS = {"object": "list", "data": [{"id": "m"}]}


def _completion(content: str | None) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


class Misbehaving:
    """A loopback HTTP server answering /v1/chat/completions according to `mode`."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.hits = 0
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def _send(self, code: int, body: bytes, ctype="application/json"):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(200, json.dumps(MODELS).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                m = outer.mode
                if "batch" in self.path:
                    if m != "batch-no-choices":  # like vLLM: no batch extension
                        return self._send(404, b'{"detail":"Not Found"}')
                    outer.hits += 1
                    empty = {**_completion("x"), "choices": []}
                    batch = {"completions": [empty] * len(body["messages_list"])}
                    return self._send(200, json.dumps(batch).encode())
                outer.hits += 1
                if m == "slow":
                    time.sleep(3)
                    return self._send(200, json.dumps(_completion("late")).encode())
                if m == "garbage":
                    return self._send(200, b"<html>surprise</html>", "text/html")
                if m == "wrong-json":
                    return self._send(200, b'{"choices": "nope"}')
                if m == "wrong-shape":
                    return self._send(200, b'{"result": {"text": " Paris"}}')
                if m == "no-choices":
                    return self._send(200, json.dumps({**_completion("x"), "choices": []}).encode())
                if m == "null-content":
                    return self._send(200, json.dumps(_completion(None)).encode())
                if m == "500-then-ok" and outer.hits == 1:
                    return self._send(500, b'{"error": "boom"}')
                return self._send(200, json.dumps(_completion(" Paris")).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def relation():
    return Catalog().get("find-v1/relations/f00000")


def _settings(url: str, timeout_s: float = 0.5, **kw) -> BackboneSettings:
    return BackboneSettings(
        url=url, timeout_s=timeout_s, connect_timeout_s=0.5, retries=2, backoff_s=0.01, **kw
    )


def test_down_backbone_gives_infrastructure_errors(relation):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    out = call_target(
        relation,
        ["France", "Peru"],
        RuntimeContext(backbone=_settings(f"http://127.0.0.1:{port}", model="m")),
    )
    assert time.monotonic() - t0 < 10
    assert [o.input for o in out] == ["France", "Peru"]
    for o in out:
        assert o.output is None and o.error_category == "infrastructure"
        assert "backbone unavailable" in o.error and "connection failed" in o.error


@pytest.mark.parametrize(
    "mode,needle",
    [
        ("slow", "timed out"),
        ("garbage", "not JSON"),
        ("wrong-json", "malformed"),
        ("wrong-shape", "malformed"),
        ("no-choices", "has no choices"),
        ("null-content", "message content is null"),
        ("batch-no-choices", "has no choices"),
    ],
)
def test_misbehaving_backbone(relation, mode, needle):
    srv = Misbehaving(mode)
    try:
        t0 = time.monotonic()
        # only the slow server should time out: the others answer at once, however busy the machine
        settings = _settings(srv.url, timeout_s=0.5 if mode == "slow" else 5.0)
        out = call_target(relation, ["France", "Peru"], RuntimeContext(backbone=settings))
        assert time.monotonic() - t0 < 15  # bounded: nothing hangs
        for o in out:
            assert o.output is None and o.error_category == "infrastructure"
            assert needle in o.error, o.error
        if mode != "slow":
            assert srv.hits >= 3  # retried
    finally:
        srv.close()


def test_transient_500_is_retried_and_vllm_style_server_gets_concurrent_requests(relation):
    srv = Misbehaving("500-then-ok")
    try:
        out = call_target(
            relation, ["France", "Peru", "Chile"], RuntimeContext(backbone=_settings(srv.url))
        )
        assert [o.output for o in out] == [" Paris"] * 3  # raw, as FIND prints it
        assert all(o.error is None for o in out)
        assert srv.hits == 4  # 3 inputs + 1 retried 500, after the batch route 404ed
    finally:
        srv.close()


def test_entity_without_logprobs_is_an_error_not_a_score():
    srv = Misbehaving("ok")  # answers with no logprobs at all, even to forced choice
    try:
        client = BackboneClient(_settings(srv.url))
        with pytest.raises(BackboneError, match="forced-choice"):
            client.entity_scores([[{"role": "user", "content": "x"}]])
    finally:
        srv.close()
