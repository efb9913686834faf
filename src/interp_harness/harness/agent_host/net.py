"""The one network route a provider agent's host gets: its provider profile's endpoint.

The sandbox has no network. The orchestrator binds a directory holding one Unix socket into it;
behind that socket sits a `ProviderForwarder`, an HTTP forwarder that sends each request on to
the profile's http(s) endpoint (the orchestrator speaks TLS; inside, the SDK speaks plain http to
its private loopback listener, `interp_harness.agents.host._route`). Because the forwarder reads every request
and reply, it

- sends on only what the profile offers (`interp_harness.harness.providers.requests`): one of its routes
  (`ProviderProfile.routes`; default chat completions / messages), else a 403 naming the routes
  it offers; on an inference route a JSON object body (else a 400), re-serialised from what was
  checked (a key given twice, at any depth, is refused), within the profile's models and limits
  (a 400 naming the key; its `max_tokens` filled into the route's length field when absent), and
  only the request headers the SDKs need;
- sends the profile's key (`ProviderProfile.auth_headers`) in place of the agent's credential
  headers: the host holds only a placeholder (`HELD_KEY`), so agent code cannot read the key;
- cuts that key from every reply header and body, streamed ones included (`KeyScrubber`): an
  endpoint may quote the credential it was sent ("Incorrect API key provided: ...");
- counts the tokens the provider reports in each reply's `usage` (`UsageMeter`); the episode's
  token budget counts these rather than what the agent claims (docs/agents.md, "Usage").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import socketserver
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import quote

import httpx

from interp_harness.agents.base import MAX_MESSAGE_TOKENS
from interp_harness.agents.host_protocol import MAX_LINE, Network
from interp_harness.harness.providers.profiles import PROVIDER_ENV, ProviderProfile
from interp_harness.harness.providers.requests import Outgoing, Refused, outgoing

log = logging.getLogger(__name__)

SOCKET_NAME = "provider.sock"
MAX_BODY = MAX_LINE  # a request or a (non-streamed) reply body, bytes
_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "accept-encoding",
    "content-encoding",
}
# reply encodings httpx always decodes (the relay reads the decoded body, to find the key in it)
_DECODED = frozenset({"", "identity", "gzip", "deflate"})
# provider statuses an agent may report as an infrastructure or budget failure (with 5xx)
PROVIDER_FAILURES = frozenset({402, 408, 429})
# usage fields of OpenAI-style and Anthropic replies (and of their streamed events)
_PROMPT = (
    "prompt_tokens",
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
_COMPLETION = ("completion_tokens", "output_tokens")


@dataclass(frozen=True)
class Seen:
    """Usage the provider reported between two readings of a meter."""

    prompt_tokens: int
    completion_tokens: int
    replies: int  # replies that carried a usage object
    failures: int = 0  # provider failures the forwarder saw (transport errors, 402, 408, 429, 5xx)


class UsageMeter:
    """Running totals of the usage the provider reported in replies through one forwarder
    (thread-safe: the forwarder serves each connection on its own thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Seen(0, 0, 0)
        self._relaying = 0  # requests the forwarder has taken and not yet finished

    @contextlib.contextmanager
    def relaying(self) -> Iterator[None]:
        """Held by the forwarder while it handles one request, usage counting included."""
        with self._lock:
            self._relaying += 1
        try:
            yield
        finally:
            with self._lock:
                self._relaying -= 1

    async def settled(self, timeout: float = 5.0) -> None:
        """Wait, at most `timeout` seconds, until no request is mid-relay. The agent reads a
        reply as soon as its last byte is written, which can be before the forwarder's thread
        has counted that reply's usage; a step's reading taken then would miss it."""
        deadline = time.monotonic() + timeout
        while self._relaying and time.monotonic() < deadline:
            await asyncio.sleep(0.005)

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            t = self._total
            self._total = Seen(
                t.prompt_tokens + prompt_tokens,
                t.completion_tokens + completion_tokens,
                t.replies + 1,
                t.failures,
            )

    def failed(self) -> None:
        with self._lock:
            self._total = dataclasses.replace(self._total, failures=self._total.failures + 1)

    def reading(self) -> Seen:
        with self._lock:
            return self._total

    def since(self, before: Seen) -> Seen:
        now = self.reading()
        return Seen(
            now.prompt_tokens - before.prompt_tokens,
            now.completion_tokens - before.completion_tokens,
            now.replies - before.replies,
            now.failures - before.failures,
        )


def _tokens(value: object) -> int:
    # the provider's own figure, but bounded all the same (a broken server is not a crash)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return min(value, MAX_MESSAGE_TOKENS)


class _ReplyUsage:
    """The usage of one reply, from its JSON body or its stream's events. Streamed counts may be
    cumulative (Anthropic's message_delta), so each field keeps its largest value."""

    def __init__(self) -> None:
        self.prompt = self.completion = 0
        self.found = False

    def feed(self, obj: object) -> None:
        if not isinstance(obj, dict):
            return
        msg = obj.get("message")
        for holder in (obj.get("usage"), msg.get("usage") if isinstance(msg, dict) else None):
            if isinstance(holder, dict):
                self.found = True
                self.prompt = max(self.prompt, sum(_tokens(holder.get(k)) for k in _PROMPT))
                self.completion = max(
                    self.completion, sum(_tokens(holder.get(k)) for k in _COMPLETION)
                )

    def feed_sse_line(self, line: bytes) -> None:
        if line.startswith(b"data:"):
            with contextlib.suppress(ValueError):
                self.feed(json.loads(line[5:]))


KEY_MARK = "[the provider profile's key]"  # what stands in a reply where the endpoint quoted it
_MIN_KEY = 8  # shorter "keys" ("EMPTY" for local servers) are no secret and would mangle text


def key_forms(key: str | None) -> list[str]:
    """The ways a reply may spell `key`: as sent, JSON-escaped, percent-encoded."""
    if not key or len(key) < _MIN_KEY:
        return []
    escaped = json.dumps(key)[1:-1]
    forms = {key, escaped, escaped.replace("/", "\\/"), quote(key, safe="")}
    return sorted(forms, key=len, reverse=True)


class KeyScrubber:
    """Cuts every occurrence of the key's forms from a byte stream fed in arbitrary pieces: what
    could still be the start of one is held back until the next piece (or the end) shows. A piece
    that ends a line is passed on whole (a key holds no newline), so a stream's events are not
    delayed."""

    def __init__(self, forms: list[str]) -> None:
        self.forms = [f.encode() for f in forms]
        self.hold = max((len(f) for f in self.forms), default=1) - 1
        self.buf = b""

    def text(self, value: str) -> str:
        for f in self.forms:
            value = value.replace(f.decode(), KEY_MARK)
        return value

    def _cut(self, data: bytes) -> bytes:
        for f in self.forms:
            data = data.replace(f, KEY_MARK.encode())
        return data

    def feed(self, piece: bytes) -> bytes:
        if not self.forms:
            return piece
        data = self._cut(self.buf + piece)
        keep = 0 if data.endswith(b"\n") else min(self.hold, len(data) - data.rfind(b"\n") - 1)
        self.buf = data[len(data) - keep :]
        return data[: len(data) - keep]

    def end(self) -> bytes:
        data, self.buf = self.buf, b""
        return data  # held text holds no whole key: it was cut on the way in


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class ProviderForwarder:
    """An HTTP server on a Unix socket that forwards each request to `profile`'s endpoint, after
    checking it against the profile, and counts the usage in the replies into `meter`."""

    def __init__(self, path: str, profile: ProviderProfile, meter: UsageMeter) -> None:
        self.profile, self.meter = profile, meter
        self.auth = profile.auth_headers()
        self.key_forms = key_forms(profile.api_key())
        # no overall timeout: the agent's own request timeout governs how long a reply may take
        self.client = httpx.Client(timeout=httpx.Timeout(None, connect=30.0), trust_env=False)
        self.server = _UnixHTTPServer(path, _handler(self))
        os.chmod(path, 0o666)  # uid 65534 inside connects here
        self._started = False

    def start(self) -> None:
        self._started = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._started:
            self.server.shutdown()
        self.server.server_close()
        self.client.close()

    def outgoing(self, method: str, target: str, headers: Any, body: bytes) -> Outgoing:
        """The request to send for the agent's; Refused when the profile does not allow it."""
        return outgoing(self.profile, method, target, headers, body)


def _handler(fwd: ProviderForwarder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_request(self) -> None:
            with fwd.meter.relaying():
                self._forward()

        def _forward(self) -> None:
            if "transfer-encoding" in self.headers:
                return self._error(411, "send a Content-Length, not a chunked body")
            try:
                n = int(self.headers.get("content-length") or 0)
            except ValueError:
                return self._error(400, "bad Content-Length")
            if n < 0 or n > MAX_BODY:
                return self._error(413, f"request body over {MAX_BODY} bytes")
            body = self.rfile.read(n) if n else b""
            try:
                out = fwd.outgoing(self.command, self.path, self.headers, body)
            except Refused as e:
                log.warning("agent request refused by the provider forwarder: %s", e.message)
                return self._error(e.status, f"refused by the harness: {e.message}")
            headers = [*out.headers, *fwd.auth.items()]  # the key, which the sandbox never holds
            headers.append(("accept-encoding", "identity"))  # so that usage can be read
            req = fwd.client.build_request(
                out.method, out.url, headers=headers, content=out.content
            )
            try:
                resp = fwd.client.send(req, stream=True)
            except httpx.HTTPError as e:
                fwd.meter.failed()
                return self._error(502, f"the provider endpoint failed: {type(e).__name__}")
            try:
                if resp.status_code in PROVIDER_FAILURES or resp.status_code >= 500:
                    fwd.meter.failed()
                enc = resp.headers.get("content-encoding", "identity").lower().strip()
                if any(e.strip() not in _DECODED for e in enc.split(",")):
                    # what the forwarder cannot decode it cannot check for the key
                    fwd.meter.failed()
                    return self._error(502, f"the provider endpoint sent {enc[:40]!r} content")
                self._relay(resp)
            finally:
                resp.close()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_request  # noqa: N815

        def _relay(self, resp: httpx.Response) -> None:
            usage = _ReplyUsage()
            scrub = KeyScrubber(fwd.key_forms)
            streamed = "text/event-stream" in resp.headers.get("content-type", "")
            self.send_response(resp.status_code)
            for k, v in resp.headers.multi_items():
                if k.lower() not in _HOP:
                    self.send_header(scrub.text(k), scrub.text(v))
            if streamed:
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                with contextlib.suppress(OSError, httpx.HTTPError):
                    for line in _lines(resp.iter_bytes()):
                        usage.feed_sse_line(line)
                        self._chunk(scrub.feed(line))
                    self._chunk(scrub.end())
                    self.wfile.write(b"0\r\n\r\n")
            else:
                parts, size = [], 0
                with contextlib.suppress(httpx.HTTPError):
                    for chunk in resp.iter_bytes():
                        parts.append(chunk)
                        size += len(chunk)
                        if size > MAX_BODY:
                            break
                data = b"".join(parts)
                with contextlib.suppress(ValueError, RecursionError):
                    usage.feed(json.loads(data))
                data = scrub.feed(data) + scrub.end()
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(data)
            if usage.found:
                fwd.meter.add(usage.prompt, usage.completion)

        def _chunk(self, data: bytes) -> None:
            if data:  # an empty chunk would end the reply
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        def _error(self, status: int, message: str) -> None:
            # both SDKs read error.message (OpenAI) / error.type + message (Anthropic)
            kind = "permission_error" if status == 403 else "invalid_request_error"
            err = {"type": "error", "error": {"type": kind, "message": message}}
            data = json.dumps(err).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.wfile.write(data)

        def address_string(self) -> str:
            return "agent-host"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Chunks cut after each newline (SSE events are read line by line); a line longer than
    MAX_BODY is passed on in pieces."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        while (i := buf.find(b"\n")) >= 0 or len(buf) > MAX_BODY:
            cut = i + 1 if i >= 0 else len(buf)
            yield buf[:cut]
            buf = buf[cut:]
    if buf:
        yield buf


def open_route(
    profile: ProviderProfile, sock_dir: str, inside_dir: str, meter: UsageMeter
) -> tuple[Network, ProviderForwarder]:
    """Start the host-side end of the route for `profile` in `sock_dir` (bound at `inside_dir`)."""
    path = os.path.join(sock_dir, SOCKET_NAME)
    relay = ProviderForwarder(path, profile, meter)
    relay.start()
    url_env = PROVIDER_ENV[profile.kind][1]  # the variable agent_env() puts the URL in
    net = Network(uds=f"{inside_dir}/{SOCKET_NAME}", url=profile.url, url_env=url_env)
    return net, relay
