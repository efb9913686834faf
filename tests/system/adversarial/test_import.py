"""Hostile Inspect logs imported into the suite server's store by the operator's
`harness import-inspect` (issue 38, items 6, 9, 10): a decompression bomb is refused unread with
its cause; numbers no live run could have are refused; an exported spec's key, endpoint, path and
dotted agent are never stored nor served; a malformed plot grid already stored is a note, not a
500; an imported run claiming perfect scores is marked imported wherever it is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelUsage
from support.battery import AdvServer, cli_env
from support.canary import Canaries, assert_clean
from support.hostile_logs import MODEL, edit_samples, eval_bomb, eval_log, result, sample, write
from typer.testing import CliRunner, Result

from interp_harness.harness.cli import app
from interp_harness.harness.store.repo import open_store


def _import(server: AdvServer, path: Path, **env: str) -> Result:
    """`harness import-inspect PATH --json`, as the operator runs it next to the server."""
    return CliRunner().invoke(
        app, ["import-inspect", str(path), "--json"], env={**cli_env(server), **env}
    )


def _refused(server: AdvServer, canaries: Canaries, path: Path, says: str, **env: str) -> None:
    """One line saying `says`, exit status 1, no traceback, nothing stored."""
    got = _import(server, path, **env)
    assert got.exit_code == 1, got.output
    assert got.exception is None or isinstance(got.exception, SystemExit), got.output
    lines = got.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], got.stderr
    assert_clean(canaries, f"harness import-inspect {path.name}", got.output)
    eval_id = read_eval_log(str(path), header_only=True).eval.eval_id
    assert open_store(server.db_url, upgrade=False).events.imported_run(eval_id) is None


def _imported(server: AdvServer, canaries: Canaries, path: Path) -> dict[str, Any]:
    got = _import(server, path)
    assert got.exit_code == 0, got.output
    assert_clean(canaries, f"harness import-inspect {path.name}", got.output)
    return json.loads(got.stdout)


def test_a_decompression_bomb_is_refused_unread(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path
) -> None:
    bomb = eval_bomb(tmp_path / "bomb.eval", 64 << 20)  # 64 MiB of one letter in ~64 kB of zip
    assert bomb.stat().st_size < 256 << 10
    _refused(adv_server, canaries, bomb, "too large: member 'samples/find-gen/numeric/g0_epoch_1"
             ".json' declares 67,108,848 bytes inflated, over the 8,388,608 the operator allows "
             "(HARNESS_IMPORT_MAX_MEMBER_BYTES); refused unread",
             HARNESS_IMPORT_MAX_MEMBER_BYTES=str(8 << 20))  # fmt: skip
    # a zip that declares 2,000 bytes for the same member: the inflating stops there
    liar = eval_bomb(tmp_path / "liar.eval", 64 << 20, declared=2000)
    _refused(adv_server, canaries, liar, "not as declared: member 'samples/find-gen/numeric/"
             "g0_epoch_1.json' inflates past the 2,000 bytes the zip declares")  # fmt: skip


@pytest.mark.parametrize(
    ("samples", "says"),
    [
        (lambda: [sample(usage={MODEL: ModelUsage(input_tokens=-(10**12), output_tokens=1)})],
         "input_tokens is -1000000000000; a live episode's is between 0 and"),
        (lambda: [sample(usage={MODEL: ModelUsage(input_tokens=1, output_tokens=2**70)})],
         "output_tokens is 1180591620717411303424; a live episode's is between 0 and"),
        (lambda: [sample(usage={MODEL: ModelUsage(total_cost=-1e6)})],
         "total_cost is -1000000.0; a live episode's is between 0 and"),
        (lambda: [sample(epoch=2**62)], "epoch is 4611686018427387904"),
        (lambda: [sample(stats={"rounds": 2**70})], "rounds is 1180591620717411303424"),
        (lambda: [sample(scores=[result("nmse", 0.0, agent_grid={"x": [1.0], "y": [{"a": 1}]})])],
         "agent_grid holds \"{'a': 1}\", not a finite number"),
    ],
    ids=["negative-tokens", "2**70-tokens", "negative-cost", "epoch-2**62", "rounds-2**70",
         "grid-of-dicts"],
)  # fmt: skip
def test_hostile_numbers_are_refused(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path, samples: Any, says: str
) -> None:
    log = write(eval_log(samples()), tmp_path / "numbers.eval")
    _refused(adv_server, canaries, log, says)


def test_a_nan_cost_is_refused(adv_server: AdvServer, canaries: Canaries, tmp_path: Path) -> None:
    def nan(doc: dict[str, Any]) -> None:
        doc["model_usage"][MODEL]["total_cost"] = float("nan")

    log = edit_samples(write(eval_log([sample()]), tmp_path / "nan.eval"), nan)
    _refused(adv_server, canaries, log, "total_cost is nan")


def test_an_exported_spec_serves_no_key_endpoint_path_or_dotted_agent(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path
) -> None:
    key = canaries.values["OPENAI_API_KEY"]
    spec = {"agent": "os:system", "dataset": "find-gen", "family": "numeric",
            "agent_options": {"api_key": key, "base_url": "http://attacker.invalid/v1",
                              "path": "/etc/passwd"}}  # fmt: skip
    meta = {"interp_harness_run": "elsewhere", "spec": spec, "agent": "os:system"}
    run = _imported(
        adv_server, canaries, write(eval_log([sample()], metadata=meta), tmp_path / "x.eval")
    )
    for url in (f"/runs/{run['id']}", "/runs?limit=1000", f"/ui/runs/{run['id']}"):
        body = adv_server.api.get(url, headers=adv_server.auth).text
        assert_clean(canaries, f"GET {url} of an imported run", body)
        for planted in ("api_key", "base_url", "attacker.invalid", "/etc/passwd", "os:system"):
            assert planted not in body, (url, planted)
    served = adv_server.api.get(f"/runs/{run['id']}").json()
    assert served["spec"]["agent_options"] == {} and served["agent"] == "os/system (imported)"


def test_a_malformed_grid_already_stored_is_no_500(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path
) -> None:
    from sqlalchemy import update

    from interp_harness.harness.store.models import Score

    answer = "[DESCRIPTION]: doubles\n[CODE]:\n```python\ndef f(x):\n    return 2 * x\n```"
    grid = {"x": [0.5, 1.5], "y": [1.0, 3.0]}
    samples = [
        sample(f"find-gen/numeric/g{i}", answer=answer,
               scores=[result("nmse", 0.0, parser="tolerant", agent_grid=grid)])
        for i in range(2)
    ]  # fmt: skip
    run = _imported(adv_server, canaries, write(eval_log(samples), tmp_path / "grid.eval"))
    store = open_store(adv_server.db_url, upgrade=False)
    bad = ({"x": [0.5, 1.5, 2.5], "y": [1.0]}, {"x": [{"a": 1}], "y": [{"b": 2}]})
    for ep, grid in zip(store.episodes.of_run(run["id"]), bad, strict=True):
        with store.engine.begin() as c:  # as an older importer (or any other writer) stored it
            c.execute(
                update(Score)
                .where(Score.episode_id == ep.id, Score.metric == "nmse")  # type: ignore[arg-type]
                .values(details={"parser": "tolerant", "agent_grid": grid})
            )
        for url in (f"/ui/episodes/{ep.id}", f"/ui/episodes/{ep.id}/plot.svg"):
            got = adv_server.api.get(url)
            assert got.status_code == 200, (url, got.status_code, got.text[-500:])
        assert (
            "its stored outputs cannot be drawn" in adv_server.api.get(f"/ui/episodes/{ep.id}").text
        )


def test_imported_runs_are_marked_wherever_they_are_shown(
    adv_server: AdvServer, canaries: Canaries, tmp_path: Path
) -> None:
    """A log claiming perfect scores for a model this server never ran."""
    model = "openai/gpt-5-pro"
    claim = sample(scores=[result("code_success", 1.0)], usage={model: ModelUsage()})
    run = _imported(
        adv_server, canaries, write(eval_log([claim], model=model), tmp_path / "c.eval")
    )
    rid = run["id"]
    assert run["imported"] is True
    listed = {r["id"]: r["imported"] for r in adv_server.api.get("/runs?limit=1000").json()}
    assert listed[rid] is True
    assert adv_server.api.get(f"/runs/{rid}").json()["imported"] is True
    assert adv_server.api.get(f"/runs/{rid}/report").json()["imported"] is True
    page = adv_server.api.get(f"/ui/runs/{rid}").text
    assert re.search(r"<h1>Run <code>\w+</code> <span class=\"badge-imported\"", page)
    assert "its scores, usage and transcripts are what the file claims" in page
    runs_page = adv_server.api.get("/", params={"agent": f"inspect:{model}"}).text
    row = re.search(rf'<tr class="run-row" data-run="{rid}".*?</tr>', runs_page, re.S)
    assert row and 'class="badge-imported"' in row.group(0)
    # runs this server executed (the battery's, when the suite runs whole) are not marked
    native = [i for i, imported in listed.items() if not imported]
    for i in native[:3]:
        assert adv_server.api.get(f"/runs/{i}").json()["imported"] is False
        assert "badge-imported" not in adv_server.api.get(f"/ui/runs/{i}").text
