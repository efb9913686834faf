"""`harness report` and the main job's combined report (scripts/combined_report.py, which
scripts/main_job.sh prints) fit a 100-column terminal: one line per row, nothing cut."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli_store import ROOT, harness, harness_env, main_job_store


def _check_fits(text: str, rows: list[dict]) -> None:
    lines = text.splitlines()
    too_wide = [line for line in lines if len(line) > 100]
    assert not too_wide, "\n".join(too_wide)
    assert "…" not in text, text
    for r in rows:  # each row whole on one line: its label beside its counts
        counts = f"{r['scored']}/{r['episodes']}"
        assert any(r["category"] in line and counts in line for line in lines), (r, text)


def test_combined_report_of_the_main_job_fits_100_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    ids = main_job_store(url, repeat=3)  # 12 and 13 episodes: "12/13" as wide as the main job's
    r = subprocess.run(
        [sys.executable, "scripts/combined_report.py", *ids],
        env=harness_env(url, COLUMNS="100"),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    rows = []
    for rid in ids:
        rep = harness(url, "report", rid, "--json")
        assert rep.returncode == 0, rep.stderr
        rows += json.loads(rep.stdout)["report"]["rows"]
    assert {x["agent"] for x in rows} >= {"scripted-strings", "interpolation"}
    _check_fits(r.stdout, rows)
    # what moved out of the cells is said under the table
    assert "chance 0.33" in r.stdout and "Wilson" in r.stdout
    assert "not corrupted 12" in r.stdout  # the IoU row's outcome counts


def test_harness_report_fits_100_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    strings = main_job_store(url, repeat=3)[1]
    r = harness(url, "report", strings, COLUMNS="100")
    assert r.returncode == 0, r.stderr
    rows = json.loads(harness(url, "report", strings, "--json").stdout)["report"]["rows"]
    assert any(x["judge_status"] == "near_chance" for x in rows)
    _check_fits(r.stdout, rows)
