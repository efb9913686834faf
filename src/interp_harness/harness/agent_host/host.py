"""The orchestrator's side of the agent host: run each episode's agent in its own sandboxed process.

`AgentHosts.client(agent_cls, options)` returns an `AgentHostClient`, an `Agent` whose `step`
sends the conversation to a `python -m interp_harness.agents.host` process inside bubblewrap and returns its
reply (or raises the agent's `AgentError`, category kept). The host is started on the first step,
one per episode, so nothing an agent keeps in memory survives into another episode.

What the sandbox holds (see docs/agents.md, "What an agent can and cannot reach"): the system and
the Python prefix read-only; of our package, `interp_harness.agents` and `interp_harness.sdk`
only; the agent's own top-level module or package, files its `file_options` name, a private
/tmp. Any other copy of the orchestrator, targets, model services or evaluator parts on the
Python path is replaced by a package that raises ImportError. The
environment is cleared; a provider agent gets its profile's base URL, a placeholder key and one
route to the profile's endpoint, whose forwarder adds the real key on the orchestrator's side; any
other agent gets no secrets and no network at all.

In protocol mode `tools` each step also carries the benchmark's commands (`Step.tools`); the
hosted agent's `step` gets `tools=` only then, and the reply's tool calls come back validated
(`interp_harness.agents.host_protocol.Reply`: at most 64, arguments counted in the message cap). A class without
`supports_tools` is refused before any host starts.

A host that dies mid-step (killed, crashed) is replaced and the same step is asked again: nothing
was stored for it, so nothing is duplicated. A cancelled step (the wall-time budget) kills the
host, whose state is then unknown.

Nothing the host says is trusted (it runs the agent's code): its reply line is read with a bound
(`reply_line_limit` of `max_message_chars`, HARNESS_AGENT_MAX_MESSAGE_CHARS) and validated; a
longer message, a malformed reply or invalid usage ends the step with an *agent* error. The
tokens a step used are the ones the provider reported through the forwarder when it saw any
(interp_harness.harness.agent_host.net), else the agent's (validated) claim.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from interp_harness.agents.base import (
    MAX_MESSAGE_TOKENS,
    Agent,
    AgentError,
    AgentReply,
    Message,
    Usage,
)
from interp_harness.agents.host import FORWARD_PY
from interp_harness.agents.host_protocol import (
    DEFAULT_MAX_MESSAGE_CHARS,
    MAX_LINE,
    RESPONSE,
    Check,
    Close,
    Failure,
    Init,
    Ready,
    Reply,
    encode,
    invalid,
    no_tools,
    reply_chars,
    reply_line_limit,
    too_long,
)
from interp_harness.agents.host_protocol import Step as StepRequest
from interp_harness.agents.toolspec import ToolSpec
from interp_harness.function_store.service import forward
from interp_harness.harness.agent_host.errors import CREATE_PREFIX, HostedAgentError
from interp_harness.harness.agent_host.net import KeyScrubber, Seen, UsageMeter, key_forms
from interp_harness.harness.policy import profile_for
from interp_harness.harness.providers.profiles import ProfileError, ProviderProfile
from interp_harness.harness.sandbox.base import Limits
from interp_harness.harness.sandbox.bwrap import (
    BwrapSandbox,
    Capped,
    feed,
    kill_tree,
    options_via_fd,
    python_roots,
)
from interp_harness.harness.sandbox.code_binds import CODE_ROOT, part_binds
from interp_harness.harness.sandbox.env import launcher_env
from interp_harness.harness.sandbox.spawn import spawn

log = logging.getLogger(__name__)

# parts of interp_harness an agent host never imports (it sees `agents`, and the SDK whose agent
# names load from `agents` alone)
HIDDEN_PARTS = ("harness", "function_store", "model_services", "evaluator")
_CODE_ROOT = "/opt/agent-code"  # the agent's own top-level module or package
_NET_DIR = "/run/agent"
_BLOCKED_INIT = (
    "raise ImportError(\n"
    "    '{name} is not importable inside an agent host: an agent sees only its conversation'\n"
    ")\n"
)


class HostDied(Exception):
    """The host process ended while a request was outstanding."""


class LineTooLong(Exception):
    """The host wrote a line over the limit; `size`: its bytes (at least, when not `complete`)."""

    def __init__(self, size: int, complete: bool) -> None:
        super().__init__(f"{size} bytes")
        self.size, self.complete = size, complete


async def read_line(stream: asyncio.StreamReader, limit: int) -> bytes:
    """One line (b"" or no newline at EOF). A line over `limit` bytes (the stream's own limit
    must be `limit`) is read on without being kept, to say its size up to MAX_LINE bytes, and
    raises LineTooLong."""
    try:
        return await stream.readuntil(b"\n")
    except asyncio.IncompleteReadError as e:
        return e.partial
    except asyncio.LimitOverrunError:
        pass
    seen, complete = 0, False
    while seen <= MAX_LINE:
        chunk = await stream.read(1 << 16)
        if not chunk:
            break
        if (i := chunk.find(b"\n")) >= 0:
            seen, complete = seen + i, True
            break
        seen += len(chunk)
    raise LineTooLong(seen, complete)


@dataclass
class HostPlan:
    """Everything one episode's host is started with (decided in the orchestrator)."""

    agent: str  # module:Class
    name: str
    provider: str
    options: dict[str, Any]
    profile: ProviderProfile | None = None
    binds: list[tuple[str, str]] = field(default_factory=list)  # (host path, inside path)
    supports_tools: bool = False  # the class's: protocol mode `tools` may ask its steps


