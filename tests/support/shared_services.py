"""The model servers a test session shares, one of each (model, options) per session: a pytest
plugin loaded by the root conftest (`pytest_plugins`), so every test folder sees the same fixture
and it starts once. Test files request these fixtures by name and never import them.

With pytest-xdist workers (scripts/test.sh) a server is still started once for the whole run: the
first worker that needs it starts it under a file lock and records its URL in a folder the
controller made for the run; the others read the record; the controller stops them all when the
run ends. Expensive session builds that are not servers (the SAE build, the RAVEL instance) keep
their tests on one worker instead (`xdist_group`, below).

A test that must own a server (it kills it, fills its queue, restarts it, or starts it with other
options or another cache) starts its own with `serve_backbone` / `serve_intervention` and says why.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support import stop_process
from support.backbone_server import start_backbone
from support.intervention_server import start_server as start_intervention

# the controller's folder for the run's shared servers, inherited by its workers
SHARED_DIR_VAR = "HARNESS_TEST_SHARED_SERVERS"
# session fixtures that build something expensive in the worker that asks: their users share a
# worker, so the build happens once per run (the first match names the group)
_GROUP_BY_FIXTURE = {"sae_cache": "sae-build", "ravel_city": "ravel-city", "cluster": "ray-cluster"}
# folders whose tests share one package-scoped server and read its sinks last: one worker each
_GROUP_BY_FOLDER = {"tests/system/adversarial/": "adversarial"}
# folders that are `slow` as a whole: the adversarial suite is one attack campaign against one
# server, read at the end (the quick loop leaves it out; the whole suite runs it)
_SLOW_FOLDERS = ("tests/system/adversarial/",)
# fixtures that start (or are) a model server: the shared ones, and those files start their own
_MODEL_SERVER_FIXTURES = {
    "backbone_url", "local_model", "smol_url", "gpt2_url", "llama_url", "served",
    "sae_llama_url", "small_backbone", "built",
}  # fmt: skip
_started: list[subprocess.Popen] = []  # this worker's starts, kept until the controller stops them


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not _is_worker(config) and getattr(config.option, "numprocesses", None):
        os.environ[SHARED_DIR_VAR] = tempfile.mkdtemp(prefix="harness-test-servers-")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects and xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks `model_server` on the tests that use a model server, and `slow` on the slow folders
    (the quick loop leaves both out).
    Under `--dist loadgroup`: a test that uses an expensive session build goes to that build's
    group; every other test is grouped by its file (so module fixtures start once)."""
    for item in items:
        if _MODEL_SERVER_FIXTURES.intersection(item.fixturenames):  # type: ignore[attr-defined]
            item.add_marker(pytest.mark.model_server)
        if item.path.relative_to(config.rootpath).as_posix().startswith(_SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
    # a worker's own `dist` is "no": xdist tells it the controller's `--dist loadgroup` this way
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        names = item.fixturenames  # type: ignore[attr-defined]
        path = item.path.relative_to(config.rootpath).as_posix()
        group = next((g for d, g in _GROUP_BY_FOLDER.items() if path.startswith(d)), None)
        group = group or next((g for f, g in _GROUP_BY_FIXTURE.items() if f in names), None)
        item.add_marker(pytest.mark.xdist_group(group or path))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller stops the servers its workers started (each left a record)."""
    shared = os.environ.get(SHARED_DIR_VAR)
    if _is_worker(session.config) or not shared:
        return
    for record in Path(shared).glob("*.json"):
        try:
            os.kill(json.loads(record.read_text())["pid"], signal.SIGTERM)
        except (ProcessLookupError, ValueError, KeyError):
            pass
    shutil.rmtree(shared, ignore_errors=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _shared_server(
    name: str,
    start: Callable[[Path], tuple[subprocess.Popen, str]],
    factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """The URL of the run's server `name`: started here, or (under xdist) by whichever worker
    asked first."""
    shared = os.environ.get(SHARED_DIR_VAR)
    if not shared:
        log = factory.mktemp(name) / "server.log"
        proc, url = start(log)
        _logs[url] = log
        try:
            yield url
        finally:
            stop_process(proc)
        return
    record = Path(shared) / f"{name}.json"
    with _locked(Path(shared) / f"{name}.lock"):
        if not record.exists():
            proc, url = start(Path(shared) / f"{name}.log")
            _started.append(proc)
            record.write_text(json.dumps({"url": url, "pid": proc.pid}))
    url = json.loads(record.read_text())["url"]
    _logs[url] = Path(shared) / f"{name}.log"
    yield url


_logs: dict[str, Path] = {}  # a shared server's URL -> its output, in this process


@pytest.fixture(scope="session")
def model_server_log() -> Callable[[str], Path]:
    """The output file of the shared model server at a URL (a test that checks what a server
    logs reads it from the size it had before the test)."""
    return lambda url: _logs[url]


@pytest.fixture(scope="session")
def backbone_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The backbone LM server (SmolLM2-135M-Instruct, default options)."""
    yield from _shared_server("backbone", start_backbone, tmp_path_factory)


@pytest.fixture(scope="session")
def local_model(backbone_url: str):  # type: ignore[no-untyped-def]
    """The backbone's weights loaded in the test process (from the cache the server just filled)."""
    from interp_harness.model_services.backbone import model as model_mod

    return model_mod.load()


@pytest.fixture(scope="session")
def smol_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The intervention service on SmolLM2-135M (default options)."""
    yield from _shared_server(
        "smollm2-intervention", lambda log: start_intervention("smollm2", log), tmp_path_factory
    )
