"""Ids on the command line: tables show them whole at 80 columns, and every command that takes a
run id takes any unique prefix of it (an ambiguous one is refused with its candidates)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from support.cli_store import add_run, harness, main_job_store

from interp_harness.harness.store.repo import open_store


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'harness.db'}"


def test_runs_list_shows_whole_ids_at_80_columns(tmp_path: Path) -> None:
    url = _url(tmp_path)
    ids = main_job_store(url)
    r = harness(url, "runs", "list", COLUMNS="80")
    assert r.returncode == 0, r.stderr
    for rid in ids:
        assert rid in r.stdout, r.stdout
    assert "…" not in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80


def test_unique_prefix_is_taken_and_ambiguous_one_lists_candidates(tmp_path: Path) -> None:
    url = _url(tmp_path)
    store = open_store(url)
    # 17 runs: two of them share their first hex digit (16 digits), whatever ids are drawn
    ids = [
        add_run(store, "scripted-numeric", "numeric", [{"code_success": 1.0}]) for _ in range(17)
    ]
    by_first: dict[str, list[str]] = defaultdict(list)
    for rid in ids:
        by_first[rid[0]].append(rid)
    shared = next(v for v in by_first.values() if len(v) > 1)
    rid = ids[0]
    prefix = next(rid[:n] for n in range(1, 17) if sum(i.startswith(rid[:n]) for i in ids) == 1)

    shown = harness(url, "runs", "show", prefix, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == rid
    # a prefix pasted from a table that cut it, ellipsis and all
    cut = harness(url, "report", prefix + "…", "--json")
    assert cut.returncode == 0, cut.stderr
    assert json.loads(cut.stdout)["run_id"] == rid
    exported = harness(url, "export", prefix)
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout.splitlines()[0])["run_id"] == rid

    amb = harness(url, "runs", "show", shared[0][0])
    assert amb.returncode == 2
    assert "several run ids" in amb.stderr
    for candidate in shared:
        assert candidate in amb.stderr

    none = harness(url, "runs", "show", "zz")
    assert none.returncode == 2 and "no run with id 'zz'" in none.stderr

    # cancel by prefix: a completed run says it has ended, by its whole id
    cancel = harness(url, "runs", "cancel", prefix)
    assert cancel.returncode == 1 and f"run {rid} has already ended" in cancel.stderr


def test_runs_show_has_a_score_per_episode(tmp_path: Path) -> None:
    url = _url(tmp_path)
    numeric = main_job_store(url)[0]
    r = harness(url, "runs", "show", numeric, COLUMNS="200")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.split()[:2] == ["episode", "target"])
    at = header.index("score")
    rows = [line for line in lines if "find-gen/numeric/" in line]
    assert len(rows) == 5
    # the headline metric per episode, in target order (one family's: named once, under the
    # table); the error episode has none (not a 0)
    assert "score: code_success, the headline metric" in r.stdout
    assert [row[at:].split()[0] for row in rows] == ["1", "0", "1", "1", "-"]
    assert "infrastructure" in rows[4]
    assert all(e.id in r.stdout for e in open_store(url).episodes.of_run(numeric))  # whole ids
