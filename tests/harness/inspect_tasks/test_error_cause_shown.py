"""The cause first, wherever an error is shown (issue 40 item 3).

`inspect eval interp_harness/find` (protocol tools, Inspect's own CLI) against the project's
backbone server, which refuses `tools` with a 400: Inspect records the failure as its
ModelGenerateError's repr, a ~4 KB request dump with the provider's error at its end. Imported
with `harness import-inspect`, the stored error keeps that cause, and the run page, the episode
page, `harness runs show`, the REST API and both exports lead with it, with the full text behind
a <details>, a field or `--full-errors`."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import require
from support.run_support import serve_app
from typer.testing import CliRunner

from interp_harness.harness.cli import app
from interp_harness.harness.store import make_engine
from interp_harness.harness.store.repo import Store

ROOT = Path(__file__).resolve().parents[3]
# the backbone server's refusal (model_services/backbone/server.py), as the openai SDK names it
CAUSE = "BadRequestError: Error code: 400 - `tools` is not served by this server"
DUMP = "Request:"  # Inspect's request dump, before the cause: only in the full text

pytestmark = pytest.mark.slow  # one real `inspect eval` (a subprocess with its target services)


@pytest.fixture(scope="module")
def failed_log(backbone_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    require(
        shutil.which("bwrap") is not None, "bubblewrap is not installed", "HARNESS_TEST_SKIP_BWRAP"
    )
    served = httpx.get(f"{backbone_url}/v1/models").json()["data"][0]["id"]
    log_dir = tmp_path_factory.mktemp("logs")
    sandbox_tmp = Path(tempfile.mkdtemp(prefix="ih-", dir="/tmp"))  # sandbox sockets: short path
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TMPDIR": str(sandbox_tmp),
        "BACKBONE_BASE_URL": f"{backbone_url}/v1",
        "BACKBONE_API_KEY": "unused",
    }
    args = ["-T", "family=numeric", "-T", "limit=1", "--max-tokens", "24", "--no-score"]
    try:
        subprocess.run(
            ["inspect", "eval", "interp_harness/find", *args]
            + ["--model", f"openai-api/backbone/{served}", "--log-dir", str(log_dir)]
            + ["--display", "plain"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )  # the eval fails (its one sample did): the log is what is tested
    finally:
        shutil.rmtree(sandbox_tmp, ignore_errors=True)
    (log,) = log_dir.glob("*.eval")
    return log


@pytest.fixture(scope="module")
def imported(failed_log: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    raw = read_eval_log(str(failed_log))
    (sample,) = raw.samples or []
    # the shape of the issue: the cause after a request dump of more than the store keeps
    assert len(sample.error.message) > 4000, sample.error.message[:500]
    assert sample.error.message.index(DUMP) < sample.error.message.index("is not served")
    db = tmp_path_factory.mktemp("store") / "harness.db"
    env = {"DATABASE_URL": f"sqlite:///{db}", "HARNESS_SANDBOX": "inprocess"}
    r = CliRunner().invoke(app, ["import-inspect", str(failed_log), "--json"], env=env)
    assert r.exit_code == 0, r.output
    run_id = json.loads(r.stdout[r.stdout.index("{") :])["id"]
    store = Store(make_engine(env["DATABASE_URL"]))
    (ep,) = store.episodes.of_run(run_id)
    return {"env": env, "store": store, "run": store.runs.get(run_id), "episode": ep}


@pytest.fixture
def served(imported: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for k, v in imported["env"].items():
        monkeypatch.setenv(k, v)
    with serve_app() as url:
        yield url


def _cli(imported: dict[str, Any], *args: str, columns: int = 80) -> str:
    """The command's stdout, its lines joined (tables wrap long text at the terminal's width)."""
    r = CliRunner().invoke(app, list(args), env={**imported["env"], "COLUMNS": str(columns)})
    assert r.exit_code == 0, r.output
    return " ".join(r.stdout.split())


def _shown(page: str, field: str) -> tuple[str, str]:
    """(the cause the element leads with, the full text behind its <details>)."""
    m = re.search(
        rf'data-field="{field}"[^>]*>\s*<span class="cause" data-cause>(.*?)</span>\s*'
        r'<details class="full-error"><summary>[^<]*</summary><pre class="msg">(.*?)</pre>',
        page,
        re.DOTALL,
    )
    assert m is not None, page[:4000]
    return html.unescape(m.group(1)), html.unescape(m.group(2))


def test_the_stored_error_keeps_its_cause(imported: dict[str, Any]) -> None:
    ep, run = imported["episode"], imported["run"]
    assert (ep.status, ep.error_category) == ("error", "agent")
    for text in (ep.error, run.error):
        assert len(text) <= 4000
        assert DUMP in text and "is not served by this server" in text
        assert text.rstrip().endswith("use a server that serves it.')"), text[-300:]


def test_run_page_leads_with_the_cause(imported: dict[str, Any], served: str) -> None:
    page = httpx.get(f"{served}/ui/runs/{imported['run'].id}", timeout=30).text
    said, full = _shown(page, "error")
    assert said.startswith(CAUSE) and DUMP not in said
    assert DUMP in full and "is not served" in full
    # the errors table: one row, its message cell led by the cause
    row = page[page.index('aria-labelledby="errors"') :]
    assert re.search(r'<td><span class="cause" data-cause>' + re.escape(html.escape(CAUSE)), row)


def test_episode_page_leads_with_the_cause(imported: dict[str, Any], served: str) -> None:
    page = httpx.get(f"{served}/ui/episodes/{imported['episode'].id}", timeout=30).text
    said, full = _shown(page, "error")
    assert said.startswith(CAUSE) and DUMP not in said
    assert DUMP in full


def test_rest_serves_the_cause_beside_the_full_text(imported: dict[str, Any], served: str) -> None:
    run_id, ep_id = imported["run"].id, imported["episode"].id
    run = httpx.get(f"{served}/runs/{run_id}", timeout=30).json()
    assert run["error_cause"].startswith(CAUSE) and DUMP in run["error"]
    (group,) = run["errors"]
    assert group["cause"].startswith(CAUSE) and DUMP in group["message"]
    (listed,) = [r for r in httpx.get(f"{served}/runs", timeout=30).json() if r["id"] == run_id]
    assert listed["error_cause"].startswith(CAUSE)
    assert "is not served" in listed["error"]  # the list's 500 characters keep the cause too
    ep = httpx.get(f"{served}/episodes/{ep_id}", timeout=30).json()
    assert ep["error_cause"].startswith(CAUSE) and DUMP in ep["error"]
    (listed_ep,) = httpx.get(f"{served}/runs/{run_id}/episodes", timeout=30).json()
    assert listed_ep["error_cause"].startswith(CAUSE)


def test_runs_show_leads_with_the_cause(imported: dict[str, Any]) -> None:
    run_id, ep_id = imported["run"].id, imported["episode"].id
    out = _cli(imported, "runs", "show", run_id)
    assert out.count(CAUSE) >= 3, out  # the errors summary, the run's error, the episode's row
    assert DUMP not in out, out
    assert f"harness runs show {run_id} --full-errors" in out
    full = _cli(imported, "runs", "show", run_id, "--full-errors")
    assert DUMP in full and CAUSE in full
    one = _cli(imported, "runs", "show", ep_id)
    assert CAUSE in one and DUMP not in one.split("traceback", 1)[0], one
    assert DUMP in _cli(imported, "runs", "show", ep_id, "--full-errors")


def test_report_leads_with_the_cause(imported: dict[str, Any]) -> None:
    out = _cli(imported, "report", imported["run"].id, columns=400)  # its table's one row
    assert CAUSE in out and DUMP not in out, out


def test_exports_lead_with_the_cause(imported: dict[str, Any], tmp_path: Path) -> None:
    run_id = imported["run"].id
    r = CliRunner().invoke(app, ["export", run_id], env=imported["env"])
    (line,) = r.stdout.splitlines()
    row = json.loads(line)
    assert row["error_cause"].startswith(CAUSE) and DUMP in row["error"]
    out = tmp_path / "log.json"
    _cli(imported, "export", run_id, "--format", "inspect", "-o", str(out))
    log = json.loads(out.read_text())
    assert log["error"]["message"].startswith(CAUSE)
    (sample,) = log["samples"]
    first, _, rest = sample["error"]["message"].partition("\n\n")
    assert first.startswith(f"[agent] {CAUSE}") and DUMP in rest
    # read back, the export's lead is gone: the same stored error as the first import
    db = tmp_path / "again.db"
    again = {"DATABASE_URL": f"sqlite:///{db}", "HARNESS_SANDBOX": "inprocess"}
    r = CliRunner().invoke(app, ["import-inspect", str(out), "--json"], env=again)
    assert r.exit_code == 0, r.output
    back = json.loads(r.stdout[r.stdout.index("{") :])["id"]
    (ep,) = Store(make_engine(again["DATABASE_URL"])).episodes.of_run(back)
    assert ep.error == imported["episode"].error
