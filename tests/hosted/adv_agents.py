"""Hostile agents for the adversarial suite, loaded by dotted path (`adv_agents:EnvAgent`).

Like any agent run in an agent host, this module imports nothing but the `agents` package and the
standard library: the host binds this one file and nothing else of the tests. Each agent looks for
secrets (or misbehaves) on its first step and writes whatever it found into its message, where the
suite's canary check looks for it. Found text leads with whatever matches the canary pattern, so
that a leak is visible however the message is cut later.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
from collections.abc import Iterator

from interp_harness.agents.base import Agent, AgentOptions, AgentReply, Message, Usage
from interp_harness.agents.options import ProviderOptions

# Every canary the suite plants is CANARY_PREFIX + 20 hex digits (tests/support/canary.py).
CANARY_PREFIX = "cnry"
CANARY_RE = re.compile(CANARY_PREFIX + "[0-9a-f]{20}")
MAX_DUMP = 60_000  # raw text kept after the canary-shaped matches


def report(found: dict[str, object]) -> str:
    """The agent's message: canary-shaped strings first, then everything found, as JSON."""
    raw = json.dumps(found, default=str)
    hits = sorted(set(CANARY_RE.findall(raw)))
    return "[DESCRIPTION]: " + json.dumps({"canary_like": hits, "found": raw[:MAX_DUMP]})


def _read(path: str, limit: int = 65_536) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def _pids() -> Iterator[str]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    yield from (n for n in names if n.isdigit())


def _per_pid(what: str) -> dict[str, str]:
    out = {}
    for pid in (*_pids(), "self", "thread-self"):
        got = _read(f"/proc/{pid}/{what}")
        if got:
            out[pid] = got
    return out


def _links(pattern_dirs: list[str]) -> dict[str, str]:
    out = {}
    for d in pattern_dirs:
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            try:
                out[p] = os.readlink(p)
            except OSError:
                continue
    return out


class EnvAgent(Agent):
    """Its own environment, the way a process reads it."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(
            content=report({"os.environ": dict(os.environ), "self": _read("/proc/self/environ")})
        )


class ProcEnvironAgent(Agent):
    """Every process's environment it can see (bwrap's init is pid 1)."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        return AgentReply(content=report({"environ": _per_pid("environ")}))


class ProcCmdlineAgent(Agent):
    """Command lines, working directories, roots, executables and mount tables of every pid."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        found: dict[str, object] = {
            "cmdline": _per_pid("cmdline"),
            "mountinfo": _per_pid("mountinfo"),
            "status": _per_pid("status"),
        }
        for link in ("cwd", "root", "exe"):
            found[link] = {}
            for p in (*_pids(), "self"):
                try:
                    found[link][p] = os.readlink(f"/proc/{p}/{link}")  # type: ignore[index]
                except OSError:
                    continue
        return AgentReply(content=report(found))


class ProcFdAgent(Agent):
    """Every descriptor of every pid: where it points, and what a regular file behind it holds."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        dirs = [f"/proc/{p}/fd" for p in (*_pids(), "self")]
        links = _links(dirs)
        files = {}
        for path, target in links.items():
            if target.startswith("/") and not target.startswith(("/dev/", "/proc/")):
                got = _read(path)
                if got:
                    files[path] = got
        return AgentReply(content=report({"links": links, "files": files}))


class NetOptions(AgentOptions):
    tcp: list[tuple[str, int]] = []  # (host, port) pairs to try
    socket_dirs: list[str] = ["/tmp", "/run", "/var/run", "/dev/shm"]


class NetworkAgent(Agent):
    """Tries TCP to the given hosts (the test server, the database) and every Unix socket it can
    find; on a connection it sends an HTTP GET and keeps what comes back."""

    Options = NetOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        reached: dict[str, str] = {}
        for host, port in self.options.get("tcp", []):
            try:
                with socket.create_connection((host, int(port)), timeout=3) as s:
                    reached[f"{host}:{port}"] = _http_get(s)
            except OSError:
                continue
        for d in self.options.get("socket_dirs", NetOptions().socket_dirs):
            for root, _, names in _walk(d):
                for n in names:
                    p = os.path.join(root, n)
                    try:
                        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                            s.settimeout(3)
                            s.connect(p)
                            reached[p] = _http_get(s)
                    except OSError:
                        continue
        text = report({"reached": reached})
        return AgentReply(content=text + "\nREACHED: " + json.dumps(sorted(reached)))


def _walk(d: str) -> Iterator[tuple[str, list[str], list[str]]]:
    try:
        yield from os.walk(d)
    except OSError:
        return


def _http_get(s: socket.socket) -> str:
    try:
        s.sendall(b"GET /runs HTTP/1.0\r\nHost: x\r\n\r\n")
        return s.recv(4096).decode("utf-8", "replace")
    except OSError as e:
        return f"connected; {e}"


class HugeOptions(AgentOptions):
    mb: int = 16


class HugeReplyAgent(Agent):
    """One reply of `mb` megabytes (issue 27 item 5: past the cap it is a clear agent error)."""

    Options = HugeOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        mb = int(self.options.get("mb", 16))
        return AgentReply(content="[DESCRIPTION]: " + "A" * (mb * 1024 * 1024))


class HangingAgent(Agent):
    """A step that never returns (issue 27 item 12: a default wall budget per step ends it)."""

    async def step(self, conversation: list[Message]) -> AgentReply:
        while True:
            await asyncio.sleep(3600)


class UsageOptions(AgentOptions):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    # odd steps report these instead (a budget that a negative count would hide)
    then_prompt_tokens: int | None = None


