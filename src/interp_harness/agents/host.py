"""The agent host: `python -m interp_harness.agents.host` builds one agent and answers its steps over stdin/stdout.

The orchestrator starts it inside a sandbox (see `interp_harness.harness.agent_host.host`), so the agent runs in a
process that holds nothing but the conversation it is sent and its own options. It imports only
`interp_harness.agents` and `interp_harness.sdk` and the agent's own module. The protocol is `interp_harness.agents.host_protocol`; whatever
the agent prints goes to stderr (the protocol keeps the original stdout to itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import sys
import traceback
from typing import Any, BinaryIO
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ValidationError

from interp_harness.agents.base import Agent, AgentError, Message, check_usage
from interp_harness.agents.host_protocol import (
    DEFAULT_MAX_MESSAGE_CHARS,
    MAX_LINE,
    REQUEST,
    Check,
    Close,
    Closed,
    Failure,
    Init,
    Network,
    Ready,
    Reply,
    Step,
    encode,
    invalid,
    no_tools,
    reply_chars,
    too_long,
)
from interp_harness.agents.registry import UnknownAgent, check_agent_class, import_path
from interp_harness.agents.toolspec import ToolCall

# The orchestrator binds its byte forwarder module (interp_harness.function_store.service.forward, stdlib only)
# here: the host reuses it without being able to import anything else of function_store.
FORWARD_PY = "/opt/interp-harness-lib/forward.py"


def _listen(net: Network) -> int:
    """Start a loopback listener inside the sandbox that relays to the orchestrator's socket."""
    spec = importlib.util.spec_from_file_location("_harness_forward", FORWARD_PY)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"forwarder module missing at {FORWARD_PY}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fwd = mod.TcpToUnixForwarder(net.uds)
    fwd.start()
    return int(fwd.port)