def agent_path(cls: type[Agent]) -> str:
    if cls.__module__ == "__main__":
        raise AgentError(
            f"agent class {cls.__qualname__} is defined in __main__; an agent host imports it by "
            "module, so put it in a module (or package) of its own",
            category="agent",
        )
    return f"{cls.__module__}:{cls.__qualname__}"


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _is_ours(cls: type) -> bool:
    """A class of our own `agents` part, which every host has bound."""
    return cls.__module__ == "interp_harness.agents" or cls.__module__.startswith(
        "interp_harness.agents."
    )


def code_binds(cls: type[Agent]) -> list[tuple[str, str]]:
    """The agent's own code: its top-level module file or package directory (not its siblings,
    which may be a project checkout with a store or data next to it). Nothing for code that is
    already visible (`interp_harness.agents` and `interp_harness.sdk`, anything installed in the Python prefix)."""
    if _is_ours(cls):
        return []
    top = cls.__module__.split(".")[0]
    mod = sys.modules.get(top)
    origin = getattr(mod, "__file__", None)
    if origin is None:
        if mod is not None and getattr(mod, "__path__", None):
            raise AgentError(
                f"agent package {top!r} is a namespace package; give it an __init__.py so that "
                "its agent host can bind exactly its directory",
                category="agent",
            )
        return []
    origin = os.path.realpath(origin)
    if _under(origin, python_roots() + ["/usr"]):
        return []
    if os.path.basename(origin) == "__init__.py":
        return [(os.path.dirname(origin), f"{_CODE_ROOT}/{top}")]
    return [(origin, f"{_CODE_ROOT}/{os.path.basename(origin)}")]


def file_binds(cls: type[Agent], options: dict[str, Any]) -> list[tuple[str, str]]:
    """Files named by the options the class lists in `file_options`, read-only at the same path
    (e.g. the replay agent's transcript). Options come from the operator or from the REST
    policy's allowlist, never a free path from an API caller."""
    out = []
    for key in getattr(cls, "file_options", ()):
        value = options.get(key)
        if isinstance(value, str) and os.path.isfile(value):
            out.append((os.path.realpath(value), os.path.abspath(value)))
    return out


def importable_note(plan: HostPlan) -> str:
    """What an agent host can import (said with an import failure)."""
    own = [host for host, inside in plan.binds if inside.startswith(_CODE_ROOT + "/")]
    where = f" ({', '.join(own)})" if own else ""
    return (
        "an agent host can import only the standard library and the packages installed for "
        f"{sys.executable}, `interp_harness.agents` and `interp_harness.sdk`, and the agent's own top-level module or "
        f"package{where}; a module beside the agent's file is not there: move it into the "
        'agent\'s package or install it (docs/agents.md, "What an agent can and cannot reach")'
    )


