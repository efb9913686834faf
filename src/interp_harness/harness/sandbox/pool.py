"""A warm pool of target-service instances, so that an episode never waits for a start.

`ServicePool.serve(targets)` starts `replicas` instances serving those targets (in parallel) before
the episodes begin: a run's scheduler knows its targets up front. A call for a target the pool does
not serve yet starts one instance on demand (a cold start, logged). Instances that stop answering
are restarted by `restart`.

Bounded: at most `max_services` instances (each holds a Python process and its targets); making
room stops the least recently used groups that no call is using. Groups unused for `idle_s` are
stopped by a sweeper thread. A call holds a lease (`lease` / `release`), so an instance is never
stopped under it; a later call for an evicted target cold-starts it again.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from interp_harness.function_store.benchmark import benchmark
from interp_harness.function_store.models import Target
from interp_harness.function_store.runtime import prepare_target
from interp_harness.harness.sandbox.base import Limits, Sandbox, ServiceHandle

log = logging.getLogger(__name__)

SERVICE_MODULE = "interp_harness.function_store.service"


def target_file_name(target_id: str) -> str:
    """A flat, safe file name for a target id (ids contain '/')."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in target_id.replace("/", "__"))
    return safe + ".json"


def target_files(targets: Sequence[Target], inside: str = "/sandbox") -> dict[str, bytes]:
    """The served targets' full JSON (hidden part included): only the sandbox reads these.

    Imported-script targets point at a host file: the script (and FIND's MLP weights beside it)
    travel along under scripts/<target>/, and the spec is rewritten to that path inside."""
    files: dict[str, bytes] = {}
    for t in targets:
        t = prepare_target(t)  # weights inline: the sandbox never trains or reads host files
        if t.hidden.runner == "script" and "path" in t.hidden.spec:
            host = Path(t.hidden.spec["path"])
            sub = f"scripts/{target_file_name(t.id)[:-5]}"
            files[f"{sub}/{host.name}"] = host.read_bytes()
            weights = host.parent / "mlp_approx_model.pt"
            if weights.is_file():
                files[f"{sub}/{weights.name}"] = weights.read_bytes()
            spec = {**t.hidden.spec, "path": f"{inside}/{sub}/{host.name}"}
            t = t.model_copy(update={"hidden": t.hidden.model_copy(update={"spec": spec})})
        files[target_file_name(t.id)] = t.model_dump_json().encode()
    return files


def service_argv(sandbox: Sandbox) -> list[str]:
    python = "python3" if sandbox.name == "docker" else sys.executable
    return [python, "-m", SERVICE_MODULE]


PASSED_ENV = (
    "HARNESS_DATA_DIR",
    "HARNESS_SERVICE_CALL_TIMEOUT_S",
    "HARNESS_SERVICE_CALL_CEILING_S",
    "HARNESS_BACKBONE_TIMEOUT",
    "HARNESS_BACKBONE_RELATION_MAX_TOKENS",
    "HARNESS_BACKBONE_MAX_INPUT_CHARS",
)


class _Group:
    def __init__(self, targets: list[Target], handles: list[ServiceHandle]) -> None:
        self.targets = targets
        self.ids = {t.id for t in targets}
        self.handles = handles
        self._rr = itertools.cycle(range(len(handles)))
        self.last_used = time.monotonic()
        self.leases = 0

    def next_url(self) -> str:
        return self.handles[next(self._rr)].url


