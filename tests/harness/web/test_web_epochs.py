"""Repeated samples are reported one way on every page: 4 targets x 3 epochs with known scores,
stored through the store's own calls in the layout a run with `epochs=3` has, read through the
real server. Table 2, the score-versus-queries table and plot (the report's query rows), the API's
and the runs list's metric summaries and the compare page reduce each target's epochs first, so
n counts targets and the query row's interval is Table 2's; the run page's episodes carry their
epoch. The expected figures are worked out here from the scores below."""

from __future__ import annotations

import re
from statistics import mean

import pytest

from interp_harness.evaluator.report import bootstrap_interval, wilson
from interp_harness.harness.domain.spec import RunSpec
from interp_harness.harness.store.repo import open_store

TARGETS = [f"find-gen/numeric/s0/f0000{i}" for i in range(4)]
EPOCHS = 3
# code_success per target and epoch; None: the scorer failed (an error, left out, never a 0)
SCORES = [
    (1.0, 1.0, 1.0),
    (1.0, 0.0, None),
    (0.0, 0.0, 0.0),
    (1.0, 1.0, 0.0),
]
INPUTS = 10  # every episode in the first query bin (1-16): its row is the whole run's


def _store_run(db: str, reducer: str) -> str:
    """A finished run of TARGETS x EPOCHS episodes scored as SCORES; episode idx
    epoch * len(TARGETS) + i, as interp_harness.harness.runs.prepare.store_episodes lays them out."""
    store = open_store(db)
    spec = RunSpec(agent=f"epochs-{reducer}", dataset="find-gen", family="numeric",
                   epochs=EPOCHS, epoch_reducer=reducer, floor=False)  # fmt: skip
    run = store.runs.create(spec, TARGETS)
    n = len(TARGETS)
    store.episodes.ensure(
        run.id,
        [
            {"idx": e * n + i, "target_id": t, "dataset": "find-gen", "family": "numeric",
             "variant": "clean", "exemplar_init": False}
            for e in range(EPOCHS)
            for i, t in enumerate(TARGETS)
        ],
    )  # fmt: skip
    for ep in store.episodes.of_run(run.id):
        e, i = divmod(ep.idx, n)
        value = SCORES[i][e]
        store.episodes.start(ep.id, run.id)
        store.episodes.update(ep.id, inputs=INPUTS, target_calls=1, rounds=2)
        store.episodes.finish(ep.id, run.id, status="completed", end_reason="description")
        score = (
            {"metric": "code_success", "value": value, "status": "ok", "details": {}}
            if value is not None
            else {"metric": "code_success", "value": None, "status": "error",
                  "error_category": "sandbox", "error": "the scoring sandbox died", "details": {}}
        )  # fmt: skip
        store.scores.save(ep.id, [score])
    store.runs.set_status(run.id, "completed")
    return run.id


def _per_target(reducer: str) -> list[float]:
    scored = [[v for v in row if v is not None] for row in SCORES]
    return [mean(vs) if reducer == "mean" else max(vs) for vs in scored]


