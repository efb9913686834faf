"""What the provider forwarder sends on for one request an agent made: the checks, and the request
built from what was checked (interp_harness.harness.agent_host.net relays it).

An agent's request is agent text. It may use the profile's key only for what the operator's
profile offers (`ProviderProfile.offered_routes`): one of those routes, with its method, no
query string; on an inference route a JSON object body within the profile's limits. The endpoint
gets the object as the forwarder parsed it, re-serialised: a body that two JSON parsers could read
differently (a key given twice, at any depth; NaN / Infinity) is refused rather than sent. Of the
agent's headers only those the SDKs need pass (`_PASSED_HEADERS`); an organisation or project
header, a beta switch, a credential: none reaches the endpoint.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from interp_harness.harness.providers.profiles import ProfileError, ProviderProfile, Route

# Request headers passed on (the SDKs' own; x-stainless-* is their client telemetry). The forwarder
# sets the credential, content-type and accept-encoding itself.
_PASSED_HEADERS = frozenset({"accept", "user-agent", "anthropic-version", "idempotency-key"})
_PASSED_PREFIXES = ("x-stainless-",)


class Refused(Exception):
    """A request the forwarder does not send: the HTTP status and message the agent reads."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass(frozen=True)
class Outgoing:
    """What goes to the endpoint (the forwarder adds the profile's credential)."""

    method: str
    url: str
    headers: list[tuple[str, str]]
    content: bytes
    route: Route


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"the key {key!r:.100} appears twice in one object")
        obj[key] = value
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999: re-serialised it would be Infinity
        raise ValueError(f"{text[:40]} is out of range")
    return value


def strict_json(body: bytes) -> Any:
    """The JSON value of `body`; ValueError saying why when it is not JSON, repeats a key in an
    object (two parsers may keep either value) or holds NaN / Infinity."""
    try:
        return json.loads(
            body, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float
        )
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None


def offered(profile: ProviderProfile) -> str:
    """The profile's routes as the agent calls them (method and path under the profile's URL)."""
    base = urlsplit(profile.url).path.rstrip("/")
    return ", ".join(f"{r.method} {base}{r.path}" for r in profile.offered_routes())


def outgoing(
    profile: ProviderProfile, method: str, target: str, headers: Any, body: bytes
) -> Outgoing:
    """The request to send for an agent's `method target` with `headers` and `body`; Refused
    (status, message) when it may not go."""
    u = urlsplit(profile.url)
    base = u.path.rstrip("/")
    parts = urlsplit(target)
    p = parts.path
    inside = p == base or p.startswith(base + "/")
    if not target.startswith("/") or target.startswith("//") or ".." in p or "%2e" in p.lower():
        inside = False
    if not inside:
        raise Refused(400, f"path {p[:200]!r} is outside the provider profile's URL")
    route = next((r for r in profile.offered_routes() if base + r.path == p), None)
    if route is None or route.method != method:
        raise Refused(
            403,
            f"{method[:16]} {p[:200]} is not offered: provider profile {profile.name!r} "
            f"offers {offered(profile)} (the operator sets a profile's routes)",
        )
    if parts.query or target.endswith("?"):
        raise Refused(403, f"a query string is not offered ({method} {p} takes none)")
    enc = headers.get("content-encoding", "identity").lower()
    if enc != "identity":
        raise Refused(
            400, f"content-encoding {enc!r} is not accepted (send the body as plain JSON)"
        )
    passed = [
        (k, v)
        for k, v in headers.items()
        if k.lower() in _PASSED_HEADERS or k.lower().startswith(_PASSED_PREFIXES)
    ]
    url = f"{u.scheme}://{u.netloc}{base}{route.path}"
    if not route.inference:
        if body:
            raise Refused(400, f"{method} {p} takes no body")
        return Outgoing(method, url, passed, b"", route)
    try:
        data = strict_json(body)
    except ValueError as e:
        raise Refused(400, f"the request body is not JSON the harness can pass on: {e}") from None
    if not isinstance(data, dict):
        raise Refused(400, "the request body is not a JSON object")
    try:
        data = profile.check_request(data, route)
    except ProfileError as e:
        raise Refused(400, str(e)) from None
    content = json.dumps(data, separators=(",", ":")).encode()
    return Outgoing(method, url, [*passed, ("content-type", "application/json")], content, route)
