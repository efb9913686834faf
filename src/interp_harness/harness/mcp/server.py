"""The MCP server external agents reach: the official `mcp` SDK's low-level server over
Streamable HTTP, one endpoint per episode (`<base>/<episode id>`), one bearer token per episode.

A request is answered only when its token is the episode's in the path; once that episode has
ended, its token lists no tool and every call answers "episode ended". The tool handlers look the episode up by the request's token again, so neither an MCP
session id nor the path alone grants anything. Tools are the episode's benchmark's commands
(`interp_harness.function_store.benchmark.benchmark(family).commands`), listed with their JSON schemas; in
protocol mode `code-tools` also the lab's `run_python` (`interp_harness.harness.episode.runner.offered_tools`: what the
episode offers), whose cells run in the episode's lab (docs/code-mode.md).

Bounds, as for a native agent's message at the agent host: a call whose arguments are longer
than the agent message cap (HARNESS_AGENT_MAX_MESSAGE_CHARS) is refused before it reaches the
episode, which ends with that agent error; a request body longer than such a message can take as
JSON (`reply_line_limit`) is refused with 413 before it is parsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from interp_harness.agents.host_protocol import (
    DEFAULT_MAX_MESSAGE_CHARS,
    reply_chars,
    reply_line_limit,
    too_long,
)
from interp_harness.agents.toolspec import ToolCall
from interp_harness.harness.domain.rendezvous import (
    RENDEZVOUS,
    Channel,
    Endpoint,
    EpisodeEnded,
    Rendezvous,
)
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.episode.runner import offered_tools
from interp_harness.harness.rate_limit import (
    FailureBudget,
    TooManyFailures,
    client_address,
    mcp_budget,
)
from interp_harness.harness.runs.plan import RunPlan
from interp_harness.harness.runs.prepare import RunState, store_episodes
from interp_harness.harness.store.models import EPISODE_TERMINAL, Run
from interp_harness.harness.store.repo import Store

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

LOOPBACK = ("127.0.0.1", "localhost", "::1")
TASK = "task"  # the one MCP prompt: the episode's instructions
TASK_HELP = (
    "The episode's instructions, as its agent is told them: its system prompt, then its first "
    "user message (answered once the episode has started)."
)


def bearer(headers: Any) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    auth = headers.get("authorization") or ""
    scheme, _, token = auth.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class McpApp:
    """The ASGI app serving every episode of this process's rendezvous under one path."""

    def __init__(
        self,
        rendezvous: Rendezvous = RENDEZVOUS,
        *,
        rebinding_protection: bool = True,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
        failures: FailureBudget | None = None,
    ) -> None:
        """`rebinding_protection`: accept only loopback Host and Origin headers (a server bound
        to loopback, as the SDK does for it). `max_message_chars`: the operator's agent message
        cap (HARNESS_AGENT_MAX_MESSAGE_CHARS), one call's arguments here. `failures`: the
        budget of wrong tokens per client address (interp_harness.harness.rate_limit; the REST API shares its
        own with the app mounted in it)."""
        self.rendezvous = rendezvous
        self.failures = failures or FailureBudget()
        self.max_chars = max_message_chars
        self.max_body = reply_line_limit(max_message_chars)
        self.server: Server[Any] = Server(
            "interp-harness",
            instructions=(
                "Tools of one interpretability episode. Read the prompt `task` (the episode's "
                "instructions), call the target with its tools, then end with submit_answer."
            ),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        security = None
        if rebinding_protection:
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
            )
        self.sessions = StreamableHTTPSessionManager(app=self.server, security_settings=security)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group; requests are served inside it only."""
        async with self.sessions.run():
            yield

    # ASGI --------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":  # served on its own (harness mcp serve)
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        episode_id = scope["path"][len(scope.get("root_path", "")) :].strip("/").split("/")[-1]
        token = bearer(headers)
        client = client_address(scope.get("client"))
        # the path's episode has a budget of its own only while it is live: a made-up path
        # shares one, so that guessing cannot multiply budgets by inventing episodes
        budget = mcp_budget(episode_id if self.rendezvous.get(episode_id) else None)
        if token:  # past the address's budget of wrong tokens: refused before any lookup
            try:
                self.failures.check(client, budget)
            except TooManyFailures as e:
                await _refuse(send, 429, e.message, retry_after=e.retry_after)
                return
        channel = self.rendezvous.by_token(token) if token else None
        if channel is None:
            if token:
                self.failures.failed(client, budget)
            await _refuse(send, 401, "a bearer token of one episode is required")
        elif channel.episode_id != episode_id:
            await _refuse(send, 403, "this token is for another episode")
        else:  # an ended episode's token still reaches the server, to be told it has ended
            # (its client's last `tools/call` is followed by a `tools/list`: the SDK's check)
            if scope.get("method") == "POST":
                body = await _bounded_body(receive, headers, self.max_body)
                if body is None:
                    await _refuse(send, 413, _too_large(self.max_body, self.max_chars))
                    return
                receive = _replay(body, receive)
            channel.connect()  # its episode may now take an execution slot
            await self.sessions.handle_request(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()
        async with self.running():
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})

    # MCP handlers ------------------------------------------------------------------------

    def _channel(self, ctx: ServerRequestContext[Any]) -> Channel:
        # by this request's token, whatever session it arrived on
        request = ctx.request
        token = bearer(getattr(request, "headers", {})) if request is not None else None
        channel = self.rendezvous.by_token(token) if token else None
        if channel is None:
            raise PermissionError("a bearer token of one episode is required")
        return channel

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        channel = self._channel(ctx)
        if channel.ended is not None:  # an expired token lists nothing
            return types.ListToolsResult(tools=[])
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec.name,
                    description=spec.tool_description(),
                    input_schema=spec.parameters,
                )
                for spec in offered_tools(channel.family, channel.mode)
            ]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        channel = self._channel(ctx)
        arguments = dict(params.arguments or {})
        # the native rule (interp_harness.agents.host_protocol): a message's size is its text plus its calls'
        # arguments as JSON; an MCP call is a message of one call and no text
        size = reply_chars("", [ToolCall.model_construct(arguments=arguments)])
        if size > self.max_chars:
            reason = too_long(f"{size:,} characters (one MCP call's arguments)", self.max_chars)
            return _text(channel.refuse(reason).text, error=True)
        try:
            result = await channel.call(params.name, arguments)
        except EpisodeEnded as e:
            return _text(f"episode ended: {e}", error=True)
        return _text(result.text, error=result.is_error)

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self._channel(ctx)
        return types.ListPromptsResult(prompts=[types.Prompt(name=TASK, description=TASK_HELP)])

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        channel = self._channel(ctx)
        if params.name != TASK:
            raise ValueError(f"unknown prompt {params.name!r}; the one prompt is {TASK!r}")
        try:
            opening = await channel.opening()  # waits for the episode to start
        except EpisodeEnded as e:
            raise ValueError(f"episode ended: {e}") from None
        return types.GetPromptResult(
            description=TASK_HELP,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=t))
                for _, t in opening
            ],
        )


def _text(text: str, *, error: bool) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _too_large(max_bytes: int, max_chars: int) -> str:
    return (
        f"request body larger than {max_bytes:,} bytes, the most a call within the agent "
        f"message cap of {max_chars:,} characters takes (HARNESS_AGENT_MAX_MESSAGE_CHARS)"
    )


async def _bounded_body(receive: Receive, headers: dict[str, str], max_bytes: int) -> bytes | None:
    """A POST request's whole body, read here (the SDK reads it whole too); None, without reading
    further, once it is longer than `max_bytes` (by its Content-Length, or as it arrives)."""
    try:
        if int(headers.get("content-length") or 0) > max_bytes:
            return None
    except ValueError:
        pass  # the server (h11) refuses a malformed length itself
    chunks, seen = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client went away: the SDK sees an empty body
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > max_bytes:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` for the SDK: the body read already, then the connection's own messages."""
    sent = False

    async def replay() -> MutableMapping[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(send: Send, status: int, message: str, retry_after: int | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="harness-mcp"'))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def store_episodes_now(store: Store, run: Run, plan: RunPlan) -> None:
    """Store the new run's episodes now, as the scheduler will when it starts the run (it keeps
    them: idempotent), so that their endpoints can be handed out before it does."""
    targets = {t.id: t for t in plan.targets}
    provider = getattr(plan.agent_cls, "provider", "local")
    store_episodes(store, run, RunState(run.id, plan.spec, None, provider, targets))


def issue_endpoints(
    store: Store, run_id: str, base_url: str, rendezvous: Rendezvous = RENDEZVOUS
) -> list[Endpoint]:
    """An endpoint and token for each episode of the run that has not ended (made on first
    request, the same ones after)."""
    run = store.runs.get(run_id)
    mode = RunSpec.model_validate(run.spec).protocol.mode if run is not None else ""
    out = []
    for ep in store.episodes.of_run(run_id):
        if ep.status in EPISODE_TERMINAL:
            continue
        ch = rendezvous.open(ep.id, ep.family, mode)
        url = f"{base_url.rstrip('/')}/{ep.id}"
        out.append(Endpoint(episode_id=ep.id, target_id=ep.target_id, url=url, token=ch.token))
    return out


class McpServer:
    """The MCP app on its own port, in this event loop (beside the episodes it serves)."""

    def __init__(self, app: McpApp, host: str = "127.0.0.1", port: int = 0) -> None:
        import uvicorn

        self.app, self.host = app, host
        self.sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # inherited by each accepted connection: without it every reply waits ~40 ms (Nagle
        # against the client's delayed ACK; docs/benchmarks.md "protocols")
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.bind((host, port))
        self.port = self.sock.getsockname()[1]
        self._server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
        )
        self._task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self.sock]))
        while not self._server.started:
            if self._task.done():
                await self._task  # its error
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        if self._task is not None:
            self._server.should_exit = True
            await self._task
            self._task = None
        self.sock.close()