_RESOLVE = object()  # plan_host: resolve the profile from the options


def plan_host(
    cls: type[Agent], options: dict[str, Any], profile: ProviderProfile | None | object = _RESOLVE
) -> HostPlan:
    """`profile`: the one the scheduler resolved for the run (interp_harness.harness.policy.profile_for), or
    resolved here from the options."""
    provider = getattr(cls, "provider", "local") or "local"
    if profile is _RESOLVE:
        try:
            profile = profile_for(cls, options)
        except ProfileError as e:
            raise AgentError(str(e), category="agent") from e
    return HostPlan(
        agent=agent_path(cls),
        name=cls.name or cls.__qualname__,
        provider=provider,
        options={k: v for k, v in options.items() if k != "profile"},
        profile=profile,  # type: ignore[arg-type]
        binds=code_binds(cls) + file_binds(cls, options),
        supports_tools=bool(getattr(cls, "supports_tools", False)),
    )


class _Process:
    """One running host: the bwrap process, its cgroup, its route and its log."""

    def __init__(self, proc: asyncio.subprocess.Process, cg: Any, relay: Any, dirs: list[str],
                 log_file: Any, max_chars: int) -> None:  # fmt: skip
        self.proc, self.cg, self.relay, self.dirs, self.log_file = proc, cg, relay, dirs, log_file
        self.max_chars = max_chars

    async def request(self, msg: Any) -> Any:
        """The host's answer to `msg`. HostDied when the host is gone; AgentError (category
        agent) when its line is too long or not a valid response."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(encode(msg))
            await self.proc.stdin.drain()
            line = await read_line(self.proc.stdout, reply_line_limit(self.max_chars))
        except LineTooLong as e:
            size = f"{e.size:,}{'' if e.complete else '+'} bytes of JSON"
            raise AgentError(too_long(size, self.max_chars), category="agent") from None
        except (OSError, ValueError, asyncio.IncompleteReadError) as e:
            raise HostDied(f"{type(e).__name__}: {e}") from e
        if not line.endswith(b"\n"):
            raise HostDied("the host exited" + self.exit_note())
        try:
            resp = RESPONSE.validate_json(line)
        except ValidationError as e:  # only the agent's code runs in the host
            raise AgentError(
                f"agent host sent an invalid reply: {invalid(e)}", category="agent"
            ) from None
        if isinstance(resp, Reply):
            size = reply_chars(resp.content, resp.tool_calls)
            if size > self.max_chars:
                raise AgentError(too_long(f"{size:,} characters", self.max_chars), category="agent")
        return resp

    def exit_note(self) -> str:
        rc = self.proc.returncode
        tail = self.log_tail().strip()
        return (f" (status {rc})" if rc is not None else "") + (
            f"; its output:\n{tail}" if tail else ""
        )

    def log_tail(self, n: int = 3000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.log_file.seek(0, os.SEEK_END)
            self.log_file.seek(max(0, self.log_file.tell() - n))
            return self.log_file.read().decode("utf-8", "replace")
        return ""

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # bwrap; its pid namespace takes the rest
        if self.cg:
            self.cg.kill_all()

    async def close(self, graceful: bool) -> None:
        if graceful and self.proc.returncode is None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.request(Close()), 5)
        self.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 5)
        if self.cg:
            self.cg.remove()
        if self.relay:
            self.relay.stop()
        self.log_file.close()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


class AgentHosts:
    """Starts sandboxed agent hosts (bubblewrap). One per orchestrator process."""

    def __init__(
        self,
        *,
        memory_mb: int = 2048,
        start_timeout_s: float = 60.0,
        max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS,
    ) -> None:
        self.max_message_chars = max_message_chars
        self.sandbox = BwrapSandbox()
        self.limits = Limits(timeout_s=start_timeout_s, memory_mb=memory_mb, max_procs=64)
        self._blocker = tempfile.mkdtemp(prefix="agent-host-blocked-")
        self._blocked: dict[str, str] = {}
        for name in HIDDEN_PARTS:
            d = os.path.join(self._blocker, name)
            os.makedirs(d)
            with open(os.path.join(d, "__init__.py"), "w") as f:
                f.write(_BLOCKED_INIT.format(name=f"interp_harness.{name}"))
            self._blocked[name] = d

    def client(
        self, cls: type[Agent], options: dict[str, Any], profile: object = _RESOLVE
    ) -> AgentHostClient:
        return AgentHostClient(self, plan_host(cls, options, profile))

    def close(self) -> None:
        shutil.rmtree(self._blocker, ignore_errors=True)

    def _hide(self, visible: list[str]) -> list[str]:
        """Bind the ImportError package over every place the Python path inside could find a
        hidden part (a regular install in site-packages, a checkout on the path): the package's
        `__path__` inside names only the bound `agents`, so this is a second wall for code
        that widens it. An editable install's finder points outside the sandbox."""
        args: list[str] = []
        for name, blocker in self._blocked.items():
            places = {
                os.path.join(os.path.realpath(p), "interp_harness", name) for p in sys.path if p
            }
            mod = sys.modules.get(f"interp_harness.{name}")
            if getattr(mod, "__file__", None):
                places.add(os.path.dirname(os.path.realpath(mod.__file__)))  # type: ignore[arg-type, union-attr]
            for place in sorted(places):
                if os.path.isdir(place) and _under(place, visible):
                    args += ["--ro-bind", blocker, place]
        return args

    def _command(
        self, plan: HostPlan, env: dict[str, str], net_mounts: list[str]
    ) -> tuple[list[str], int]:
        """The bwrap command of a host for `plan`, its options in a memfd (close it after)."""
        mounts = part_binds(("agents", "sdk"))
        env = {"PYTHONPATH": f"{CODE_ROOT}:{_CODE_ROOT}", "PYTHONNOUSERSITE": "1", **env}
        for host, inside in plan.binds:
            mounts += ["--ro-bind", host, inside]
        mounts += self._hide(python_roots() + ["/usr"] + [h for h, _ in plan.binds])
        return options_via_fd(
            self.sandbox.command(
                [sys.executable, "-s", "-m", "interp_harness.agents.host"],
                limits=self.limits,
                env=env,
                extra=mounts + net_mounts,
            )
        )

    def check(self, plan: HostPlan) -> Failure | None:
        """Pre-flight: start a host as an episode's (same binds, no network) and ask it to import
        the agent's class; the host's Failure when it cannot, else None."""
        cmd, args_fd = self._command(plan, {}, [])
        cg = self.sandbox.cgroup(self.limits)
        if cg:
            cg.open_join_fds()
        with tempfile.TemporaryFile(prefix="agent-host-log-") as log_file:
            try:
                proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log_file,
                    start_new_session=True,
                    preexec_fn=cg.preexec if cg else None,  # noqa: PLW1509 - only writes to an fd
                    pass_fds=(args_fd,),
                    env=launcher_env(),
                )
            except OSError as e:
                return Failure(
                    message=f"agent host failed to start: {e}", category="infrastructure"
                )
            finally:
                os.close(args_fd)
                if cg:
                    cg.close_fds()
            # the agent's module runs in there: what it writes is read with a bound
            out = Capped(proc.stdout, 1 << 20)
            feed(proc.stdin, encode(Check(agent=plan.agent)) + encode(Close()))
            try:
                proc.wait(self.limits.timeout_s)
            except subprocess.TimeoutExpired:
                pass
            finally:
                kill_tree(proc, cg)
                proc.wait()
                if cg:
                    cg.remove()
            line = out.join().split(b"\n", 1)[0]
            try:
                resp = RESPONSE.validate_json(line)
            except ValidationError:
                log_file.seek(max(0, log_file.seek(0, os.SEEK_END) - 3000))
                tail = log_file.read().decode("utf-8", "replace").strip()
                note = f" (status {proc.returncode}); its output:\n{tail}" if tail else ""
                return Failure(
                    message=f"agent host did not answer{note}", category="infrastructure"
                )
        if isinstance(resp, Failure):
            return resp
        return None

    async def start(self, plan: HostPlan, meter: UsageMeter | None = None) -> _Process:
        """A running host for `plan`; a provider route counts the provider's usage into `meter`."""
        meter = meter or UsageMeter()
        before = meter.reading()
        forward_py = os.path.realpath(forward.__file__)
        env: dict[str, str] = {}
        net_mounts: list[str] = []
        dirs: list[str] = []
        relay, network = None, None
        if plan.profile is not None:
            env.update(plan.profile.agent_env())
            sock_dir = tempfile.mkdtemp(prefix="agent-host-net-")
            os.chmod(sock_dir, 0o777)  # uid 65534 inside connects here
            dirs.append(sock_dir)
            from interp_harness.harness.agent_host.net import open_route

            network, relay = open_route(plan.profile, sock_dir, _NET_DIR, meter)
            net_mounts = ["--bind", sock_dir, _NET_DIR, "--ro-bind", forward_py, FORWARD_PY]
        cmd, args_fd = self._command(plan, env, net_mounts)
        cg = self.sandbox.cgroup(self.limits)
        log_file = tempfile.TemporaryFile(prefix="agent-host-log-")
        if cg:
            cg.open_join_fds()
        try:
            proc = await spawn(
                *cmd,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log_file,
                start_new_session=True,
                preexec_fn=cg.preexec if cg else None,  # noqa: PLW1509 - only writes to an fd
                limit=reply_line_limit(self.max_message_chars),
                pass_fds=(args_fd,),
                env=launcher_env(),  # bwrap's init lives on in the sandbox: none of our secrets
            )
        except OSError as e:
            if relay:
                relay.stop()
            raise AgentError(f"agent host failed to start: {e}", category="infrastructure") from e
        finally:
            os.close(args_fd)
            if cg:
                cg.close_fds()
        host = _Process(proc, cg, relay, dirs, log_file, self.max_message_chars)
        init = Init(
            agent=plan.agent,
            options=plan.options,
            network=network,
            max_message_chars=self.max_message_chars,
        )
        try:
            resp = await asyncio.wait_for(host.request(init), self.limits.timeout_s)
        except (HostDied, TimeoutError) as e:
            note = host.exit_note() if isinstance(e, TimeoutError) else str(e)
            await host.close(graceful=False)
            raise AgentError(
                f"agent host for {plan.agent} did not start: {note}", category="infrastructure"
            ) from None
        except BaseException:
            await host.close(graceful=False)
            raise
        if not isinstance(resp, Ready):
            await host.close(graceful=False)
            tb = None
            if isinstance(resp, Failure):
                await meter.settled()
                category, message = checked_category(resp, meter.since(before))
                tb = for_user(resp.traceback, plan)
                if resp.import_error:
                    message += f". Note: {importable_note(plan)}"
            else:
                category, message = "infrastructure", repr(resp)
            raise HostedAgentError(
                CREATE_PREFIX + (for_user(message, plan) or ""),
                category=category,
                agent_traceback=tb,
            )
        return host