class ServicePool:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        replicas: int = 1,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        backbone_url: str | None = None,
        max_services: int | None = None,
        intervention_url: str | None = None,
        idle_s: float | None = None,
    ) -> None:
        """`max_services`: cap on running instances (None: no cap); `idle_s`: stop groups unused
        for that long (None: never)."""
        self.sandbox = sandbox
        self.max_services = max_services
        self.idle_s = idle_s
        self.replicas = max(1, replicas)
        self.limits = limits
        self.env = {"HARNESS_SERVICE_TARGETS_DIR": "/sandbox", **(env or {})}
        # The operator's environment reaches the services for these only: the data directory
        # (MLP weights etc.), the per-call time limit and its ceiling, the backbone's per-request
        # timeout (a loaded CPU needs more than the 60 s default for 16 words through SmolLM2)
        # and the relation modules' reply length.
        for name in PASSED_ENV:
            if name in os.environ and name not in self.env:
                self.env[name] = os.environ[name]
        self.backbone_url = backbone_url
        self.intervention_url = intervention_url
        # where `files` appear inside; the in-process backend has no /sandbox
        self.files_root = "/sandbox"
        self._groups: list[_Group] = []
        self._retired: dict[str, _Group] = {}  # restarted instances' old urls -> their group
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._sweeper: threading.Thread | None = None

    def _forward_url(self, targets: Sequence[Target]) -> str | None:
        """The one model service an instance may reach: the one its targets' records declare.
        Targets needing different services need separate instances (one forwarded endpoint)."""
        needed = {s for t in targets for s in benchmark(t.family).services}
        if len(needed) > 1:
            raise ValueError(
                f"targets that need different model services ({', '.join(sorted(needed))}) "
                "need separate target services"
            )
        urls = {"backbone": self.backbone_url, "intervention": self.intervention_url}
        return urls[needed.pop()] if needed else None

    def _start_one(self, targets: Sequence[Target]) -> ServiceHandle:
        return self.sandbox.start_service(
            service_argv(self.sandbox),
            files=target_files(targets, inside=self.files_root),
            limits=self.limits,
            env=self.env,
            forward_url=self._forward_url(targets),
        )

    def serve(self, targets: Sequence[Target], replicas: int | None = None) -> None:
        """Start instances serving `targets` (all of them in each instance), in parallel."""
        targets = [t for t in targets if not self.serves(t.id)]
        if not targets:
            return
        n = replicas or self.replicas
        self._make_room(n)
        with ThreadPoolExecutor(max_workers=n) as ex:
            handles = list(ex.map(lambda _: self._start_one(targets), range(n)))
        with self._lock:
            self._groups.append(_Group(list(targets), handles))
        self._start_sweeper()

    def serves(self, target_id: str) -> bool:
        with self._lock:
            return any(target_id in g.ids for g in self._groups)

    def url_for(self, target_id: str) -> str | None:
        with self._lock:
            for g in self._groups:
                if target_id in g.ids:
                    g.last_used = time.monotonic()
                    return g.next_url()
        return None

    def lease(self, target_id: str) -> str | None:
        """Like `url_for`, and the instance is not evicted until `release(url)`."""
        with self._lock:
            for g in self._groups:
                if target_id in g.ids:
                    g.last_used = time.monotonic()
                    g.leases += 1
                    return g.next_url()
        return None

    def release(self, url: str) -> None:
        with self._lock:
            g = next((g for g in self._groups if any(h.url == url for h in g.handles)), None)
            g = g or self._retired.get(url)  # leased before a restart replaced that instance
            if g is not None:
                g.leases = max(0, g.leases - 1)
                g.last_used = time.monotonic()

    def live_urls(self) -> set[str]:
        with self._lock:
            return {h.url for g in self._groups for h in g.handles}

    # ---- bounds -----------------------------------------------------------------------------
    def _evict(self, groups: list[_Group], why: str) -> None:
        for g in groups:
            log.info(
                "stopping %d target service(s) for %d targets (%s)", len(g.handles), len(g.ids), why
            )
            for h in g.handles:
                try:
                    self.sandbox.stop(h)
                except Exception:
                    log.exception("stopping %s", h.url)

    def _make_room(self, n: int) -> None:
        """Stop least recently used idle groups until `n` more instances fit under the cap."""
        if self.max_services is None:
            return
        with self._lock:
            running = sum(len(g.handles) for g in self._groups)
            victims: list[_Group] = []
            for g in sorted(self._groups, key=lambda g: g.last_used):
                if running + n <= self.max_services:
                    break
                if g.leases == 0:
                    victims.append(g)
                    running -= len(g.handles)
            self._groups = [g for g in self._groups if g not in victims]
        if running + n > self.max_services:
            log.warning(
                "target-service pool over its cap (%d running + %d > %d): every instance is busy",
                running,
                n,
                self.max_services,
            )
        self._evict(victims, "pool cap")

    def evict_idle(self, now: float | None = None) -> int:
        """Stop groups unused for `idle_s`; returns how many instances were stopped."""
        if self.idle_s is None:
            return 0
        now = time.monotonic() if now is None else now
        with self._lock:
            victims = [
                g for g in self._groups if g.leases == 0 and now - g.last_used >= self.idle_s
            ]
            self._groups = [g for g in self._groups if g not in victims]
        self._evict(victims, f"idle for {self.idle_s:g} s")
        return sum(len(g.handles) for g in victims)

    def _start_sweeper(self) -> None:
        if self.idle_s is None or self._sweeper is not None:
            return
        period = max(0.05, min(self.idle_s / 2, 30.0))

        def sweep() -> None:
            while not self._closed.wait(period):
                try:
                    self.evict_idle()
                except Exception:  # keep sweeping
                    log.exception("evicting idle target services")

        self._sweeper = threading.Thread(target=sweep, name="pool-sweeper", daemon=True)
        self._sweeper.start()

    def restart(self, url: str) -> str:
        """Replace the instance at `url` by a fresh one serving the same targets."""
        with self._lock:
            for g in self._groups:
                for i, h in enumerate(g.handles):
                    if h.url == url:
                        self.sandbox.stop(h)
                        g.handles[i] = self._start_one(g.targets)
                        self._retired[url] = g  # a call leased on the old url releases here
                        return g.handles[i].url
        raise KeyError(url)

    def handles(self) -> list[ServiceHandle]:
        return [h for g in self._groups for h in g.handles]

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            for h in self.handles():
                try:
                    self.sandbox.stop(h)
                except Exception:  # closing must go on for the others
                    log.exception("stopping %s", h.url)
            self._groups.clear()
            self._retired.clear()
