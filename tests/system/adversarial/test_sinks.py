"""The sinks read back after everything else of the suite ran (this file sorts last, and its
store and log checks come last in it): `harness export` (JSON lines and the Inspect log) of every
battery run, the server's whole log, and every column of every table of the store. None carries
a canary."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.battery import Battery, cli_env, dump_store
from support.canary import Canaries, assert_clean


@pytest.mark.parametrize("fmt", ["jsonl", "inspect"])
def test_exports(fmt: str, battery: Battery, canaries: Canaries, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from interp_harness.harness.cli import app

    runner = CliRunner()
    for entry, run_id in battery.runs.items():
        args = ["export", run_id, "--format", fmt]
        out = tmp_path / f"{run_id}.json"
        if fmt == "inspect":
            args += ["--output", str(out)]
        got = runner.invoke(app, args, env=cli_env(battery.server))
        assert got.exit_code == 0, (entry, got.output[-2000:])
        assert_clean(canaries, f"harness export --format {fmt} of {entry} (output)", got.output)
        if fmt == "inspect":
            assert_clean(canaries, f"Inspect log of {entry}", out.read_bytes())


def test_server_log(battery: Battery, canaries: Canaries) -> None:
    """Everything the server printed (stdout and stderr), from its start to now."""
    bad = [ln for ln in battery.server.log().splitlines() if canaries.found_in(ln)]
    assert_clean(canaries, f"server log ({len(bad)} lines)", "\n".join(bad))


def test_store_rows(battery: Battery, canaries: Canaries) -> None:
    """Every column of every table of the store, after the battery and the API callers."""
    leaks = {c: t for c, t in dump_store(battery.server.db_url) if canaries.found_in(t)}
    for column, text in leaks.items():  # the first one fails, naming all
        assert_clean(canaries, f"store rows of {column} (leaking columns: {list(leaks)})", text)
