"""The event stream's last status event is never lost to the race between reading the events
and reading the run's status (seen in CI on PostgreSQL: the run completed in between, and the
stream ended without its `completed` event)."""

from __future__ import annotations

import threading
import time

import httpx
import uvicorn
from support import free_port

from interp_harness.harness.api.app import create_app
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.settings import Settings
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.events import EventRepository
from interp_harness.harness.store.repo import Store


def test_a_run_ending_between_the_two_reads_still_sends_its_status(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = Store(make_engine(url))
    run = store.runs.create(
        RunSpec(agent="scripted", dataset="find-v1", family="numeric", limit=1), ["f"]
    )
    store.runs.set_status(run.id, "running")

    real = EventRepository.of_run
    ended = threading.Event()

    def events(self: EventRepository, run_id: str, **kw):  # type: ignore[no-untyped-def]
        got = real(self, run_id, **kw)
        if not got and not ended.is_set():
            ended.set()  # the run completes right after this (empty) read
            store.runs.set_status(run_id, "completed")
        return got

    monkeypatch.setattr(EventRepository, "of_run", events)
    settings = Settings(database_url=url, sandbox="inprocess", home=tmp_path)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, run_scheduler=False), port=port, log_level="warning")
    )
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        text = httpx.get(f"http://127.0.0.1:{port}/runs/{run.id}/events", timeout=30).text
    finally:
        server.should_exit = True
        t.join(10)
    statuses = [
        line for line in text.splitlines() if line.startswith("data:") and '"run_status"' in line
    ]
    assert ended.is_set()
    assert len(statuses) == 3 and '"completed"' in statuses[-1], text  # queued, running, completed
    assert text.rstrip().endswith('data: {"status": "completed"}'), text