def for_user(text: str | None, plan: HostPlan) -> str | None:
    """An agent host's failure text as the user reads it: the agent's own code named by its path
    here (not its mount point in the host), and without the profile's key. The host never holds
    the key, but the forwarder relays the provider's replies, and a provider may quote the key it
    was sent in an error body."""
    if text is None:
        return text
    for host, inside in plan.binds:
        if inside.startswith(_CODE_ROOT + "/"):
            text = text.replace(f'File "{inside}', f'File "{host}')
    try:
        key = plan.profile.api_key() if plan.profile is not None else None
    except ProfileError:
        key = None
    return KeyScrubber(key_forms(key)).text(text)


def checked_category(failure: Failure, seen: Seen) -> tuple[str, str]:
    """The category and message of a failure the host reported. The category is the agent's
    claim, and agent code can raise any: "infrastructure" and "budget" (a provider failure, not
    the agent's fault) stand only when the harness's forwarder saw the provider fail during the
    step; anything else is the agent's own failure."""
    claimed = failure.category
    if claimed == "agent" or (claimed in ("infrastructure", "budget") and seen.failures):
        return claimed, failure.message
    return "agent", f"{failure.message} (reported as {claimed!r:.40}; no provider failure seen)"


class AgentHostClient(Agent):
    """An agent that lives in a sandboxed host process; the episode loop uses it like any Agent."""

    max_restarts = 2  # fresh hosts for one step after the first one died

    def __init__(self, hosts: AgentHosts, plan: HostPlan) -> None:
        super().__init__(**plan.options)
        self.hosts, self.plan = hosts, plan
        self.name, self.provider = plan.name, plan.provider  # type: ignore[misc]
        self.supports_tools = plan.supports_tools  # type: ignore[misc]
        self._host: _Process | None = None
        self._sent: list[Message] = []  # what the current host holds
        self.meter = UsageMeter()  # what the provider reported through this agent's routes

    @property
    def pid(self) -> int | None:
        return self._host.proc.pid if self._host else None

    def _delta(self, conversation: list[Message]) -> tuple[int, list[Message]]:
        sent, k = self._sent, 0
        n = min(len(sent), len(conversation))
        while k < n and (sent[k] is conversation[k] or sent[k] == conversation[k]):
            k += 1
        return k, conversation[k:]

    async def _discard(self) -> None:
        host, self._host, self._sent = self._host, None, []
        if host is not None:
            await host.close(graceful=False)

    async def start(self) -> None:
        """Start the host now (otherwise the first step does)."""
        if self._host is None:
            self._host = await self.hosts.start(self.plan, self.meter)

    async def step(
        self, conversation: list[Message], tools: list[ToolSpec] | None = None
    ) -> AgentReply:
        """The hosted agent's next message; `tools` (protocol mode `tools`) go with the step, and
        the hosted agent's `step` gets `tools=` only then."""
        if tools is not None and not self.supports_tools:
            raise AgentError(no_tools(self.plan.name), category="agent")
        died = ""
        before = self.meter.reading()
        for attempt in range(self.max_restarts + 1):
            await self.start()
            assert self._host is not None
            keep, new = self._delta(conversation)
            request = StepRequest(keep=keep, messages=new, tools=tools)
            try:
                resp = await self._host.request(request)
            except HostDied as e:
                died = str(e)
                log.warning("agent host of %s died mid-step (try %d): %s", self.name, attempt, e)
                await self._discard()
                continue
            except BaseException:  # cancelled (wall-time budget), or the host misbehaved: its
                await self._discard()  # state is unknown
                raise
            self._sent = list(conversation)
            await self.meter.settled()  # the last reply's usage may still be being counted
            if isinstance(resp, Reply):
                usage = self._usage(resp.usage, before)
                calls = resp.tool_calls if tools is not None else []
                return AgentReply(
                    content=resp.content, tool_calls=calls, usage=usage, model=resp.model
                )
            if isinstance(resp, Failure):
                category, message = checked_category(resp, self.meter.since(before))
                raise HostedAgentError(
                    for_user(message, self.plan) or "",
                    category=category,
                    retryable=resp.retryable,
                    agent_traceback=for_user(resp.traceback, self.plan),
                )
            await self._discard()
            raise AgentError(f"agent host answered {resp!r:.200}", category="infrastructure")
        # only agent code runs in the host: a host that keeps dying is the agent's failure
        raise AgentError(
            f"agent host died {self.max_restarts + 1} times on one step: {died}", category="agent"
        )

    def _usage(self, claimed: Usage, before: Seen) -> Usage:
        """The step's tokens as the provider reported them to the forwarder (every call of the
        step, retries included) when it reported any; else the agent's validated claim. The
        cost stays the agent's (the harness knows no prices)."""
        seen = self.meter.since(before)
        if not seen.replies:
            return claimed
        usage = Usage(
            prompt_tokens=min(seen.prompt_tokens, MAX_MESSAGE_TOKENS),
            completion_tokens=min(seen.completion_tokens, MAX_MESSAGE_TOKENS),
            cost_usd=claimed.cost_usd,
        )
        if (usage.prompt_tokens, usage.completion_tokens) != (
            claimed.prompt_tokens,
            claimed.completion_tokens,
        ):
            log.info(
                "agent %s claimed %d+%d tokens; the provider reported %d+%d (counted)",
                self.name, claimed.prompt_tokens, claimed.completion_tokens,
                usage.prompt_tokens, usage.completion_tokens,
            )  # fmt: skip
        return usage

    async def aclose(self) -> None:
        host, self._host = self._host, None
        if host is not None:
            await host.close(graceful=True)
