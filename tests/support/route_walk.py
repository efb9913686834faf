"""Hostile JSON on every route of a real HTTP app (issue 27 item 11): the routes come from the
app's own OpenAPI document, so a new route must get an example body here or the walk fails.

Each example body is mutated: every string as a lone surrogate, every number as NaN, infinity
and an overflowing literal, every list empty and with an empty item, every key as a lone
surrogate; then whole-body oddities. An answer fails the walk when it is a 5xx, or a 4xx without
the service's error object (`{"error": {"message": ...}}`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import httpx

NAN = float("nan")
SENTINEL = 123456.789125


def _leaves(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _replace(body: Any, path: tuple, new: Any) -> Any:
    out = copy.deepcopy(body)
    cur = out
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = new
    return out


def mutations(body: Any) -> Iterator[tuple[str, bytes]]:
    """Every string as a lone surrogate, every number as NaN and infinity, every list empty and
    with an empty item, every key as a lone surrogate; then whole-body oddities."""
    for path, v in _leaves(body):
        if not path:
            continue
        if isinstance(v, str):
            yield f"{path}=surrogate", json.dumps(_replace(body, path, "a\ud800b")).encode()
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            for bad in (NAN, float("inf")):
                yield f"{path}={bad}", json.dumps(_replace(body, path, bad)).encode()
            text = json.dumps(_replace(body, path, SENTINEL))  # a number that overflows
            yield f"{path}=1e999", text.replace(repr(SENTINEL), "1e999").encode()
        if isinstance(v, list):
            yield f"{path}=[]", json.dumps(_replace(body, path, [])).encode()
            yield f"{path}=[[]]", json.dumps(_replace(body, path, [[]])).encode()
            yield f"{path}=[{{}}]", json.dumps(_replace(body, path, [{}])).encode()
        if isinstance(v, dict):
            k = next(iter(v), None)
            if k is not None:
                moved = {("\ud800" if kk == k else kk): vv for kk, vv in v.items()}
                yield f"{path} key=surrogate", json.dumps(_replace(body, path, moved)).encode()
    if isinstance(body, dict):
        for k in body:
            moved = {("\ud800" if kk == k else kk): vv for kk, vv in body.items()}
            yield f"key {k}=surrogate", json.dumps(moved).encode()
    yield from GENERIC


GENERIC = [
    ("empty", b""),
    ("not json", b"{nope"),
    ("bad utf-8", b'{"prompt": "\xff\xfe"}'),
    ("NaN", b"NaN"),
    ("surrogate string", b'"\\ud800"'),
    ("null", b"null"),
    ("list", b"[]"),
    ("object", b"{}"),
    ("deep", b"[" * 5000 + b"]" * 5000),
    ("huge int", b'{"max_tokens": 1' + b"0" * 5000 + b"}"),
]


def routes(url: str) -> list[tuple[str, str]]:
    spec = httpx.get(url + "/openapi.json", timeout=30).json()
    return sorted((m.upper(), p) for p, ops in spec["paths"].items() for m in ops)


def walk(url: str, examples: dict[tuple[str, str], Any], fill: dict[str, str]) -> list[str]:
    """Every route of the app with every mutation: the list of answers that were 5xx or lacked
    the service's error object."""
    found = routes(url)
    missing = [r for r in found if r not in examples]
    assert not missing, f"new routes need an example body here: {missing}"
    bad = []
    with httpx.Client(base_url=url, timeout=120) as http:
        for method, path in found:
            real = path.format(**fill)
            body = examples[(method, path)]
            probes = list(mutations(body)) if body is not None else list(GENERIC)
            if "{" in path:  # path parameters: a surrogate, percent-encoded as UTF-8 would
                probes.append(("path surrogate", b""))
            for name, content in probes:
                hostile_path = name.startswith("path")
                target = path.format(**dict.fromkeys(fill, "%ED%A0%80")) if hostile_path else real
                try:
                    r = http.request(
                        method,
                        target + ("?q=%ED%A0%80" if body is None else ""),
                        content=content,
                        headers={"content-type": "application/json"},
                    )
                except httpx.TransportError as e:  # the server failed while answering
                    bad.append(f"{method} {path} [{name}]: {type(e).__name__}: {e}")
                    continue
                if r.status_code >= 500:
                    bad.append(f"{method} {path} [{name}]: {r.status_code} {r.text[:150]}")
                elif r.status_code >= 400:
                    try:
                        msg = r.json()["error"]["message"]
                        assert isinstance(msg, str) and msg
                    except (ValueError, KeyError, TypeError, AssertionError):
                        bad.append(f"{method} {path} [{name}]: {r.status_code} {r.text[:150]}")
    return bad