def _route(net: Network, options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Point the SDK at the in-sandbox listener; returns the options to build the agent with, and
    what to write in the agent's error texts in place of the listener's address (the URL the user
    configured: the listener is an internal detail no one outside the host can reach)."""
    port = _listen(net)
    u = urlsplit(net.url)
    # plain http to the orchestrator's forwarder, which speaks http(s) to the endpoint itself
    local = urlunsplit(("http", f"127.0.0.1:{port}", u.path, u.query, u.fragment))
    os.environ[net.url_env] = local
    if options.get("base_url") and str(options["base_url"]).rstrip("/") == net.url.rstrip("/"):
        options = {**options, "base_url": local}
    # the local URL keeps the profile's path, so replacing the origin maps every URL under it
    public = {f"http://127.0.0.1:{port}": f"{u.scheme}://{u.netloc}", f"127.0.0.1:{port}": u.netloc}
    return options, public


def _agent_traceback(e: BaseException) -> str:
    """The exception's traceback without the host's own frames (this module, asyncio's loop)."""
    te = traceback.TracebackException.from_exception(e)
    for t in _chain(te):
        frames = [f for f in t.stack if not _host_frame(f.filename)]
        t.stack = traceback.StackSummary.from_list(frames or list(t.stack))
    return "".join(te.format())


def _chain(te: traceback.TracebackException) -> list[traceback.TracebackException]:
    out, seen = [], set()
    todo: list[traceback.TracebackException | None] = [te]
    while todo:
        t = todo.pop()
        if t is None or id(t) in seen:
            continue
        seen.add(id(t))
        out.append(t)
        todo += [t.__cause__, t.__context__]
    return out


def _host_frame(filename: str) -> bool:
    return filename == __file__ or f"{os.sep}asyncio{os.sep}" in filename


class _ImportFailed(Exception):
    """The agent's class could not be imported (its module, or a module that one imports)."""


class _Host:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.agent: Agent | None = None
        self.conv: list[Message] = []
        self.max_chars = DEFAULT_MAX_MESSAGE_CHARS
        self.public: dict[str, str] = {}  # internal address -> the URL the user configured

    def handle(self, req: Init | Check | Step | Close) -> Ready | Reply | Failure | Closed:
        try:
            if isinstance(req, Init):
                return self._init(req)
            if isinstance(req, Check):
                return self._ready(_import_agent(req.agent))
            if isinstance(req, Step):
                return self._step(req)
            return self._close()
        except _ImportFailed as e:
            cause = e.__cause__ or e
            return self._failure(str(e), "agent", False, cause, import_error=True)
        except AgentError as e:
            return self._failure(str(e), e.category, e.retryable, e)
        except Exception as e:  # the agent's own failure: reported, the host stays up
            return self._failure(f"{type(e).__name__}: {e}", "agent", False, e)

    def _failure(
        self, message: str, category: str, retryable: bool, e: BaseException, **kw: Any
    ) -> Failure:
        return Failure(
            message=self._public(message),
            category=category,
            retryable=retryable,
            traceback=self._public(_agent_traceback(e)),
            **kw,
        )

    def _public(self, text: str) -> str:
        for internal, public in self.public.items():
            text = text.replace(internal, public)
        return text

    def _ready(self, cls: type[Agent]) -> Ready:
        return Ready(name=cls.name or cls.__qualname__, provider=cls.provider)

    def _init(self, req: Init) -> Ready:
        if self.agent is not None:
            raise RuntimeError("agent host: init sent twice")
        self.max_chars = req.max_message_chars
        options = dict(req.options)
        if req.network:
            options, self.public = _route(req.network, options)
        cls = _import_agent(req.agent)
        self.agent = cls(**options)
        return self._ready(cls)

    def _step(self, req: Step) -> Reply | Failure:
        if self.agent is None:
            raise RuntimeError("agent host: step before init")
        if req.keep > len(self.conv):
            raise RuntimeError(f"agent host: keep={req.keep} but only {len(self.conv)} messages")
        self.conv = [*self.conv[: req.keep], *req.messages]
        if req.tools is None:
            reply = self.loop.run_until_complete(self.agent.step(list(self.conv)))
        elif not getattr(type(self.agent), "supports_tools", False):
            cls = type(self.agent)
            return Failure(message=no_tools(cls.name or cls.__qualname__), category="agent")
        else:
            step = self.agent.step(list(self.conv), tools=list(req.tools))  # type: ignore[call-arg]
            reply = self.loop.run_until_complete(step)
        if not isinstance(getattr(reply, "content", None), str):
            return Failure(message=f"agent returned {reply!r:.200}", category="agent")
        calls = _calls(reply) if req.tools is not None else []  # the text protocol has none
        if isinstance(calls, Failure):
            return calls
        # Said here, before a huge message is encoded; the orchestrator checks again (it does not
        # trust this process, which runs the agent's code).
        if (size := reply_chars(reply.content, calls)) > self.max_chars:
            return Failure(
                message=too_long(f"{size:,} characters", self.max_chars), category="agent"
            )
        usage = check_usage(reply.usage)  # AgentError -> a Failure, category agent
        model = reply.model if isinstance(reply.model, str) or reply.model is None else None
        return Reply(content=reply.content, tool_calls=calls, usage=usage, model=model)

    def _close(self) -> Closed:
        if self.agent is not None:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.agent.aclose())
        return Closed()


def _calls(reply: Any) -> list[ToolCall] | Failure:
    """The reply's tool calls, validated as the orchestrator will (bounded, cleaned)."""
    raw = getattr(reply, "tool_calls", None) or []
    try:
        if not isinstance(raw, list | tuple):
            raise TypeError(f"tool_calls is a {type(raw).__name__}, not a list")
        data = [c.model_dump() if isinstance(c, BaseModel) else c for c in raw]
        return Reply.model_validate({"content": "", "tool_calls": data}).tool_calls
    except (ValidationError, TypeError, ValueError) as e:
        return Failure(message=f"agent returned invalid tool calls: {invalid(e)}", category="agent")


def _import_agent(path: str) -> type[Agent]:
    try:
        obj = import_path(path)
    except UnknownAgent as e:
        raise _ImportFailed(str(e)) from e.__cause__ or e
    return check_agent_class(obj, path)


def serve(inp: BinaryIO, out: BinaryIO) -> None:
    host = _Host()
    while line := inp.readline(MAX_LINE + 1):
        req: Init | Check | Step | Close | None = None
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            out.write(encode(Failure(message="request too long", category="infrastructure")))
            return
        try:
            req = REQUEST.validate_json(line)
        except ValidationError as e:
            resp: Any = Failure(message=f"bad request: {e}", category="infrastructure")
        else:
            resp = host.handle(req)
        data = encode(resp)
        if len(data) > MAX_LINE:
            note = (
                f"reply of {len(data):,} bytes is over the protocol's {MAX_LINE:,}-byte line limit"
            )
            data = encode(Failure(message=note, category="agent"))
        out.write(data)
        out.flush()
        if isinstance(req, Close):
            return


def main() -> None:
    out = os.fdopen(os.dup(1), "wb", buffering=0)  # the protocol's channel
    os.dup2(2, 1)  # the agent's prints go to stderr, never into the protocol
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()