@pytest.fixture(scope="module")
def runs(server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    db = f"sqlite:///{server.db}"
    return {reducer: _store_run(db, reducer) for reducer in ("max", "mean")}


def _cells(html: str, row_start: str) -> list[str]:
    """The text of each cell of the table row that starts with `row_start`."""
    row = html.split(row_start, 1)[1].split("</tr>", 1)[0]
    return [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    ]


@pytest.mark.parametrize("reducer", ["max", "mean"])
def test_every_statistic_counts_targets(server, runs, reducer: str) -> None:  # type: ignore[no-untyped-def]
    run_id = runs[reducer]
    values = _per_target(reducer)  # max: 1, 1, 0, 1; mean: 1, 0.5, 0, 2/3
    # a mean of per-target rates of a [0, 1] metric: the bootstrap interval inside [0, 1]
    expected_ci = wilson(3, 4) if reducer == "max" else bootstrap_interval(values, 0.0, 1.0)
    method = "wilson" if reducer == "max" else "bootstrap"
    report = server.api.get(f"/runs/{run_id}/report").json()["report"]

    (row,) = [r for r in report["rows"] if r["metric"] == "code_success"]
    assert (row["episodes"], row["scored"], row["epochs"]) == (4, 4, 3)
    assert row["value"] == pytest.approx(mean(values)) and row["ci_method"] == method
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected_ci)
    assert row["errors"] == {"sandbox": 1}

    # the score-versus-queries row (the plot draws these rows): n = targets, Table 2's interval
    (q,) = report["queries"]
    assert (q["bin"], q["episodes"]) == ("1-16", 4)  # not 12 episodes
    assert (q["scored"], q["epochs"]) == (4, 3)
    assert q["success"] == pytest.approx(row["value"]) and q["ci_method"] == method
    assert (q["ci_low"], q["ci_high"]) == pytest.approx(expected_ci)
    assert (q["ci_low"], q["ci_high"]) == (row["ci_low"], row["ci_high"])

    # the API's metric summary and the runs list: the same reduction, n = targets
    detail = server.api.get(f"/runs/{run_id}").json()
    (m,) = [m for m in detail["metrics"] if m["metric"] == "code_success"]
    assert (m["n"], m["n_errors"]) == (4, 1) and m["mean"] == pytest.approx(mean(values))
    listed = server.api.get("/", params={"agent": f"epochs-{reducer}"}).text
    score = _cells(listed, f'data-run="{run_id}"')[6]
    assert score == f"{mean(values):.3f} code_success, n=4", score

    # the run page: Table 2's row, the queries table (targets, the same interval), epochs
    page = server.api.get(f"/ui/runs/{run_id}").text
    ci = f"[{expected_ci[0]:.2f}, {expected_ci[1]:.2f}] {method}"
    table2 = _cells(page, 'data-agent="epochs-' + reducer + '" data-metric="code_success"')
    assert table2[3:6] == [f"{mean(values):.2f}", ci, "4/4"], table2
    queries = _cells(page, f'<tr data-agent="epochs-{reducer}" data-bin="1-16">')
    assert queries[1:5] == ["1-16", "4", f"{mean(values):.2f}", ci], queries
    assert '<th scope="col">Targets</th>' in page
    assert 'id="queries-plot"' in page and f'id="queries-epochs-{reducer}"' in page
    assert '<th scope="col">Epoch</th>' in page
    eps = server.api.get(f"/runs/{run_id}/episodes").json()
    shown = re.findall(r'data-episode="([^"]+)">.*?<td class="num" data-epoch>(\d+)</td>', page,
                       re.S)  # fmt: skip
    assert shown == [(e["id"], str(e["epoch"])) for e in sorted(eps, key=lambda e: e["idx"])]
    assert [int(x) for _, x in shown] == [e for e in range(EPOCHS) for _ in TARGETS]


def test_compare_pairs_targets_after_the_reduction(server, runs) -> None:  # type: ignore[no-untyped-def]
    a, b = runs["max"], runs["mean"]
    page = server.api.get("/ui/compare", params={"a": a, "b": b}).text
    wins = {"a": 0, "b": 0, "tie": 0}
    for t, va, vb in zip(TARGETS, _per_target("max"), _per_target("mean"), strict=True):
        cells = _cells(page, f'<tr data-target="{t}">')
        assert cells[2] == f"{va:.3f} (3 epochs)" and cells[3] == f"{vb:.3f} (3 epochs)", cells
        won = "a" if va > vb else "b" if vb > va else "tie"
        assert cells[4] == {"a": "A", "b": "B", "tie": "tie"}[won]
        wins[won] += 1
    # four targets, each once: max beats mean on the two targets whose epochs differ
    assert wins == {"a": 2, "b": 0, "tie": 2}
    assert "4 common targets" in page and "A won 2</strong>" in page and "B won 0</strong>" in page


@pytest.mark.parametrize("reducer", ["mean", "max", "at_least_one"])
def test_runs_list_aggregate_is_the_reports_reduction(db_url: str, reducer: str) -> None:
    """The runs list's SQL aggregate (both stores) gives each metric's n and mean as the run's
    metric summaries and Table 2 do, for every reducer."""
    from interp_harness.harness.runs.report import build_report
    from interp_harness.harness.runs.views import run_detail
    from interp_harness.harness.web.queries import runs_page

    run_id = _store_run(db_url, reducer)
    store = open_store(db_url)
    run = store.runs.get(run_id)
    assert run is not None
    (listed,) = runs_page(store).metrics[run_id]
    (summary,) = run_detail(store, run).metrics
    (row,) = [r for r in build_report(store, run).report["rows"] if r["metric"] == "code_success"]
    values = _per_target("mean" if reducer == "mean" else "max")
    assert (listed.n, listed.n_errors, summary.n, summary.n_errors, row["scored"]) == (
        4,
        1,
        4,
        1,
        4,
    )
    assert listed.mean == pytest.approx(mean(values))
    assert summary.mean == pytest.approx(mean(values)) and row["value"] == pytest.approx(
        mean(values)
    )