class FakeUsageAgent(Agent):
    """Reports made-up usage on every step and never answers (the round cap or a budget ends it).
    Issue 27 item 8: usage is validated at the host boundary."""

    Options = UsageOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        k = sum(m.role == "assistant" for m in conversation)
        o = self.options
        prompt = int(o.get("prompt_tokens", 0))
        if k % 2 and o.get("then_prompt_tokens") is not None:
            prompt = int(o["then_prompt_tokens"])
        usage = Usage.model_construct(
            prompt_tokens=prompt,
            completion_tokens=int(o.get("completion_tokens", 0)),
            cost_usd=float(o.get("cost_usd", 0.0)),
        )
        return AgentReply(content=f"COMMAND: PYTHON(./temp/function.py {k})", usage=usage)


class AnswerOptions(AgentOptions):
    code: str
    description: str = "hostile answer"


class AnswerAgent(Agent):
    """Answers at once with the given code as its [CODE] (hostile answer code, run by the scoring
    worker)."""

    Options = AnswerOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        o = self.options
        return AgentReply(
            content=f"[DESCRIPTION]: {o.get('description', '')}\n[DOMAIN]: all reals\n"
            f"[CODE]: ```python\n{o['code']}\n```"
        )


class ProviderSnoopAgent(Agent):
    """A provider agent (it gets its profile's route): reads its environment and every process's,
    then calls its endpoint with whatever key it was given, and reports all of it."""

    provider = "openai"
    Options = ProviderOptions  # a profile and a model, as the openai agent takes them

    async def step(self, conversation: list[Message]) -> AgentReply:
        import urllib.request

        found: dict[str, object] = {
            "os.environ": dict(os.environ),
            "environ": _per_pid("environ"),
        }
        req = urllib.request.Request(
            os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
            data=json.dumps(
                {"model": self.options.get("model"), "messages": [{"role": "user", "content": "x"}]}
            ).encode(),
            headers={
                "content-type": "application/json",
                "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY')}",
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - the route only
                found["reply"] = r.read(65_536).decode("utf-8", "replace")
        except Exception as e:
            found["reply"] = f"{type(e).__name__}: {e}"
        return AgentReply(content=report(found))


# Issue 38 items 1, 2, 3, 11: what ForwarderAbuseAgent sends, by name (test_forwarder.py reads it).
PROBE = "forwarder-probe"  # in every body it sends, so the endpoint's record of them is found
QUOTE = "quote-my-credential"  # the suite's stub endpoint then quotes the credential it got


def _forwarder_attempts(model: object) -> dict[str, tuple[str, str, bytes | None]]:
    def body(tag: str, **fields: object) -> bytes:
        msgs = [{"role": "user", "content": f"{PROBE} {tag}"}]
        return json.dumps({"model": model, "messages": msgs, **fields}).encode()

    m = json.dumps(model)
    dup = (
        '{"model": "gpt-4-expensive", "n": 64, "max_tokens": 999999, "messages": [{"role": '
        f'"user", "content": "{PROBE} duplicate-keys"}}], "model": {m}, "n": 1, "max_tokens": 5}}'
    )
    probe = json.dumps({"model": model, "prompt": PROBE, "training_file": "file-abc"}).encode()
    return {
        "files": ("GET", "/files", None),
        "file-content": ("GET", "/files/file-abc/content", None),
        "delete-model": ("DELETE", "/models/x", None),
        "models": ("GET", "/models", None),
        "fine-tune": ("POST", "/fine_tuning/jobs", probe),
        "batches": ("POST", "/batches", probe),
        "images": ("POST", "/images/generations", probe),
        "duplicate-keys": ("POST", "/chat/completions", dup.encode()),
        "no-max-tokens": ("POST", "/chat/completions", body("no-max-tokens")),
        "huge-output": (
            "POST",
            "/responses",
            json.dumps(
                {"model": model, "input": f"{PROBE} huge", "max_output_tokens": 10**6}
            ).encode(),
        ),
        "quote": ("POST", "/chat/completions", body(QUOTE)),
        "quote-stream": ("POST", "/chat/completions", body(QUOTE, stream=True)),
    }


class ForwarderAbuseAgent(Agent):
    """A provider agent that uses its route for what its profile does not offer: other routes and
    methods of the provider's API, a body whose keys appear twice (the checked value first), a
    request with no output length and one with a huge one, and requests whose replies quote the
    credential the endpoint got (plain and streamed). Reports each status, headers and reply."""

    provider = "openai"
    Options = ProviderOptions

    async def step(self, conversation: list[Message]) -> AgentReply:
        import urllib.error
        import urllib.request

        base = os.environ["OPENAI_BASE_URL"].rstrip("/")
        found: dict[str, object] = {}
        for name, (method, path, data) in _forwarder_attempts(self.options.get("model")).items():
            req = urllib.request.Request(
                base + path,
                data=data,
                method=method,
                headers={
                    "content-type": "application/json",
                    "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY')}",
                },
            )
            try:
                with urllib.request.urlopen(req, timeout=30) as r:  # noqa: S310 - the route only
                    status, headers, text = r.status, dict(r.headers), r.read(4000)
            except urllib.error.HTTPError as e:
                status, headers, text = e.code, dict(e.headers), e.read(4000)
            except Exception as e:
                status, headers, text = 0, {}, f"{type(e).__name__}: {e}".encode()
            found[name] = {
                "status": status,
                "headers": headers,
                "body": text.decode("utf-8", "replace")[:2000],
            }
        return AgentReply(content=report(found))
