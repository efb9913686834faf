"""The CLI's tables at 80 and 100 columns (issue 40 §5): ids are never cut (each appears whole on
a line; other columns wrap or move under the table), a repeated unavailability note is said once,
`agents list` is one line per agent, and the report's n column stays whole beside a long agent
name. The real commands run in this process (CliRunner), with COLUMNS set as a terminal would."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli_store import MAIN_JOB, add_run, main_job_store
from typer.testing import CliRunner

from interp_harness.function_store.catalog import Catalog, CatalogOptions
from interp_harness.harness.cli import app
from interp_harness.harness.store.repo import open_store

LONG_AGENT = "my_lab_agents.interpreters:ChainOfThoughtInterpreterAgent"


def _harness(*args: str, columns: int, url: str | None = None) -> str:
    env = {"COLUMNS": str(columns)} | ({"DATABASE_URL": url} if url else {})
    r = CliRunner().invoke(app, list(args), env=env)
    assert r.exit_code == 0, (r.stdout, r.stderr, r.exception)
    return r.stdout


def _fits(text: str, columns: int) -> list[str]:
    lines = text.splitlines()
    wide = [x for x in lines if len(x) > columns]
    assert not wide, "\n".join(wide)
    return lines


def _whole_on_a_line(lines: list[str], *words: str) -> None:
    """All of `words` whole on one line (a cut or wrapped one is on none), as words of it
    (punctuation after a word aside)."""
    assert any(
        all(w.rstrip(":;,") in [x.rstrip(":;,") for x in line.split()] for w in words)
        for line in lines
    ), (words, lines[:40])


def test_targets_list_shows_every_id_whole_and_each_note_once() -> None:
    targets = Catalog(CatalogOptions()).list(dataset="find-v1", family="numeric")
    missing = [t for t in targets if not t.available]
    assert missing  # the data directory holds 5 of FIND's MLP weights: the others are missing
    out = _harness("targets", "list", "-d", "find-v1", "-f", "numeric", columns=80)
    lines = _fits(out, 80)
    for t in targets:
        _whole_on_a_line(lines, t.id, t.variant)
    # the missing weights' explanation is one note, said once, named by every row it explains
    assert out.count("MLP weights for") == 1, out[-3000:]
    assert sum("no: note 1" in line for line in lines) == len(missing)
    note = next(x for x in lines if x.startswith("note 1 "))
    assert f"({len(missing)} targets;" in note
    assert f"{len(targets)} targets" in lines[-1]


def test_runs_list_and_show_keep_ids_whole_at_80_columns(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    ids = main_job_store(url, repeat=3)
    store = open_store(url)
    long_run = add_run(store, LONG_AGENT, "strings", MAIN_JOB["strings"][1], error_episode=True)
    runs = {r.id: r for r in store.runs.latest(limit=100)}
    lines = _fits(_harness("runs", "list", columns=80, url=url), 80)
    for r in runs.values():
        if r.agent == LONG_AGENT:
            _whole_on_a_line(lines, r.id, "completed")
            continue
        # the run's id, its agent's name and its dataset/family: never wrapped mid-word
        _whole_on_a_line(lines, r.id, "completed", r.agent)
        _whole_on_a_line(lines, r.id, f"{r.dataset}/{r.family}")
    # a `module:Class` too long for its column breaks after the ':', not inside a word
    _whole_on_a_line(lines, long_run, "my_lab_agents.interpreters")
    _whole_on_a_line(lines, "ChainOfThoughtInterpreterAgent")

    strings = ids[1]
    out = _harness("runs", "show", strings, columns=80, url=url)
    lines = _fits(out, 80)
    episodes = store.episodes.of_run(strings, with_answer=False)
    assert len(episodes) == 13
    for e in episodes:
        _whole_on_a_line(lines, e.id, e.target_id, e.status)
    failed = next(e for e in episodes if e.status == "error")
    # the error text moved under the table, after the episode's id
    assert any(x.startswith(f"{failed.id}: error target service did not answer") for x in lines)


def test_agents_list_is_one_line_per_agent() -> None:
    agents = [json.loads(x) for x in _harness("agents", "list", "--json", columns=80).splitlines()]
    assert len(agents) >= 12
    for columns in (80, 100):
        lines = _fits(_harness("agents", "list", columns=columns), columns)
        for a in agents:
            named = [x for x in lines if x.split() and x.split()[0] == a["name"]]
            assert len(named) == 1, (a["name"], lines)
            assert a["kind"] in named[0].split()
        # a header, its rule, one line per agent; the descriptions whole, in the row or under
        # the table (wrapped, each named by its agent), never cut; then where the options are
        end = next(
            i for i, x in enumerate(lines) if x.startswith("options (") or x.split()[0][-1] == ":"
        )
        assert end == len(agents) + 2, lines
        assert "…" not in "".join(lines) and lines[-1].startswith("options (-o KEY=VALUE)")
    numeric = next(x for x in lines if x.startswith("scripted-numeric "))
    assert "numeric" in numeric.split()[4:]  # the family it plays
    assert any(x.startswith("openai ") and " any " in x for x in lines)
    with_options = _harness("agents", "list", "--options", columns=100)
    block = with_options.split("scripted-numeric options")[1]
    assert "max_inputs_per_call: int (default 130)" in block.split("options")[0]


def test_report_keeps_n_whole_beside_a_long_agent_name(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'harness.db'}"
    store = open_store(url)
    run = add_run(store, LONG_AGENT, "strings", MAIN_JOB["strings"][1] * 3, error_episode=True)
    out = _harness("report", run, columns=100, url=url)
    lines = _fits(out, 100)
    rows = json.loads(_harness("report", run, "--json", columns=100, url=url))["report"]["rows"]
    assert len(rows) == 4
    assert "…" not in out, out
    for r in rows:  # each category on one line beside its counts: n is 12/13, never "1…"
        _whole_on_a_line(lines, *r["category"].split(), f"{r['scored']}/{r['episodes']}")
    # the name is said whole, on one line or broken after its ':'
    assert LONG_AGENT in out or (
        "my_lab_agents.interpreters:" in out and "ChainOfThoughtInterpreterAgent" in out
    )
