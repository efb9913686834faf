"""`harness report` of one run, and of the main job's four runs in one report (the main job's
last step, scripts/main_job.sh), fit a 100-column terminal: one line per row, nothing cut."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli_store import harness, main_job_store
from typer.testing import CliRunner

from interp_harness.harness.cli import app


def _check_fits(text: str, rows: list[dict]) -> None:
    lines = text.splitlines()
    too_wide = [line for line in lines if len(line) > 100]
    assert not too_wide, "\n".join(too_wide)
    assert "…" not in text, text
    for r in rows:  # each row whole on one line: its label beside its counts
        counts = f"{r['scored']}/{r['episodes']}"
        assert any(r["category"] in line and counts in line for line in lines), (r, text)


def _report(url: str, *args: str) -> str:
    """`harness report ARGS` in this process, on a 100-column terminal."""
    r = CliRunner().invoke(app, ["report", *args], env={"DATABASE_URL": url, "COLUMNS": "100"})
    assert r.exit_code == 0, (r.stdout, r.stderr, r.exception)
    return r.stdout


def test_combined_report_of_the_main_job_fits_100_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    ids = main_job_store(url, repeat=3)  # 12 and 13 episodes: "12/13" as wide as the main job's
    out = _report(url, *ids)
    rows = []
    for rid in ids:
        rows += json.loads(_report(url, rid, "--json"))["report"]["rows"]
    assert {x["agent"] for x in rows} >= {"scripted-strings", "interpolation"}
    _check_fits(out, rows)
    # what moved out of the cells is said under the table
    assert "chance 0.33" in out and "Wilson" in out
    assert "not corrupted 12" in out  # the IoU row's outcome counts
    # the main job's log ends with the report's size: the four runs' rows, with their errors
    combined = json.loads(_report(url, *ids, "--json"))
    assert combined["run_ids"] == ids and len(combined["floor_run_ids"]) == 1
    errors = sum(sum(r["errors"].values()) for r in rows)
    assert out.splitlines()[-1] == f"report: {len(rows)} rows, {errors} errors"


def test_harness_report_fits_100_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    strings = main_job_store(url, repeat=3)[1]
    r = harness(url, "report", strings, COLUMNS="100")
    assert r.returncode == 0, r.stderr
    rows = json.loads(harness(url, "report", strings, "--json").stdout)["report"]["rows"]
    assert any(x["judge_status"] == "near_chance" for x in rows)
    _check_fits(r.stdout, rows)
