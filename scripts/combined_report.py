"""One FIND Table-2 report for several runs (with their interpolation floors):
`python3 scripts/combined_report.py RUN_ID...` (the main job's last step). The store is the one
`harness` uses (DATABASE_URL / HARNESS_HOME)."""

from __future__ import annotations

import sys

from rich.console import Console

from evaluator.report import build_report, render_report
from harness.runs.report import episode_summaries
from harness.settings import Settings
from harness.store import make_engine
from harness.store.repo import Store


def main(run_ids: list[str]) -> int:
    if not run_ids:
        print("usage: combined_report.py RUN_ID...", file=sys.stderr)
        return 2
    store = Store(make_engine(Settings().url))
    summaries = []
    for rid in run_ids:
        run = store.get_run(rid)
        if run is None:
            print(f"no run with id {rid!r}", file=sys.stderr)
            return 2
        summaries += episode_summaries(store, run)
        floor = store.floor_run(rid)
        if floor is not None:
            summaries += episode_summaries(store, floor)
    report = build_report(summaries)
    Console().print(render_report(report))
    errors = sum(sum(r.errors.values()) for r in report.rows)
    print(f"report: {len(report.rows)} rows, {errors} errors")
    judged = [
        s.details["judge_wall_s"]
        for ep in summaries
        for s in ep.scores
        if s.metric == "unit_test" and "judge_wall_s" in s.details
    ]
    if judged:
        print(f"description scoring: {sum(judged):.1f} s of judge time over {len(judged)} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
